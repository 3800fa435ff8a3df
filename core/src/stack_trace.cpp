// SPDX-License-Identifier: Apache-2.0
#include <rmm/detail/stack_trace.hpp>

#include <cxxabi.h>
#include <execinfo.h>

#include <cstdlib>
#include <memory>

namespace rmm::detail {

namespace {

constexpr int max_frames = 64;

/// "module(_ZN3foo3barEv+0x1c) [0x..]" -> "module(foo::bar()+0x1c) [0x..]".
std::string demangle_frame(std::string frame)
{
  auto const open = frame.find('(');
  auto const plus = frame.find('+', open == std::string::npos ? 0 : open);
  if (open == std::string::npos || plus == std::string::npos || plus == open + 1) { return frame; }
  auto const mangled = frame.substr(open + 1, plus - open - 1);
  int status{};
  std::unique_ptr<char, void (*)(void*)> demangled{abi::__cxa_demangle(mangled.c_str(), nullptr, nullptr, &status),
                                                   std::free};
  if (status != 0 || !demangled) { return frame; }
  return frame.substr(0, open + 1) + demangled.get() + frame.substr(plus);
}

}  // namespace

stack_trace::stack_trace() : frames_(max_frames)
{
  auto const depth = ::backtrace(frames_.data(), max_frames);
  frames_.resize(static_cast<std::size_t>(depth > 0 ? depth : 0));
}

std::string stack_trace::to_string() const
{
  if (frames_.empty()) { return "  (no stack frames captured)\n"; }
  std::unique_ptr<char*, void (*)(void*)> symbols{::backtrace_symbols(frames_.data(), static_cast<int>(frames_.size())),
                                                  std::free};
  std::string text;
  for (std::size_t i = 0; i < frames_.size(); ++i) {
    text += "  #" + std::to_string(i) + ' ';
    text += symbols ? demangle_frame(symbols.get()[i]) : std::string{"?"};
    text += '\n';
  }
  return text;
}

}  // namespace rmm::detail
