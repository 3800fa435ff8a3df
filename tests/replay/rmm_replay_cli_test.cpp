// SPDX-License-Identifier: Apache-2.0
// rmm-replay as users run it: exit codes, messages naming the line, the figures in the table and
// the JSON, and the shipped traces through the default resources and a simulated device.

#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>

#include <sys/wait.h>

namespace {

struct outcome {
  int status;
  std::string out;
  std::string err;
};

class RmmReplay : public ::testing::Test {
 protected:
  void SetUp() override
  {
    directory_ =
      std::filesystem::temp_directory_path() / ("rmm_replay_cli_test_" + std::to_string(::getpid()) + "_" +
                                                ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(directory_);
  }
  void TearDown() override { std::filesystem::remove_all(directory_); }

  /// Writes a log with the header and `rows`; returns its path.
  std::string write_log(std::string const& rows, bool with_header = true)
  {
    auto const path = (directory_ / "log.csv").string();
    std::ofstream{path} << (with_header ? "Thread,Time,Action,Pointer,Size,Stream\n" : "") << rows;
    return path;
  }

  outcome run(std::string const& arguments)
  {
    auto const err_path = (directory_ / "stderr.txt").string();
    auto const command  = std::string{RMM_REPLAY_EXECUTABLE} + " " + arguments + " 2>" + err_path;
    FILE* pipe          = popen(command.c_str(), "r");
    if (pipe == nullptr) { return {-1, "", "popen failed"}; }
    std::string out;
    std::array<char, 4096> chunk{};
    while (fgets(chunk.data(), chunk.size(), pipe) != nullptr) { out += chunk.data(); }
    int const status = pclose(pipe);
    std::stringstream err;
    err << std::ifstream{err_path}.rdbuf();
    return {WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status), out, err.str()};
  }

  /// Runs on a malformed log and checks exit status 2 and the message.
  void expect_malformed(std::string const& rows, std::string const& message, bool with_header = true)
  {
    auto const log    = write_log(rows, with_header);
    auto const result = run(log + " --resource cuda");
    EXPECT_EQ(result.status, 2) << result.err;
    EXPECT_EQ(result.err,
              "rmm-replay: malformed log: " + log + message + "\nNothing was replayed. Fix or regenerate the log.\n");
    EXPECT_EQ(result.out, "");
  }

