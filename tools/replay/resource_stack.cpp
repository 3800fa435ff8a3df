#include "resource_stack.hpp"

#include <rmm/format_bytes.hpp>
#include <rmm/error.hpp>
#include <rmm/mr/arena_memory_resource.hpp>
#include <rmm/mr/binning_memory_resource.hpp>
#include <rmm/mr/cuda_async_memory_resource.hpp>
#include <rmm/mr/cuda_memory_resource.hpp>
#include <rmm/mr/managed_memory_resource.hpp>
#include <rmm/mr/pool_memory_resource.hpp>
#include <rmm/mr/statistics_resource_adaptor.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <string_view>

namespace rmm::replay {

namespace {

enum class layer { pool, arena, binning };
enum class bottom { cuda, managed, cuda_async };

struct layer_name {
  std::string_view name;
  layer kind;
};
struct bottom_name {
  std::string_view name;
  bottom kind;
};
constexpr std::array<layer_name, 3> layer_names{
  {{"pool", layer::pool}, {"arena", layer::arena}, {"binning", layer::binning}}};
constexpr std::array<bottom_name, 3> bottom_names{
  {{"cuda", bottom::cuda}, {"managed", bottom::managed}, {"cuda_async", bottom::cuda_async}}};

/// A parsed name: layers top first, then the bottom.
struct stack_shape {
  std::vector<layer> layers;
  bottom base{bottom::cuda};
};

[[noreturn]] void refuse(std::string const& name, std::string const& why)
{
  throw unknown_resource{fmt::format("resource '{}': {}\n{}", name, why, known_stack_names())};
}

stack_shape parse_stack_name(std::string const& name, stack_settings const& settings)
{
  if (name == "binning") { return {{layer::binning, layer::pool}, bottom::cuda}; }
  stack_shape shape{};
  std::size_t start = 0;
  bool bottom_seen  = false;
  while (start <= name.size()) {
    auto const end   = std::min(name.find('+', start), name.size());
    auto const token = std::string_view{name}.substr(start, end - start);
    start            = end + 1;
    if (token.empty()) { refuse(name, "empty part (two '+' in a row, or '+' at an end)"); }
    if (bottom_seen) { refuse(name, "the bottom resource (cuda, managed, cuda_async) must come last"); }
    auto const is_layer  = std::ranges::find(layer_names, token, &layer_name::name);
    auto const is_bottom = std::ranges::find(bottom_names, token, &bottom_name::name);
    if (is_layer != layer_names.end()) {
      shape.layers.push_back(is_layer->kind);
    } else if (is_bottom != bottom_names.end()) {
      shape.base  = is_bottom->kind;
      bottom_seen = true;
    } else {
      refuse(name, fmt::format("unknown part '{}'", token));
    }
  }
  if (settings.simulated_device_size && shape.base != bottom::cuda) {
    refuse(name,
           "with --simulate-device-size the bottom is the simulated device, which stands in for cuda; "
           "managed and cuda_async cannot be simulated");
  }
  return shape;
}

std::string describe(stack_shape const& shape, stack_settings const& settings)
{
  std::vector<std::string> parts;
  for (auto const kind : shape.layers) {
    parts.emplace_back(std::ranges::find(layer_names, kind, &layer_name::kind)->name);
  }
  if (settings.simulated_device_size) {
    parts.push_back(fmt::format("simulated device ({})", rmm::format_bytes(*settings.simulated_device_size)));
  } else {
    parts.emplace_back(std::ranges::find(bottom_names, shape.base, &bottom_name::kind)->name);
  }
  return fmt::format("{}", fmt::join(parts, " over "));
}

/// The highest pool_size() of a pool, sampled after each event.
class sampled_gauge final : public reserved_gauge {
 public:
  explicit sampled_gauge(rmm::mr::pool_memory_resource pool) : pool_{std::move(pool)} {}  // shares the pool

  void sample() noexcept override
  {
    auto const now = pool_.pool_size();
    auto seen      = peak_.load(std::memory_order_relaxed);
    while (now > seen && !peak_.compare_exchange_weak(seen, now, std::memory_order_relaxed)) {}
  }
  [[nodiscard]] std::size_t peak_bytes() const override { return peak_.load(); }
  [[nodiscard]] std::size_t current_bytes() const override { return pool_.pool_size(); }
  [[nodiscard]] std::string method() const override
  {
    return "pool_size() of the pool over cuda, sampled after every event (a counting adaptor between "
           "them would stop the pool from growing through virtual memory)";
  }

 private:
  rmm::mr::pool_memory_resource pool_;
  std::atomic<std::size_t> peak_{0};
};

/// Counts what passes into the bottom resource.
class counted_gauge final : public reserved_gauge {
 public:
  explicit counted_gauge(rmm::mr::statistics_resource_adaptor counter) : counter_{std::move(counter)} {}

  [[nodiscard]] std::size_t peak_bytes() const override
  {
    return static_cast<std::size_t>(counter_.get_bytes_counter().peak);
  }
  [[nodiscard]] std::size_t current_bytes() const override
  {
    return static_cast<std::size_t>(counter_.get_bytes_counter().value);
  }
  [[nodiscard]] std::string method() const override
  {
    return "peak of a statistics_resource_adaptor over the bottom resource (bytes as requested)";
  }

