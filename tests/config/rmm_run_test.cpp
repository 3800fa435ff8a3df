// SPDX-License-Identifier: Apache-2.0
// rmm-run as a user runs it: a subprocess, its exit status, stdout and stderr.

#include "backend.hpp"

#include <rmm/mr/system_memory_resource.hpp>

#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace {

struct run_result {
  int status{-1};
  std::string out;
  std::string err;
};

std::filesystem::path const scratch =
  std::filesystem::temp_directory_path() / ("rmm_run_test_" + std::to_string(::getpid()));

std::string read_all(std::filesystem::path const& path)
{
  std::ifstream file{path};
  std::ostringstream text;
  text << file.rdbuf();
  return text.str();
}

std::string example(std::string const& name) { return std::string{RMM_CONFIG_EXAMPLES_DIR} + "/" + name; }

/// Runs `environment rmm-run arguments` through the shell (the test's own environment is
/// inherited, minus any RMM_CONFIG or override the caller did not ask for).
run_result rmm_run(std::string const& arguments, std::string const& environment = {})
{
  std::filesystem::create_directories(scratch);
  auto const out     = scratch / "out.txt";
  auto const err     = scratch / "err.txt";
  auto const command = "env -u RMM_CONFIG " + environment + " " + RMM_RUN_PROGRAM + " " + arguments + " >" +
                       out.string() + " 2>" + err.string();
  auto const status = std::system(command.c_str());
  run_result result;
  result.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  result.out    = read_all(out);
  result.err    = read_all(err);
  return result;
}

std::string write_file(std::string const& name, std::string const& text)
{
  std::filesystem::create_directories(scratch);
  auto const path = scratch / name;
  std::ofstream{path} << text;
  return path.string();
}

class RmmRun : public ::testing::Test {
 protected:
  static void TearDownTestSuite() { std::filesystem::remove_all(scratch); }
};

TEST_F(RmmRun, ChecksEveryExample)
{
  for (auto const* name : {"pool.toml", "binning_pool.toml", "logging_trace.toml", "memory_limit.toml"}) {
    auto const result = rmm_run("--check --config " + example(name));
    EXPECT_EQ(result.status, 0) << name << "\n" << result.out << result.err;
    EXPECT_EQ(result.out.rfind("configuration valid\nstack from " + example(name), 0), 0U) << result.out;
  }
}

