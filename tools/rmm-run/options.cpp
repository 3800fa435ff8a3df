#include "options.hpp"

#include <charconv>

namespace rmm::tools {

char const* usage_text() noexcept
{
  return R"(usage: rmm-run --check [--config FILE] [--device N] [--build]
       rmm-run --print-default
       rmm-run [--config FILE] -- PROGRAM [ARGS...]     (arrives with the preload shim)

  --check          validate the configuration and print the resolved stack: every layer top
                   first, every value with where it came from (default, file, environment)
  --config FILE    the TOML file to use; without it RMM_CONFIG names the file, and without
                   that the built-in stack is used. RMM_<TYPE>_<KEY> variables override values.
  --device N       device whose memory resolves percentages and is checked against (default 0)
  --build          with --check: also build the stack on the device and allocate through it
  --print-default  print the built-in stack as a TOML file to start from
  --help           this text

exit status: 0 valid, 1 valid but the device could not build it (--build), 2 invalid
configuration, 64 wrong command line. Reference: docs/configuration.md
)";
}

std::variant<run_options, usage_error> parse_options(std::vector<std::string> const& arguments)
{
  run_options options;
  for (std::size_t i = 0; i < arguments.size(); ++i) {
    auto const& argument = arguments[i];
    auto const next_value = [&]() -> std::optional<std::string> {
      if (i + 1 >= arguments.size()) { return std::nullopt; }
      return arguments[++i];
    };
    if (argument == "--") {
      options.program.assign(arguments.begin() + static_cast<std::ptrdiff_t>(i) + 1, arguments.end());
      if (options.program.empty()) { return usage_error{"'--' must be followed by the program to run"}; }
      break;
    }
    if (argument == "--check") {
      options.check = true;
    } else if (argument == "--build") {
      options.build = true;
    } else if (argument == "--print-default") {
      options.print_default = true;
    } else if (argument == "--help" || argument == "-h") {
      options.help = true;
    } else if (argument == "--config") {
      auto file = next_value();
      if (!file || file->empty()) { return usage_error{"--config needs a file name"}; }
      options.config = std::move(*file);
    } else if (argument == "--device") {
      auto text = next_value();
      int device{};
      auto const parsed = text ? std::from_chars(text->data(), text->data() + text->size(), device)
                               : std::from_chars_result{nullptr, std::errc::invalid_argument};
      if (!text || parsed.ec != std::errc{} || parsed.ptr != text->data() + text->size() || device < 0) {
        return usage_error{"--device needs a device number (0, 1, ...)"};
      }
      options.device = device;
    } else {
      return usage_error{"unknown option '" + argument + "'"};
    }
  }
  if (options.help) { return options; }
  if (options.build && !options.check) { return usage_error{"--build goes with --check"}; }
  if (options.check && !options.program.empty()) {
    return usage_error{"--check validates only; run the program without --check"};
  }
  if (!options.check && !options.print_default && options.program.empty()) {
    return usage_error{"nothing to do: give --check, --print-default, or -- PROGRAM"};
  }
  return options;
}

}  // namespace rmm::tools