 private:
  rmm::mr::statistics_resource_adaptor counter_;
};

/// The driver's own high-water mark of a cuda_async pool.
class async_pool_gauge final : public reserved_gauge {
 public:
  explicit async_pool_gauge(rmm::mr::cuda_async_memory_resource async) : async_{std::move(async)} {}

  [[nodiscard]] std::size_t peak_bytes() const override
  {
    std::uint64_t high{};
    RMM_CUDA_TRY(cudaMemPoolGetAttribute(async_.pool_handle(), cudaMemPoolAttrReservedMemHigh, &high));
    return static_cast<std::size_t>(high);
  }
  [[nodiscard]] std::size_t current_bytes() const override
  {
    std::uint64_t now{};
    RMM_CUDA_TRY(cudaMemPoolGetAttribute(async_.pool_handle(), cudaMemPoolAttrReservedMemCurrent, &now));
    return static_cast<std::size_t>(now);
  }
  [[nodiscard]] std::string method() const override { return "cudaMemPoolAttrReservedMemHigh of its pool"; }

 private:
  rmm::mr::cuda_async_memory_resource async_;
};

/// The simulated device's own count.
class simulated_gauge final : public reserved_gauge {
 public:
  explicit simulated_gauge(simulated_device_resource device) : device_{std::move(device)} {}

  [[nodiscard]] std::size_t peak_bytes() const override { return device_.peak_used_bytes(); }
  [[nodiscard]] std::size_t current_bytes() const override { return device_.used_bytes(); }
  [[nodiscard]] std::string method() const override { return "the simulated device's peak (bytes as requested)"; }

 private:
  simulated_device_resource device_;
};

}  // namespace

void check_stack_name(std::string const& name, stack_settings const& settings)
{
  (void)parse_stack_name(name, settings);
}

resource_stack build_stack(std::string const& name, stack_settings const& settings)
{
  auto const shape = parse_stack_name(name, settings);
  std::unique_ptr<reserved_gauge> gauge;
  // A pool right above cuda grows through virtual memory only when its upstream *is* cuda: it is
  // measured by sampling instead of through a counting adaptor.
  bool const pool_over_cuda = !settings.simulated_device_size && shape.base == bottom::cuda && !shape.layers.empty() &&
                              shape.layers.back() == layer::pool;

  auto current = [&]() -> rmm::mr::any_device_resource {
    if (settings.simulated_device_size) {
      simulated_device_resource device{*settings.simulated_device_size};
      gauge = std::make_unique<simulated_gauge>(device);
      return device;
    }
    switch (shape.base) {
      case bottom::cuda: {
        if (pool_over_cuda) { return rmm::mr::cuda_memory_resource{}; }
        rmm::mr::statistics_resource_adaptor counter{rmm::mr::cuda_memory_resource{}};
        gauge = std::make_unique<counted_gauge>(counter);
        return counter;
      }
      case bottom::managed: {
        rmm::mr::statistics_resource_adaptor counter{rmm::mr::managed_memory_resource{}};
        gauge = std::make_unique<counted_gauge>(counter);
        return counter;
      }
      case bottom::cuda_async: {
        rmm::mr::cuda_async_memory_resource async{};
        gauge = std::make_unique<async_pool_gauge>(async);
        return async;
      }
    }
    throw rmm::logic_error{"unreachable: unknown bottom resource"};
  }();

  for (auto it = shape.layers.rbegin(); it != shape.layers.rend(); ++it) {
    switch (*it) {
      case layer::pool: {
        rmm::mr::pool_memory_resource pool{current, settings.pool_initial_size};
        if (!gauge) { gauge = std::make_unique<sampled_gauge>(pool); }
        current = pool;
        break;
      }
      case layer::arena: {
        auto arena_size = settings.arena_size;
        if (!arena_size && settings.simulated_device_size) { arena_size = *settings.simulated_device_size / 2; }
        current = rmm::mr::arena_memory_resource{
          current, arena_size, false,
          settings.arena_shared_threshold.value_or(rmm::mr::arena_memory_resource::default_shared_arena_threshold)};
        break;
      }
      case layer::binning: current = rmm::mr::binning_memory_resource{current}; break;
    }
  }
  return resource_stack{name, describe(shape, settings), std::move(gauge), std::move(current)};
}

std::vector<std::string> default_stack_names(bool simulated_device)
{
  if (simulated_device) { return {"pool", "arena", "binning", "cuda"}; }
  return {"pool", "arena", "binning", "cuda_async", "cuda"};
}

std::string known_stack_names()
{
  return "known resources (a stack is written top first, joined by '+'; the bottom defaults to cuda):\n"
         "  cuda                cudaMalloc/cudaFree\n"
         "  managed             cudaMallocManaged\n"
         "  cuda_async          cudaMallocAsync from a pool of its own\n"
         "  pool                pool_memory_resource over cuda (starts empty, grows on demand)\n"
         "  arena               arena_memory_resource over cuda\n"
         "  binning             binning_memory_resource over a pool over cuda (= binning+pool)\n"
         "  e.g. binning+arena, pool+managed, pool+cuda_async";
}

}  // namespace rmm::replay