TEST_F(RmmRun, PrintsEveryLayerValueAndOrigin)
{
  auto const result = rmm_run("--check --config " + example("pool.toml"), "RMM_POOL_MAXIMUM_SIZE=80%");
  ASSERT_EQ(result.status, 0) << result.err;
  EXPECT_NE(result.out.find("device 0: "), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("1. pool"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("2. cuda"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("initial_size = \"50%\" = "), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("file " + example("pool.toml") + ":7:16"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("maximum_size = \"80%\" = "), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("environment RMM_POOL_MAXIMUM_SIZE"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("stats_at_exit = false"), std::string::npos) << result.out;
}

TEST_F(RmmRun, InvalidFileExitsWithTwoAndOneLine)
{
  auto const file   = write_file("bad.toml", "[[resource]]\ntype = \"pool\"\ninitial_size = \"150%\"\n");
  auto const result = rmm_run("--check --config " + file);
  EXPECT_EQ(result.status, 2);
  EXPECT_EQ(result.out, "");
  EXPECT_EQ(result.err, "rmm-run: " + file +
                          ":3:16: found initial_size = \"150%\", expected a percentage of free device memory above 0% "
                          "and at most 100%\n");
}

TEST_F(RmmRun, SyntaxErrorExitsWithTwo)
{
  auto const file   = write_file("syntax.toml", "[[resource]\n");
  auto const result = rmm_run("--check --config " + file);
  EXPECT_EQ(result.status, 2);
  EXPECT_EQ(result.err.rfind("rmm-run: " + file + ":1:12: found TOML syntax error", 0), 0U) << result.err;
}

TEST_F(RmmRun, RmmConfigNamesTheFileAndOverridesApply)
{
  auto const result = rmm_run("--check", "RMM_CONFIG=" + example("memory_limit.toml") + " RMM_LIMITING_LIMIT=2GiB");
  ASSERT_EQ(result.status, 0) << result.err;
  EXPECT_NE(result.out.find("stack from " + example("memory_limit.toml")), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("limit = \"2GiB\""), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("environment RMM_LIMITING_LIMIT"), std::string::npos) << result.out;
}

TEST_F(RmmRun, ConfigOptionBeatsRmmConfig)
{
  auto const result = rmm_run("--check --config " + example("pool.toml"), "RMM_CONFIG=/nonexistent.toml");
  EXPECT_EQ(result.status, 0) << result.err;
}

TEST_F(RmmRun, BuiltInStackWithoutAnyFile)
{
  auto const result = rmm_run("--check", "RMM_POOL_INITIAL_SIZE=1GiB");
  ASSERT_EQ(result.status, 0) << result.err;
  EXPECT_NE(result.out.find("stack from the built-in stack"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("initial_size = \"1GiB\""), std::string::npos) << result.out;
}

TEST_F(RmmRun, BadOverrideNamesTheVariable)
{
  auto const result = rmm_run("--check", "RMM_POOL_INITIAL_SIZE=huge");
  EXPECT_EQ(result.status, 2);
  EXPECT_EQ(result.err.rfind("rmm-run: environment variable RMM_POOL_INITIAL_SIZE: found \"huge\", expected a size", 0),
            0U)
    << result.err;
  EXPECT_EQ(rmm_run("--check", "RMM_POOL_INITAL_SIZE=1GiB").status, 2);
  EXPECT_EQ(rmm_run("--check", "RMM_ARENA_ARENA_SIZE=1GiB").status, 2);
}

TEST_F(RmmRun, TheKillSwitchTakesTheSameWordsAsEveryBoolean)
{
  // RMM_SHIM_ENABLED is read by the one boolean reader: whatever the shim takes, --check takes.
  for (auto const* off : {"off", "no", "0", "FALSE", "Off"}) {
    auto const result = rmm_run("--check", std::string{"RMM_SHIM_ENABLED="} + off);
    EXPECT_EQ(result.status, 0) << off << ": " << result.err;
    EXPECT_NE(result.out.find("enabled = false"), std::string::npos) << off << ": " << result.out;
  }
  for (auto const* on : {"on", "yes", "1", "True"}) {
    auto const result = rmm_run("--check", std::string{"RMM_SHIM_ENABLED="} + on);
    EXPECT_EQ(result.status, 0) << on << ": " << result.err;
    EXPECT_NE(result.out.find("enabled = true"), std::string::npos) << on << ": " << result.out;
  }
  auto const refused = rmm_run("--check", "RMM_SHIM_ENABLED=disabled");
  EXPECT_EQ(refused.status, 2);
  EXPECT_EQ(refused.err,
            "rmm-run: environment variable RMM_SHIM_ENABLED: found \"disabled\", expected true or false (also 1/0, "
            "yes/no, on/off)\n");
  // Switched off, a launch reads no configuration: a broken one does not stop it at validation.
  auto const broken = write_file("broken_for_off.toml", "[[resource]]\ntype = \"pool\"\nfrobnicate = 1\n");
  EXPECT_EQ(rmm_run("--config " + broken + " -- /bin/true", "RMM_SHIM_ENABLED=off").err.find(broken),
            std::string::npos);
}

TEST_F(RmmRun, TheVariableTheShimSetsForItsChildrenIsAccepted)
{
  auto const result = rmm_run("--check", "RMM_SHIM_RUN_START=1700000000000000000");
  EXPECT_EQ(result.status, 0) << result.err;
}

TEST_F(RmmRun, DeviceChecks)
{
  // The emulated device holds far less than 4 TiB: impossible on this device, so invalid.
  auto const file =
    write_file("big.toml", "[[resource]]\ntype = \"pool\"\ninitial_size = \"4TiB\"\n[[resource]]\ntype = \"cuda\"\n");
  auto const result = rmm_run("--check --config " + file);
  EXPECT_EQ(result.status, 2);
  EXPECT_NE(result.err.find(":3:16: found initial_size = \"4TiB\", expected at most the device's"), std::string::npos)
    << result.err;

  // Without pageable memory access (the H200; the emulator by default) "system" cannot be the bottom.
  auto const system   = write_file("system.toml", "[[resource]]\ntype = \"system\"\n");
  auto const pageable = rmm::mr::is_system_memory_supported(rmm::cuda_device_id{0});
  auto const refused  = rmm_run("--check --config " + system, "RMM_EMU_PAGEABLE_MEMORY_ACCESS=0");
  EXPECT_EQ(refused.status, pageable ? 0 : 2) << refused.err;
  if (!pageable) {
    EXPECT_NE(refused.err.find(":2:8: found type \"system\" on device 0"), std::string::npos) << refused.err;
  }
  if (rmm::test::current_backend() == rmm::test::backend::emulator) {
    EXPECT_EQ(rmm_run("--check --config " + system, "RMM_EMU_PAGEABLE_MEMORY_ACCESS=1").status, 0);
  }
}

TEST_F(RmmRun, StacksTooDeepToBuildAreInvalid)
{
  std::string toml;
  for (int i = 0; i < 30000; ++i) { toml += "[[resource]]\ntype = \"statistics\"\n"; }
  auto const file   = write_file("deep.toml", toml + "[[resource]]\ntype = \"cuda\"\n");
  auto const result = rmm_run("--check --build --config " + file);
  EXPECT_EQ(result.status, 2) << result.out << result.err;
  EXPECT_EQ(result.err.rfind("rmm-run: " + file + ":130:8: found a stack of 30001 layers", 0), 0U) << result.err;
}

TEST_F(RmmRun, BinsTheDeviceCannotHoldAreInvalid)
{
  auto const file   = write_file("bins.toml",
                                 "[[resource]]\ntype = \"binning\"\nmax_size_exponent = 40\n[[resource]]\n"
                                   "type = \"cuda\"\n");
  auto const result = rmm_run("--check --config " + file);
  EXPECT_EQ(result.status, 2) << result.out << result.err;
  EXPECT_NE(result.err.find(":3:21: found max_size_exponent = 40"), std::string::npos) << result.err;
}

TEST_F(RmmRun, BuildsOnTheDevice)
{
  auto const result = rmm_run("--check --build --config " + example("binning_pool.toml"));
  EXPECT_EQ(result.status, 0) << result.err;
  EXPECT_NE(result.out.find("built on device 0; allocated and freed 1 MiB through it"), std::string::npos)
    << result.out;
  if (rmm::test::device_count() < 2) { return; }  // the second half needs two devices
  auto const on_device_1 = rmm_run("--check --build --device 1 --config " + example("pool.toml"));
  EXPECT_EQ(on_device_1.status, 0) << on_device_1.err;
  EXPECT_NE(on_device_1.out.find("built on device 1"), std::string::npos) << on_device_1.out;
}

TEST_F(RmmRun, BuildFailureIsNotAConfigurationError)
{
  if (rmm::test::current_backend() != rmm::test::backend::emulator) {
    GTEST_SKIP() << "needs the emulator's fault injection (RMM_EMU_FAIL_ALLOC_ABOVE)";
  }
  // Valid, but the device cannot serve it: the emulator fails every allocation above 1 MiB.
  auto const result = rmm_run("--check --build --config " + example("pool.toml"), "RMM_EMU_FAIL_ALLOC_ABOVE=1MiB");
  EXPECT_EQ(result.status, 1) << result.out << result.err;
  EXPECT_NE(result.err.find("the configuration is valid, but building it on device 0 failed"), std::string::npos)
    << result.err;
}

TEST_F(RmmRun, ALogFileThatCannotBeOpenedIsTheUsersToFixNotASourceLine)
{
  auto const file   = write_file("unwritable_log.toml",
                                 "[[resource]]\ntype = \"logging\"\nfile = \"/nonexistent-folder/log.csv\"\n"
                                   "[[resource]]\ntype = \"cuda\"\n");
  auto const result = rmm_run("--check --build --config " + file);
  EXPECT_EQ(result.status, 1) << result.out << result.err;
  EXPECT_NE(result.err.find("cannot open the log file '/nonexistent-folder/log.csv' for writing: No such file or "
                            "directory; check that its directory exists and is writable"),
            std::string::npos)
    << result.err;
  EXPECT_EQ(result.err.find(".cpp:"), std::string::npos) << "no source location: " << result.err;
  EXPECT_EQ(result.err.find("RMM failure at"), std::string::npos) << result.err;
}

TEST_F(RmmRun, PrintDefaultIsAValidFile)
{
  auto const printed = rmm_run("--print-default");
  ASSERT_EQ(printed.status, 0);
  auto const file  = write_file("default.toml", printed.out);
  auto const check = rmm_run("--check --config " + file);
  EXPECT_EQ(check.status, 0) << check.err;
  EXPECT_NE(check.out.find("initial_size = \"32MiB\""), std::string::npos) << check.out;
}

TEST_F(RmmRun, CommandLineMistakes)
{
  EXPECT_EQ(rmm_run("").status, 64);
  EXPECT_EQ(rmm_run("--chek").status, 64);
  EXPECT_EQ(rmm_run("--check --config").status, 64);
  EXPECT_EQ(rmm_run("--check --device x").status, 64);
  EXPECT_EQ(rmm_run("--build").status, 64);
  EXPECT_EQ(rmm_run("--check -- /bin/true").status, 64);
  EXPECT_EQ(rmm_run("--").status, 64);
  auto const help = rmm_run("--help");
  EXPECT_EQ(help.status, 0);
  EXPECT_NE(help.out.find("usage: rmm-run [--config FILE]"), std::string::npos) << help.out;
  EXPECT_NE(help.out.find("rmm-run --check"), std::string::npos) << help.out;
  EXPECT_EQ(rmm_run("--report").status, 64) << "--report without a program";
  EXPECT_EQ(rmm_run("--log").status, 64);
  // The form rmm-replay uses too: name, what was wrong, the usage and where the rest is.
  auto const unknown = rmm_run("--chek");
  EXPECT_EQ(unknown.err,
            "rmm-run: unknown option '--chek' (did you mean --check?)\n"
            "usage: rmm-run [OPTIONS] -- PROGRAM [ARGS...]   (rmm-run --help lists the options)\n");
  EXPECT_EQ(unknown.out, "");
}

/// rmm-run ARGUMENTS is refused as a wrong command line (exit 2), runs no program, and says
/// `message` followed by the usage.
void expect_refused(std::string const& arguments, std::string const& message)
{
  auto const result = rmm_run(arguments);
  EXPECT_EQ(result.status, 64) << arguments;
  EXPECT_EQ(result.out, "") << arguments << ": the program ran";
  EXPECT_NE(result.err.find(message), std::string::npos) << arguments << "\n" << result.err;
  EXPECT_NE(result.err.find("\nusage: rmm-run [OPTIONS] -- PROGRAM [ARGS...]"), std::string::npos) << result.err;
}

TEST_F(RmmRun, AnOptionsValueIsNeverAnotherOption)
{
  expect_refused("--log -- /bin/echo ran", "rmm-run: --log needs a file name, not the option '--'\n");
  expect_refused("--config -- /bin/echo ran", "--config needs a file name, not the option '--'");
  // Blamed on the option, not on the environment variable it stands for.
  expect_refused("--pool-size --verbose -- /bin/echo ran",
                 "--pool-size needs a size, like 8GiB or 50%, not the option '--verbose'");
  EXPECT_EQ(rmm_run("--pool-size --verbose -- /bin/echo ran").err.find("RMM_POOL_INITIAL_SIZE"), std::string::npos);
  expect_refused("--pool-size lots -- /bin/echo ran", "rmm-run: --pool-size: found \"lots\", expected a size");
  expect_refused("--log", "rmm-run: --log needs a file name after it");
  expect_refused("--check --device --build", "--device needs a device number (0, 1, ...), not the option '--build'");
}

TEST_F(RmmRun, AProgramBeforeTheSeparatorIsExplainedInTwoLines)
{
  auto const before = rmm_run("./prog --flag");
  EXPECT_EQ(before.status, 64);
  EXPECT_EQ(before.err,
            "rmm-run: './prog' is not an option of rmm-run: the program and its arguments go after '--' (rmm-run "
            "[OPTIONS] -- ./prog ...)\nusage: rmm-run [OPTIONS] -- PROGRAM [ARGS...]   (rmm-run --help lists the "
            "options)\n");
  // --report takes an optional file, so the program's argument is the stray one.
  expect_refused("--report ./prog 2", "'2' is not an option of rmm-run");
  expect_refused("--verbos -- /bin/true", "unknown option '--verbos' (did you mean --verbose?)");
}

TEST_F(RmmRun, AReportOrLogFileThatCannotBeWrittenStopsItBeforeTheProgram)
{
  expect_refused("--report /nonexistent-folder/r.json -- /bin/echo ran",
                 "rmm-run: --report /nonexistent-folder/r.json: cannot write there: No such file or directory (no "
                 "folder /nonexistent-folder)");
  std::filesystem::create_directories(scratch / "a-folder");
  expect_refused("--report " + (scratch / "a-folder").string() + " -- /bin/echo ran",
                 "cannot write there: Is a directory");
  expect_refused("--log /nonexistent-folder/log-%p.csv -- /bin/echo ran",
                 "rmm-run: --log /nonexistent-folder/log-%p.csv: cannot write there");
  expect_refused("--log /nonexistent-folder/log.csv -- /bin/echo ran",
                 "; name a file in a folder that exists and can be written\n");
}

TEST_F(RmmRun, LaunchingValidatesFirst)
{
  // Launching itself (the shim, exit statuses, LD_PRELOAD) is tested in tests/shim.
  auto const bad    = write_file("bad2.toml", "[[resource]]\ntype = \"statistics\"\n");
  auto const result = rmm_run("--config " + bad + " -- /bin/echo ran");
  EXPECT_EQ(result.status, 2);
  EXPECT_EQ(result.out, "") << "the program ran with a bad configuration";
}

}  // namespace