  std::filesystem::path directory_;
};

/// The line of the JSON result for `resource` (each result is one line).
std::string result_line(std::string const& json, std::string const& resource, std::string const& log = "")
{
  std::istringstream lines{json};
  for (std::string line; std::getline(lines, line);) {
    if (line.find("\"resource\": \"" + resource + "\"") != std::string::npos && line.find(log) != std::string::npos) {
      return line;
    }
  }
  ADD_FAILURE() << "no result for " << resource << " in\n" << json;
  return "";
}

/// The value of `field` in one JSON result line, as written.
std::string field(std::string const& line, std::string const& name)
{
  std::smatch match;
  std::regex const pattern{"\"" + name + "\": (\"[^\"]*\"|[^,}]+)"};
  if (!std::regex_search(line, match, pattern)) {
    ADD_FAILURE() << "no field " << name << " in " << line;
    return "";
  }
  return match[1].str();
}

std::string const row = "1,00:00:01.000000,";

/// What follows every command-line mistake, in rmm-run too.
std::string const usage = "usage: rmm-replay [OPTIONS] LOG...   (rmm-replay --help lists the options)\n";

TEST_F(RmmReplay, TruncatedRow)
{
  expect_malformed(row + "allocate,0x100,256,0x0\n" + row + "free,0x100\n",
                   ":3: 4 column(s), expected 6 (Thread,Time,Action,Pointer,Size,Stream)");
}

TEST_F(RmmReplay, ALogCutOffInItsLastRowIsRefusedWithTheWayOut)
{
  expect_malformed(row + "allocate,0x100,256,0x0\n" + row + "free,0x1",
                   ":3: 4 column(s), expected 6 (Thread,Time,Action,Pointer,Size,Stream) (the log ends in this row, "
                   "as a log cut off by a crash does: --complete-rows replays the 1 complete rows before it)");
}

TEST_F(RmmReplay, CompleteRowsReplaysALogCutOffByACrashUpToItsLastCompleteRow)
{
  auto const log    = write_log(row + "allocate,0x100,256,0x0\n" + row + "allocate,0x200,512,0x0\n" + row + "free,0x1");
  auto const result = run(log + " --resource cuda --complete-rows --json -");
  EXPECT_EQ(result.status, 0) << result.err;
  auto const note =
    "rmm-replay: " + log + ":4: the log was cut off in this row; replaying the 2 complete rows before it\n";
  EXPECT_NE(result.err.find(note), std::string::npos) << result.err;
  EXPECT_EQ(field(result_line(result.out, "cuda"), "peak_live_bytes"), "768") << result.out;
}

TEST_F(RmmReplay, CompleteRowsStillRefusesABadRowInTheMiddle)
{
  auto const log    = write_log(row + "allocate,0x100,12a,0x0\n" + row + "allocate,0x200,512,0x0\n");
  auto const result = run(log + " --resource cuda --complete-rows");
  EXPECT_EQ(result.status, 2);
  EXPECT_NE(result.err.find(":2: column Size is '12a', expected a decimal number\n"), std::string::npos) << result.err;
}

TEST_F(RmmReplay, BadNumber)
{
  expect_malformed(row + "allocate,0x100,12a,0x0\n", ":2: column Size is '12a', expected a decimal number");
  expect_malformed(row + "allocate,0xg00,12,0x0\n", ":2: column Pointer is '0xg00', expected a hexadecimal number");
  // 2^64: a number, but too large for any size.
  expect_malformed(row + "allocate,0x100,18446744073709551616,0x0\n",
                   ":2: column Size is '18446744073709551616', out of range: expected a number below 2^64");
}

TEST_F(RmmReplay, UnknownAction)
{
  expect_malformed(row + "reallocate,0x100,256,0x0\n",
                   ":2: unknown action 'reallocate', expected allocate, allocate failure or free");
}

TEST_F(RmmReplay, FreeOfAnUnknownPointer)
{
  expect_malformed(row + "allocate,0x100,256,0x0\n" + row + "free,0x200,256,0x0\n",
                   ":3: free of 0x200, which was never allocated in this log (was the log cut at its start?)");
}

TEST_F(RmmReplay, DoubleFree)
{
  expect_malformed(row + "allocate,0x100,256,0x0\n" + row + "free,0x100,256,0x0\n" + row + "free,0x100,256,0x0\n",
                   ":4: double free of 0x100 (allocated at line 2, already freed at line 3)");
}

TEST_F(RmmReplay, WrongSizeOnFree)
{
  expect_malformed(row + "allocate,0x100,256,0x0\n" + row + "free,0x100,255,0x0\n",
                   ":3: free of 0x100 with size 255, but it was allocated with size 256 at line 2");
}

TEST_F(RmmReplay, HeaderMissing)
{
  expect_malformed(row + "allocate,0x100,256,0x0\n",
                   ":1: expected the header 'Thread,Time,Action,Pointer,Size,Stream', found "
                   "'1,00:00:01.000000,allocate,0x100,256,0x0'",
                   false);
}

TEST_F(RmmReplay, ALineLongerThanTheLimitIsRefusedNamingItsLine)
{
  expect_malformed(row + "allocate,0x100,256,0x0\n" + std::string(100000, '1') + "\n" + row + "free,0x100,256,0x0\n",
                   ":3: line longer than 65536 bytes: not an allocation log (a row is at most about 120 bytes)");
}

TEST_F(RmmReplay, ALongFieldIsShownCutInTheMessage)
{
  expect_malformed(row + "allocate,0x100," + std::string(50000, '1') + "x,0x0\n",
                   ":2: column Size is '" + std::string(64, '1') + "... (50001 bytes)', expected a decimal number");
}

TEST_F(RmmReplay, ATimeNoDayHasIsRefused)
{
  expect_malformed("1,99:99:99.999999,allocate,0x100,256,0x0\n",
                   ":2: column Time is '99:99:99.999999', a time no day has (hours up to 23, minutes up to 59, "
                   "seconds up to 59, or 60 in a leap second)");
}

TEST_F(RmmReplay, ALogThatCannotBeOpenedIsNamedWithTheSystemsReason)
{
  auto const absent = (directory_ / "absent.csv").string();
  auto result       = run(absent);
  EXPECT_EQ(result.status, 2);
  EXPECT_NE(result.err.find(absent + ": cannot open the log: No such file or directory\n"), std::string::npos)
    << result.err;
  auto const below_a_file = write_log(row + "allocate,0x100,256,0x0\n") + "/inner.csv";
  result                  = run(below_a_file);
  EXPECT_EQ(result.status, 2);
  EXPECT_NE(result.err.find(below_a_file + ": cannot open the log: Not a directory\n"), std::string::npos)
    << result.err;
}

TEST_F(RmmReplay, BadUsage)
{
  auto const log = write_log(row + "allocate,0x100,256,0x0\n");
  auto result    = run(log + " --resource pool,heap");
  EXPECT_EQ(result.status, 2);
  EXPECT_NE(result.err.find("rmm-replay: resource 'heap': unknown part 'heap'\nknown resources"), std::string::npos)
    << result.err;
  EXPECT_NE(result.err.find("  cuda_async "), std::string::npos) << result.err;
  EXPECT_EQ(result.err.find("usage: rmm-replay LOG..."), std::string::npos) << "a usage error is not the whole help";
  EXPECT_EQ(result.err.find("Exit status:"), std::string::npos) << "a usage error is not the whole help";
  EXPECT_TRUE(result.err.ends_with("\n" + usage)) << result.err;

  /// A usage error (exit 2) whose message says `says`.
  auto const refused = [&](std::string const& arguments, std::string const& says) {
    auto const refusal = run(log + " " + arguments);
    EXPECT_EQ(refusal.status, 2) << arguments;
    EXPECT_NE(refusal.err.find(says), std::string::npos) << refusal.err;
  };
  refused("--resource cuda+pool",
          "the bottom resource (cuda, managed, pinned_host, system, sam_headroom, cuda_async, cuda_async_managed) must "
          "come last");
  // The names are the configuration's types: a typo gets the closest one, and a type that needs
  // settings a name cannot carry is refused saying so.
  refused("--resource pol+cuda", "unknown part 'pol' (did you mean 'pool'?)");
  refused("--resource limiting+cuda", "'limiting' needs settings a stack name cannot give");
  refused("--simulate-device-size=80parsecs",
          "--simulate-device-size '80parsecs' is not a size: expected a size: bytes as an integer");
  // Units mean what they mean in the configuration: MB is refused, with the unit meant.
  refused("--simulate-device-size 512MB", "write \"512MiB\"");
  refused("--simulate-device-size 1GiB --resource pool+managed", "managed cannot be simulated");
  refused("--jsn out.json", "unknown option '--jsn' (did you mean --json?)\n");
  refused("--pool-growth compacting",
          "--pool-growth 'compacting' is not a growth mode: expected virtual_memory, remapping, upstream");
  refused("--simulate-device-size 1GiB --pool-growth remapping",
          "--pool-growth remapping maps device memory, which a simulated device does not have");

  result = run(log + " --frobnicate");
  EXPECT_EQ(result.status, 2);
  // The form rmm-run uses too: name, what was wrong, the usage and where the rest is.
  EXPECT_EQ(result.err, "rmm-replay: unknown option '--frobnicate'\n" + usage);

  result = run(log + " --simulate-device=80GiB");
  EXPECT_EQ(result.status, 2);
  EXPECT_EQ(result.err,
            "rmm-replay: unknown option '--simulate-device=80GiB' (did you mean --simulate-device-size?)\n" + usage);

  result = run("");
  EXPECT_EQ(result.status, 2);
  EXPECT_NE(result.err.find("rmm-replay: no log given: name the allocation logs to replay"), std::string::npos)
    << result.err;
  refused("--json", "--json needs a value: --json VALUE or --json=VALUE\n");
  refused("--resource pool,,cuda", "--resource 'pool,,cuda' has an empty name: separate the names with single commas");

  result = run("--help");
  EXPECT_EQ(result.status, 0);
  EXPECT_NE(result.out.find("Exit status: 0 replayed"), std::string::npos) << result.out;
}

// Peak live 4000 bytes (lines 2-3), then 3500; what cuda reserves is what is live.
std::string const small_log = row + "allocate,0x100,1000,0x0\n" + row + "allocate,0x200,3000,0x0\n" + row +
                              "free,0x100,1000,0x0\n" + row + "allocate,0x300,500,0x0\n";

TEST_F(RmmReplay, FiguresInTheTableAndTheJson)
{
  auto const log    = write_log(small_log);
  auto const result = run(log + " --resource cuda --resource pool --json -");
  ASSERT_EQ(result.status, 0) << result.err;

  auto const cuda = result_line(result.out, "cuda");
  EXPECT_EQ(field(cuda, "status"), "\"ok\"");
  EXPECT_EQ(field(cuda, "error"), "null");
  EXPECT_EQ(field(cuda, "events"), "4");
  EXPECT_EQ(field(cuda, "events_replayed"), "4");
  EXPECT_EQ(field(cuda, "threads"), "1");
  EXPECT_EQ(field(cuda, "streams"), "1");
  EXPECT_EQ(field(cuda, "peak_live_bytes"), "4000");
  EXPECT_EQ(field(cuda, "peak_reserved_bytes"), "4000");
  EXPECT_EQ(field(cuda, "fragmentation"), "0.000000");
  EXPECT_EQ(field(cuda, "left_live"), "2");
  EXPECT_EQ(field(cuda, "logged_failures"), "0");

  auto const pool = result_line(result.out, "pool");
  EXPECT_EQ(field(pool, "stack"), "\"pool over cuda\"");
  EXPECT_EQ(field(pool, "peak_live_bytes"), "4000");
  // A pool starts empty and grows in steps of at least 32 MiB (through virtual memory, in whole
  // 2 MiB pages, where the device has it; in cudaMalloc chunks where not).
  auto const pool_reserved = std::stoull(field(pool, "peak_reserved_bytes"));
  EXPECT_TRUE(pool_reserved == (std::size_t{2} << 20) || pool_reserved == (std::size_t{32} << 20)) << pool_reserved;

  // The table went to stderr, since the JSON took stdout.
  EXPECT_TRUE(std::regex_search(
    result.err, std::regex{"\nlog +resource +time +ns/event +peak live +peak reserved +frag\\. +failures\n"}))
    << result.err;
  EXPECT_TRUE(std::regex_search(
    result.err, std::regex{"log\\.csv  cuda     +[0-9.]+ [mun]?s +[0-9]+ +3\\.91 KiB +3\\.91 KiB +0\\.0% +0/0\n"}))
    << result.err;
}

TEST_F(RmmReplay, PeakReservedIsWhatTheWholeStackHoldsFromTheDevice)
{
  // Over cuda every pool maps device memory itself (the layers below it serve it nothing), so a
  // pool over a pool holds what a pool alone does, and a pool over an arena holds its own memory
  // besides the arena's.
  auto const log    = write_log(small_log);
  auto const result = run(log + " -r pool,pool+pool,pool+statistics,binning,binning+pool+pool,pool+arena,arena+pool" +
                          " --arena-size 64MiB --json -");
  ASSERT_EQ(result.status, 0) << result.err;
  auto const reserved = [&](char const* resource) {
    return std::stoull(field(result_line(result.out, resource), "peak_reserved_bytes"));
  };
  auto const pool = reserved("pool");
  EXPECT_GE(pool, 4000U);
  EXPECT_EQ(reserved("pool+pool"), pool);
  EXPECT_EQ(reserved("pool+statistics"), pool);
  // Binning takes a batch of blocks for each of its bins from the pool when built.
  EXPECT_GT(reserved("binning"), pool);
  EXPECT_EQ(reserved("binning+pool+pool"), reserved("binning"));
  EXPECT_EQ(reserved("pool+arena"), (64U << 20) + pool);
  EXPECT_EQ(reserved("arena+pool"), 64U << 20);
}

TEST_F(RmmReplay, NsPerEventIsTheTimeInTheResourcesCalls)
{
  // 500 threads taking turns: every event hands the turn to another thread, which the wall time
  // includes and ns/event must not.
  std::string rows;
  for (int round = 0; round < 2; ++round) {
    for (int thread = 1; thread <= 500; ++thread) {
      rows += std::to_string(thread) + ",00:00:01.000000," + (round == 0 ? "allocate" : "free") + ",0x" +
              std::to_string(thread) + "000,256,0x0\n";
    }
  }
  auto const log    = write_log(rows);
  auto const result = run(log + " --resource cuda --json -");
  ASSERT_EQ(result.status, 0) << result.err;
  auto const cuda        = result_line(result.out, "cuda");
  auto const events      = std::stod(field(cuda, "events_replayed"));
  auto const in_calls_ns = std::stod(field(cuda, "in_calls_ns"));
  EXPECT_EQ(events, 1000);
  EXPECT_LT(in_calls_ns, std::stod(field(cuda, "wall_ns")));
  EXPECT_NEAR(std::stod(field(cuda, "ns_per_event")), in_calls_ns / events, 0.051) << cuda;
  EXPECT_EQ(cuda.find("in_calls_ns_per_event"), std::string::npos) << "ns_per_event says it";
  std::smatch cells;
  ASSERT_TRUE(std::regex_search(result.err, cells, std::regex{"log\\.csv  cuda +[0-9.]+ [mun]?s +([0-9]+) "}))
    << result.err;
  EXPECT_NEAR(std::stod(cells[1].str()), in_calls_ns / events, 0.51) << result.err;
}

TEST_F(RmmReplay, JsonToAFileAndTheTableToStdout)
{
  auto const log       = write_log(small_log);
  auto const json_path = (directory_ / "out.json").string();
  auto const result    = run(log + " --resource cuda --json " + json_path);
  ASSERT_EQ(result.status, 0) << result.err;
  EXPECT_NE(result.out.find("peak reserved"), std::string::npos);
  std::stringstream json;
  json << std::ifstream{json_path}.rdbuf();
  EXPECT_EQ(field(result_line(json.str(), "cuda"), "peak_reserved_bytes"), "4000");
}

TEST_F(RmmReplay, SimulatedDeviceReservesWhatTheStackAsksFor)
{
  auto const log    = write_log(small_log);
  auto const result = run(log + " --simulate-device-size 1GiB --resource cuda,pool,binning --json -");
  ASSERT_EQ(result.status, 0) << result.err;
  EXPECT_NE(result.out.find("\"simulated_device_size\": 1073741824"), std::string::npos) << result.out;
  auto const cuda = result_line(result.out, "cuda");
  EXPECT_EQ(field(cuda, "stack"), "\"simulated device (1.00 GiB)\"");
  EXPECT_EQ(field(cuda, "peak_reserved_bytes"), "4000");
  auto const pool = result_line(result.out, "pool");
  EXPECT_EQ(field(pool, "stack"), "\"pool over simulated device (1.00 GiB)\"");
  EXPECT_EQ(field(pool, "peak_reserved_bytes"), "33554432");  // one 32 MiB growth step
  EXPECT_EQ(field(pool, "fragmentation"), "0.999881");
  EXPECT_EQ(field(result_line(result.out, "binning"), "stack"),
            "\"binning over pool over simulated device (1.00 GiB)\"");
}

TEST_F(RmmReplay, SizesAreCheckedAgainstTheSimulatedDevice)
{
  // 512 GiB is beyond the real device the test runs on (and beyond any GPU): the arena's default,
  // half the simulated device, and a 200 GiB pool fit only the simulated one.
  auto const log    = write_log(small_log);
  auto const result = run(log + " --simulate-device-size 512GiB -r arena,pool --pool-initial-size 200GiB --json -");
  ASSERT_EQ(result.status, 0) << result.err;
  EXPECT_EQ(field(result_line(result.out, "arena"), "peak_reserved_bytes"), std::to_string(std::size_t{256} << 30));
  EXPECT_EQ(field(result_line(result.out, "pool"), "peak_reserved_bytes"), std::to_string(std::size_t{200} << 30));

  // Sizes beyond the simulated device are refused before anything is built, naming its size.
  auto const refused =
    run(log + " --simulate-device-size 1GiB -r pool,arena --pool-initial-size 2GiB --arena-size 3GiB");
  EXPECT_EQ(refused.status, 1) << refused.err;
  EXPECT_NE(refused.err.find("could not replay through 'pool': --resource pool:3:16: found initial_size = \"2GiB\", "
                             "expected at most the device's 1 GiB of memory"),
            std::string::npos)
    << refused.err;
  EXPECT_NE(refused.err.find("could not replay through 'arena': --resource arena:3:14: found arena_size = \"3GiB\", "
                             "expected at most the device's 1 GiB of memory"),
            std::string::npos)
    << refused.err;
}

TEST_F(RmmReplay, AllocationBeyondTheSimulatedDeviceFailsNamingTheLine)
{
  auto const log    = write_log(row + "allocate,0x100,1048576,0x0\n" + row + "allocate,0x200,2097152,0x0\n");
  auto const result = run(log + " --simulate-device-size 2MiB --resource cuda --json -");
  EXPECT_EQ(result.status, 1) << result.err;
  EXPECT_NE(
    result.err.find("rmm-replay: " + log +
                    ":3: replay through 'cuda' (simulated device (2.00 MiB)) failed: allocation of 2097152 bytes "
                    "failed, but succeeded in the log: simulated device: cannot allocate 2.00 MiB (2097152 bytes): "
                    "1.00 MiB of its 2.00 MiB in use, 1.00 MiB free\n"),
    std::string::npos)
    << result.err;
  EXPECT_NE(result.err.find("FAILED at line 3"), std::string::npos) << result.err;
  auto const cuda = result_line(result.out, "cuda");
  EXPECT_EQ(field(cuda, "status"), "\"failed\"");
  EXPECT_NE(cuda.find("\"error\": {\"line\": 3, \"message\": \"allocation of 2097152 bytes failed"), std::string::npos)
    << cuda;
  EXPECT_EQ(field(cuda, "peak_reserved_bytes"), "null");
  EXPECT_EQ(field(cuda, "events_replayed"), "1");
}

TEST_F(RmmReplay, LoggedFailuresAreReplayedAndReported)
{
  auto const log    = write_log(row + "allocate failure,0x0,4194304,0x0\n" + row + "allocate failure,0x0,1024,0x0\n" +
                                row + "allocate,0x100,256,0x0\n" + row + "free,0x100,256,0x0\n");
  auto const result = run(log + " --simulate-device-size 2MiB --resource cuda --json -");
  ASSERT_EQ(result.status, 0) << result.err;
  auto const cuda = result_line(result.out, "cuda");
  EXPECT_EQ(field(cuda, "logged_failures"), "2");
  EXPECT_EQ(field(cuda, "reproduced_failures"), "1");
  EXPECT_EQ(field(cuda, "unexpected_successes"), "1");
  EXPECT_EQ(field(cuda, "peak_live_bytes"), "256");
  EXPECT_NE(result.err.find("1/2 (1 succeeded)"), std::string::npos) << result.err;
}

TEST_F(RmmReplay, ThreadsAndStreamsOfTheLog)
{
  // Thread 2 frees what thread 1 allocated just before, across streams.
  auto const log = write_log(
    "1,00:00:01.000000,allocate,0x100,1000,0x5000\n"
    "2,00:00:01.000001,free,0x100,1000,0x6000\n"
    "2,00:00:01.000002,allocate,0x100,2000,0x0\n"
    "1,00:00:01.000003,free,0x100,2000,0x5000\n");
  auto const result = run(
    log + " --resource pool,cuda_async,arena,binning+arena,pool+managed,statistics+pool --arena-size 64MiB --json -");
  ASSERT_EQ(result.status, 0) << result.err;
  for (auto const* resource : {"pool", "cuda_async", "arena", "binning+arena", "pool+managed", "statistics+pool"}) {
    auto const line = result_line(result.out, resource);
    EXPECT_EQ(field(line, "status"), "\"ok\"") << line;
    EXPECT_EQ(field(line, "threads"), "2");
    EXPECT_EQ(field(line, "streams"), "3");
    EXPECT_EQ(field(line, "events_replayed"), "4");
    EXPECT_EQ(field(line, "peak_live_bytes"), "2000");
  }
  EXPECT_EQ(field(result_line(result.out, "arena"), "peak_reserved_bytes"), "67108864");
}

TEST_F(RmmReplay, ShippedTracesOnASimulatedDevice)
{
  auto const traces = std::string{RMM_TRACE_DIR};
  auto const result =
    run(traces + "/torch_resnet50.csv.gz " + traces + "/cupy_mix.csv.gz --simulate-device-size 80GiB --json -");
  ASSERT_EQ(result.status, 0) << result.err;
  for (auto const* resource : {"pool", "arena", "binning", "cuda"}) {
    auto const resnet = result_line(result.out, resource, "torch_resnet50");
    EXPECT_EQ(field(resnet, "status"), "\"ok\"") << resnet;
    EXPECT_EQ(field(resnet, "events_replayed"), "11135");
    EXPECT_EQ(field(resnet, "threads"), "2");
    EXPECT_EQ(field(resnet, "peak_live_bytes"), "3093576968");
    EXPECT_EQ(field(resnet, "left_live"), "335");
    EXPECT_GE(std::stoull(field(resnet, "peak_reserved_bytes")), 3093576968ULL);
    auto const cupy = result_line(result.out, resource, "cupy_mix");
    EXPECT_EQ(field(cupy, "status"), "\"ok\"") << cupy;
    EXPECT_EQ(field(cupy, "peak_live_bytes"), "204428976");
  }
  EXPECT_EQ(field(result_line(result.out, "cuda", "torch_resnet50"), "peak_reserved_bytes"), "3093576968");
  EXPECT_EQ(result.out.find("cuda_async"), std::string::npos) << "cuda_async cannot run on a simulated device";
}

TEST_F(RmmReplay, ShippedTraceLargerThanTheSimulatedDevice)
{
  auto const result =
    run(std::string{RMM_TRACE_DIR} + "/torch_resnet50.csv.gz --simulate-device-size 2GiB --resource cuda");
  EXPECT_EQ(result.status, 1) << result.err;
  EXPECT_TRUE(std::regex_search(
    result.err, std::regex{"torch_resnet50\\.csv\\.gz:[0-9]+: replay through 'cuda' \\(simulated device "
                           "\\(2\\.00 GiB\\)\\) failed: allocation of [0-9]+ bytes failed, but succeeded "
                           "in the log: simulated device: cannot allocate"}))
    << result.err;
}

TEST_F(RmmReplay, ShippedTracesThroughTheDefaultResources)
{
  auto const traces = std::string{RMM_TRACE_DIR};
  auto const result = run(traces + "/torch_resnet50.csv.gz " + traces + "/cupy_mix.csv.gz --json -");
  ASSERT_EQ(result.status, 0) << result.err;
  for (auto const* log : {"torch_resnet50", "cupy_mix"}) {
    for (auto const* resource : {"pool", "arena", "binning", "cuda_async", "cuda"}) {
      auto const line = result_line(result.out, resource, log);
      EXPECT_EQ(field(line, "status"), "\"ok\"") << line;
      EXPECT_GE(std::stoull(field(line, "peak_reserved_bytes")), std::stoull(field(line, "peak_live_bytes"))) << line;
    }
  }
  EXPECT_EQ(field(result_line(result.out, "cuda", "cupy_mix"), "peak_reserved_bytes"), "204428976");
}

TEST_F(RmmReplay, PoolGrowthChoosesHowPoolsOverCudaGrow)
{
  // The CuPy trace's growing sorts leave holes no placement avoids; moving idle granules to the
  // end fills them, so remapping holds less than mapping new memory does.
  auto const trace         = std::string{RMM_TRACE_DIR} + "/cupy_mix.csv.gz -r pool --json -";
  auto const reserved_with = [&](std::string const& growth) {
    auto const result = run(trace + " --pool-growth " + growth);
    EXPECT_EQ(result.status, 0) << result.err;
    return std::stoull(field(result_line(result.out, "pool"), "peak_reserved_bytes"));
  };
  auto const live       = 204428976ULL;
  auto const virtual_vm = reserved_with("virtual_memory");
  auto const remapping  = reserved_with("remapping");
  EXPECT_GT(virtual_vm, live * 11 / 10) << "the holes cost more than a tenth without remapping";
  EXPECT_LE(remapping, live * 105 / 100);
  EXPECT_GE(remapping, live);
}

}  // namespace

