// SPDX-License-Identifier: Apache-2.0
#pragma once

// What rmm-run checks before it hands the process over to the program: that the dynamic loader
// takes the shim as a preload (it drops a corrupt or foreign file with a warning only, and the
// program would run unmanaged with exit status 0), and whether the program is one the loader
// runs at all.

#include <filesystem>
#include <optional>
#include <string>

namespace rmm::tools {

/// The argument with which rmm-run, started with the shim preloaded, answers whether the shim is
/// in the process (exit status 0) or not (3). Not an option for users.
inline constexpr char const* shim_probe_argument = "--internal-shim-probe";

/// Runs this rmm-run with `preload` as LD_PRELOAD (the shim switched off) and asks it whether the
/// shim was loaded. nullopt when it was; otherwise what went wrong, with the loader's own message.
[[nodiscard]] std::optional<std::string> shim_load_problem(std::string const& preload);

/// The probe's side: 0 when the shim's functions are in this process, 3 when not.
[[nodiscard]] int answer_shim_probe() noexcept;

/// Whether `program` (a name found on PATH as execvp finds it, or a path) is an ELF executable
/// without an interpreter: statically linked, so no preloaded library ever enters it.
[[nodiscard]] bool is_statically_linked(std::string const& program);

}  // namespace rmm::tools
