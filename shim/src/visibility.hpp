// SPDX-License-Identifier: Apache-2.0
#pragma once

// The shim exports its hooks and its control functions, nothing else: everything is compiled with
// hidden visibility, and the version script (shim/exports.map) lists what leaves the library.
#define RMM_SHIM_EXPORT extern "C" __attribute__((visibility("default")))