namespace {

std::size_t occurrences(std::string const& text, std::string const& what)
{
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) { ++n; }
  return n;
}

TEST_F(RmmReplay, TimelineDrawsTheLiveBytesAndEachResourceWithTheirPeaks)
{
  // Live bytes: 1 MiB, then 3 MiB at 2 s (the peak), then 1 MiB.
  auto const log = write_log(
    "1,10:00:00.000000,allocate,0x1000,1048576,0x0\n"
    "1,10:00:02.000000,allocate,0x200000,2097152,0x0\n"
    "1,10:00:03.000000,free,0x200000,2097152,0x0\n"
    "1,10:00:04.000000,free,0x1000,1048576,0x0\n");
  auto const picture = (directory_ / "timeline.svg").string();
  auto const result  = run(log + " -r pool,cuda --timeline " + picture);
  ASSERT_EQ(result.status, 0) << result.err;
  std::stringstream svg;
  svg << std::ifstream{picture}.rdbuf();
  auto const text = svg.str();
  EXPECT_EQ(text.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\"", 0), 0U) << text.substr(0, 200);
  EXPECT_TRUE(text.ends_with("</svg>\n"));
  EXPECT_EQ(occurrences(text, "<polyline"), 3U) << "live, pool, cuda";
  EXPECT_NE(text.find("log.csv: live and reserved bytes"), std::string::npos);
  EXPECT_NE(text.find("peak live 3.00 MiB at 2 s"), std::string::npos) << text;
  EXPECT_NE(text.find("cuda reserved, peak 3.00 MiB"), std::string::npos) << text;
  EXPECT_NE(text.find("pool reserved, peak"), std::string::npos);
  EXPECT_EQ(occurrences(text, "<text"), occurrences(text, "</text>"));
}

