// SPDX-License-Identifier: Apache-2.0
#include "detail/event_log_writer.hpp"

#include <rmm/detail/error.hpp>
#include <rmm/environment_variables.hpp>
#include <rmm/mr/logging_resource_adaptor.hpp>

#include <fmt/format.h>

#include <string>

namespace rmm::mr {

namespace {

std::vector<log_sink_ptr> one_sink(log_sink_ptr sink)
{
  std::vector<log_sink_ptr> sinks;
  sinks.push_back(std::move(sink));
  return sinks;
}

/// A debug-logger sink fed the CSV text (the text is not a formatted log line: it goes as it is).
class logger_sink_bridge final : public log_sink {
 public:
  explicit logger_sink_bridge(logger_sink_ptr sink) : sink_{std::move(sink)}
  {
    RMM_EXPECTS(sink_ != nullptr, "logging_resource_adaptor was given a null sink");
  }
  void write(std::string_view text) override { sink_->write(level_enum::info, text); }
  void flush() override { sink_->flush(); }

 private:
  logger_sink_ptr sink_;
};

std::vector<log_sink_ptr> bridged(std::vector<logger_sink_ptr> const& sinks)
{
  std::vector<log_sink_ptr> bridges;
  bridges.reserve(sinks.size());
  for (auto const& sink : sinks) { bridges.push_back(std::make_shared<logger_sink_bridge>(sink)); }
  return bridges;
}

}  // namespace

logging_resource_adaptor::logging_resource_adaptor(any_device_resource upstream,
                                                   std::vector<logger_sink_ptr> const& sinks,
                                                   bool auto_flush)
  : logging_resource_adaptor(std::move(upstream), bridged(sinks), auto_flush)
{
}

logging_resource_adaptor::logging_resource_adaptor(any_device_resource upstream,
                                                   std::string const& filename,
                                                   bool auto_flush)
  : logging_resource_adaptor(std::move(upstream), one_sink(std::make_shared<file_log_sink>(filename)), auto_flush)
{
}

logging_resource_adaptor::logging_resource_adaptor(any_device_resource upstream, std::ostream& stream, bool auto_flush)
  : logging_resource_adaptor(std::move(upstream), one_sink(std::make_shared<ostream_log_sink>(stream)), auto_flush)
{
}

logging_resource_adaptor::logging_resource_adaptor(any_device_resource upstream,
                                                   std::vector<log_sink_ptr> sinks,
                                                   bool auto_flush)
  : adaptor_resource{std::move(upstream), std::make_shared<detail::event_log_writer>(std::move(sinks), auto_flush)}
{
}

void logging_resource_adaptor::flush() { state().flush(); }

std::string logging_resource_adaptor::header() { return std::string{allocation_log::header}; }

std::string logging_resource_adaptor::default_log_file()
{
  auto const name     = environment_value(env_var::log_file);
  auto const variable = name_of(env_var::log_file);
  RMM_EXPECTS(name && !name->empty(),
              fmt::format("logging_resource_adaptor: no log file given and {0} is not set; pass a file name, a "
                          "stream or sinks, or set {0}",
                          variable));
  return std::string{*name};
}

void* logging_resource_adaptor::allocate_in(std::size_t bytes, detail::allocation_order order)
{
  try {
    void* ptr = order.allocate(upstream(), bytes);
    state().record(detail::log_action::allocate, ptr, bytes, order.stream());
    return ptr;
  } catch (...) {
    state().record(detail::log_action::allocate_failure, nullptr, bytes, order.stream());
    throw;
  }
}

void logging_resource_adaptor::deallocate_in(void* ptr, std::size_t bytes, detail::allocation_order order) noexcept
{
  state().record(detail::log_action::free, ptr, bytes, order.stream());
  order.deallocate(upstream(), ptr, bytes);
}

}  // namespace rmm::mr
