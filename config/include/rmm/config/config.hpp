// SPDX-License-Identifier: Apache-2.0
#pragma once

// Configuration: a TOML-described resource stack, environment overrides, and a builder.
//
//   auto stack = rmm::config::build_from_environment(rmm::cuda_device_id{0});
//   rmm::mr::set_current_device_resource(stack);
//
// See docs/configuration.md for the file format, every key and the environment variables.

#include <rmm/config/boolean.hpp>
#include <rmm/config/build.hpp>
#include <rmm/config/description.hpp>
#include <rmm/config/environment.hpp>
#include <rmm/config/error.hpp>
#include <rmm/config/file_name_pattern.hpp>
#include <rmm/config/load.hpp>
#include <rmm/config/print.hpp>
#include <rmm/config/schema.hpp>
#include <rmm/config/shim_settings.hpp>
#include <rmm/config/size.hpp>