TEST_F(RmmReplay, TimelineOfSeveralLogsIsAUsageError)
{
  auto const log    = write_log(small_log);
  auto const result = run(log + " " + log + " --timeline " + (directory_ / "t.svg").string());
  EXPECT_EQ(result.status, 2);
  EXPECT_NE(result.err.find("--timeline draws one log, but 2 were given"), std::string::npos) << result.err;
}

TEST_F(RmmReplay, TimelineThatCannotBeWrittenStopsTheRunBeforeAnyReplay)
{
  auto const log    = write_log(small_log);
  auto const result = run(log + " -r cuda --timeline " + (directory_ / "missing" / "t.svg").string());
  EXPECT_EQ(result.status, 2);
  EXPECT_EQ(result.err, "rmm-replay: --timeline " + (directory_ / "missing" / "t.svg").string() +
                          ": cannot write there: No such file or directory; name a file in a folder that exists and "
                          "can be written\n" +
                          usage);
  EXPECT_EQ(result.out, "");
}

TEST_F(RmmReplay, AJsonFileThatCannotBeWrittenStopsTheRunBeforeAnyReplay)
{
  auto const log    = write_log(small_log);
  auto const result = run(log + " -r cuda --json " + (directory_ / "missing" / "r.json").string());
  EXPECT_EQ(result.status, 2);
  EXPECT_NE(result.err.find("rmm-replay: --json " + (directory_ / "missing" / "r.json").string() +
                            ": cannot write there: No such file or directory"),
            std::string::npos)
    << result.err;
  EXPECT_TRUE(result.err.ends_with(usage)) << result.err;
  EXPECT_EQ(result.out, "");
}

}  // namespace
