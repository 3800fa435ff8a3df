#pragma once

#include <rmm/config/description.hpp>
#include <rmm/config/environment.hpp>
#include <rmm/config/schema.hpp>

#include <rmm/cuda_device.hpp>
#include <rmm/resource_ref.hpp>

#include <filesystem>
#include <string_view>
#include <vector>

namespace rmm::config {

/**
 * Builds `stack` on `device` (made current while building, restored afterwards), bottom first.
 * Percentages refer to the device's free memory when building starts, so "limit = 90%" over
 * "initial_size = 50%" means 90% and 50% of the same figure. Returns every layer, top first; the
 * first is the stack (it holds the others). Throws config_error for a size that the device cannot
 * hold, and whatever a resource's constructor throws (rmm::logic_error, rmm::cuda_error,
 * rmm::bad_alloc) when the device refuses it.
 */
[[nodiscard]] std::vector<rmm::mr::any_device_resource> build_layers(stack_description const& stack,
                                                                     cuda_device_id device);

/**
 * build_layers with `bottom` standing in for the stack's last layer, which is not built: a
 * simulated device, or the real bottom under a counting adaptor (rmm-replay measures stacks this
 * way). The layers see a bottom that is not `cuda`, so a pool grows from its upstream, through
 * `bottom`, unless its `growth` key says otherwise. Returns every layer, top first, `bottom` last.
 */
[[nodiscard]] std::vector<rmm::mr::any_device_resource> build_layers_over(stack_description const& stack,
                                                                          cuda_device_id device,
                                                                          rmm::mr::any_device_resource bottom);

/// The top of the stack built by build_layers: an owning resource holding the whole stack.
[[nodiscard]] rmm::mr::any_device_resource build(stack_description const& stack, cuda_device_id device);

/// load_file + build.
[[nodiscard]] rmm::mr::any_device_resource build_from_file(std::filesystem::path const& path,
                                                           cuda_device_id device,
                                                           environment const& env = environment::from_process());
/// load_string + build.
[[nodiscard]] rmm::mr::any_device_resource build_from_string(std::string_view toml,
                                                             cuda_device_id device,
                                                             environment const& env = environment::from_process());
/// load_from_environment + build: RMM_CONFIG's file, else the built-in stack, with overrides.
[[nodiscard]] rmm::mr::any_device_resource build_from_environment(cuda_device_id device,
                                                                  environment const& env = environment::from_process());

/// Checks the rules that need the device's memory (for example a maximum given as a percentage
/// below an initial size given in bytes); throws config_error. build() does this first.
void check_against_device(stack_description const& stack, build_context const& context);

/// Free and total memory of `device` (made current for the query).
[[nodiscard]] build_context device_context(cuda_device_id device);

}  // namespace rmm::config
