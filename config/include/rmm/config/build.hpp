// SPDX-License-Identifier: Apache-2.0
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
 * @brief Builds `stack` on `device` (made current while building, restored afterwards), bottom
 * first.
 *
 * Percentages refer to the device's free memory when building starts, so "limit = 90%" over
 * "initial_size = 50%" means 90% and 50% of the same figure.
 *
 * @param stack a validated description, as the load functions return it
 * @param device the device to build on
 * @return every layer, top first; the first is the stack (it holds the others)
 * @throws config_error for a size the device cannot hold, or a type the device cannot run
 * @throws rmm::logic_error when a resource's constructor refuses its parameters on this device
 * @throws rmm::out_of_memory when the device cannot provide a resource's initial memory
 * @throws rmm::bad_alloc when reserving a resource's initial memory fails for another reason
 * @throws rmm::cuda_error when `device` cannot be made current, its memory cannot be queried, or a
 * resource's CUDA call fails
 */
[[nodiscard]] std::vector<rmm::mr::any_device_resource> build_layers(stack_description const& stack,
                                                                     cuda_device_id device);

/**
 * @brief build_layers with `bottom` standing in for the stack's last layer, which is not built.
 *
 * `bottom` is a simulated device, or the real bottom under a counting adaptor (rmm-replay
 * measures stacks this way). The layers see a bottom that is not `cuda`, so a pool grows from its
 * upstream, through `bottom`, unless its `growth` key says otherwise.
 *
 * @param stack a validated description, as the load functions return it
 * @param device the device to build on
 * @param bottom the resource that replaces the stack's last layer
 * @return every layer, top first, `bottom` last
 * @throws config_error for a size the device cannot hold, or a type the device cannot run
 * @throws rmm::logic_error when a resource's constructor refuses its parameters on this device
 * @throws rmm::out_of_memory when the device cannot provide a resource's initial memory
 * @throws rmm::bad_alloc when reserving a resource's initial memory fails for another reason
 * @throws rmm::cuda_error when `device` cannot be made current, its memory cannot be queried, or a
 * resource's CUDA call fails
 */
[[nodiscard]] std::vector<rmm::mr::any_device_resource> build_layers_over(stack_description const& stack,
                                                                          cuda_device_id device,
                                                                          rmm::mr::any_device_resource bottom);

/**
 * @brief The top of the stack built by build_layers: an owning resource holding the whole stack.
 *
 * @param stack a validated description with at least one layer, as the load functions return it
 * @param device the device to build on
 * @return the stack's top layer
 * @throws config_error for a size the device cannot hold, or a type the device cannot run
 * @throws rmm::logic_error when a resource's constructor refuses its parameters on this device
 * @throws rmm::out_of_memory when the device cannot provide a resource's initial memory
 * @throws rmm::bad_alloc when reserving a resource's initial memory fails for another reason
 * @throws rmm::cuda_error when `device` cannot be made current, its memory cannot be queried, or a
 * resource's CUDA call fails
 */
[[nodiscard]] rmm::mr::any_device_resource build(stack_description const& stack, cuda_device_id device);

/**
 * @brief load_file + build.
 *
 * @param path the TOML file
 * @param device the device to build on
 * @param env the environment whose overrides apply (default: the process's)
 * @return the stack's top layer, holding the whole stack
 * @throws config_error when the file cannot be read or is not a valid configuration, an override
 * is wrong, or a size does not fit the device
 * @throws rmm::logic_error when a resource's constructor refuses its parameters on this device
 * @throws rmm::out_of_memory when the device cannot provide a resource's initial memory
 * @throws rmm::bad_alloc when reserving a resource's initial memory fails for another reason
 * @throws rmm::cuda_error when `device` cannot be used or a resource's CUDA call fails
 */
[[nodiscard]] rmm::mr::any_device_resource build_from_file(std::filesystem::path const& path,
                                                           cuda_device_id device,
                                                           environment const& env = environment::from_process());
/**
 * @brief load_string + build.
 *
 * @param toml the configuration's text; errors name it "<string>"
 * @param device the device to build on
 * @param env the environment whose overrides apply (default: the process's)
 * @return the stack's top layer, holding the whole stack
 * @throws config_error when the text is not a valid configuration, an override is wrong, or a size
 * does not fit the device
 * @throws rmm::logic_error when a resource's constructor refuses its parameters on this device
 * @throws rmm::out_of_memory when the device cannot provide a resource's initial memory
 * @throws rmm::bad_alloc when reserving a resource's initial memory fails for another reason
 * @throws rmm::cuda_error when `device` cannot be used or a resource's CUDA call fails
 */
[[nodiscard]] rmm::mr::any_device_resource build_from_string(std::string_view toml,
                                                             cuda_device_id device,
                                                             environment const& env = environment::from_process());
/**
 * @brief load_from_environment + build: RMM_CONFIG's file, else the built-in stack, with overrides.
 *
 * @param device the device to build on
 * @param env the environment to read RMM_CONFIG and the overrides from (default: the process's)
 * @return the stack's top layer, holding the whole stack
 * @throws config_error when RMM_CONFIG is empty, its file cannot be read or is not a valid
 * configuration, an override is wrong, or a size does not fit the device
 * @throws rmm::logic_error when a resource's constructor refuses its parameters on this device
 * @throws rmm::out_of_memory when the device cannot provide a resource's initial memory
 * @throws rmm::bad_alloc when reserving a resource's initial memory fails for another reason
 * @throws rmm::cuda_error when `device` cannot be used or a resource's CUDA call fails
 */
[[nodiscard]] rmm::mr::any_device_resource build_from_environment(cuda_device_id device,
                                                                  environment const& env = environment::from_process());

/**
 * @brief Checks the rules that need the device's memory, for example a maximum given as a
 * percentage below an initial size given in bytes. build() does this first.
 *
 * @param stack a validated description
 * @param context the device and its memory, as device_context returns them
 * @throws config_error naming the first value that breaks a rule
 * @throws rmm::cuda_error when a device attribute cannot be queried
 */
void check_against_device(stack_description const& stack, build_context const& context);

/**
 * @brief Free and total memory of `device` (made current for the query).
 *
 * @param device the device
 * @return the context percentages are resolved against; bottom_type is left empty
 * @throws rmm::cuda_error when `device` cannot be made current or its memory cannot be queried
 */
[[nodiscard]] build_context device_context(cuda_device_id device);

}  // namespace rmm::config
