#include "detail/event_log_writer.hpp"

#include <rmm/detail/error.hpp>
#include <rmm/mr/logging_resource_adaptor.hpp>

#include <cstdlib>

namespace rmm::mr {

namespace {

std::vector<log_sink_ptr> one_sink(log_sink_ptr sink)
{
  std::vector<log_sink_ptr> sinks;
  sinks.push_back(std::move(sink));
  return sinks;
}

}  // namespace

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
  : upstream_{std::move(upstream)}, writer_{std::make_shared<detail::event_log_writer>(std::move(sinks), auto_flush)}
{
}

device_async_resource_ref logging_resource_adaptor::get_upstream_resource() const noexcept { return upstream_; }

void logging_resource_adaptor::flush() { writer_->flush(); }

std::string logging_resource_adaptor::header() { return std::string{allocation_log::header}; }

std::string logging_resource_adaptor::default_log_file()
{
  char const* name = std::getenv("RMM_LOG_FILE");
  RMM_EXPECTS(name != nullptr && *name != '\0',
              "logging_resource_adaptor: no log file given and RMM_LOG_FILE is not set; pass a file name, a stream "
              "or sinks, or set RMM_LOG_FILE");
  return name;
}

void* logging_resource_adaptor::do_allocate(std::size_t bytes, cuda_stream_view stream)
{
  return allocate_in(bytes, detail::allocation_order::on(stream));
}

void logging_resource_adaptor::do_deallocate(void* ptr, std::size_t bytes, cuda_stream_view stream) noexcept
{
  deallocate_in(ptr, bytes, detail::allocation_order::on(stream));
}

void* logging_resource_adaptor::do_allocate_sync(std::size_t bytes) { return allocate_in(bytes, detail::allocation_order::host()); }

void logging_resource_adaptor::do_deallocate_sync(void* ptr, std::size_t bytes) noexcept
{
  deallocate_in(ptr, bytes, detail::allocation_order::host());
}

void* logging_resource_adaptor::allocate_in(std::size_t bytes, detail::allocation_order order)
{
  try {
    void* ptr = order.allocate(upstream_, bytes);
    writer_->record(detail::log_action::allocate, ptr, bytes, order.stream());
    return ptr;
  } catch (...) {
    writer_->record(detail::log_action::allocate_failure, nullptr, bytes, order.stream());
    throw;
  }
}

void logging_resource_adaptor::deallocate_in(void* ptr, std::size_t bytes, detail::allocation_order order) noexcept
{
  writer_->record(detail::log_action::free, ptr, bytes, order.stream());
  order.deallocate(upstream_, ptr, bytes);
}

bool logging_resource_adaptor::do_is_equal(device_memory_resource const& other) const noexcept
{
  auto const* logging = dynamic_cast<logging_resource_adaptor const*>(&other);
  return logging != nullptr && logging->writer_ == writer_;
}

}  // namespace rmm::mr
