// SPDX-License-Identifier: Apache-2.0
// Pausing a program's device memory, from inside it (rmm_shim_pause) and from another process
// (rmm-ctl): the memory goes back to the device, every block keeps its address and contents,
// allocations wait and frees are held meanwhile, and whatever cannot be done is refused with the
// reason and changes nothing.

#include "shim_runner.hpp"

#include <backend.hpp>
#include <scratch_path.hpp>

#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <string>

namespace rmm::test {
namespace {

outcome run_pause(std::string const& scenario, std::map<std::string, std::string> environment = {})
{
  environment.emplace("XDG_RUNTIME_DIR", runtime_directory());
  environment.emplace("RMM_TEST_CTL", RMM_CTL);
  return run_program(RMM_PAUSE_CLIENT, scenario, std::move(environment));
}

bool contains(std::string const& text, std::string const& part) { return text.find(part) != std::string::npos; }

TEST(Pause, InProcessTheMemoryGoesBackAndComesBackWithItsContents)
{
  scratch_path const paused_report{"paused_report", ".json"};
  auto const r = run_pause("in-process", {{"RMM_TEST_PAUSED_REPORT", paused_report.str()}});
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(r.value("pause"), "0") << r.output;
  EXPECT_TRUE(contains(r.value("pause_message"), "paused:")) << r.output;
  EXPECT_EQ(r.value("free_while_paused"), r.value("free_at_start")) << "all of the stack's memory went back";
  EXPECT_NE(r.value("pause_again"), "0");
  EXPECT_TRUE(contains(r.value("pause_again_message"), "paused already")) << r.output;
  EXPECT_EQ(r.value("allocated_while_paused"), "0") << "an allocation waits for the resume";
  EXPECT_EQ(r.value("report_while_paused"), "0");
  EXPECT_EQ(r.value("resume"), "0") << r.output;
  EXPECT_TRUE(contains(r.value("resume_message"), "1 free made while paused applied")) << r.output;
  EXPECT_EQ(r.value("allocated_after_resume"), "1") << "the waiting allocation is served after the resume";
  EXPECT_EQ(r.value("contents_kept"), "1") << "every live block holds what it held";
  EXPECT_NE(r.value("resume_again"), "0");
  EXPECT_TRUE(contains(r.value("resume_again_message"), "not paused")) << r.output;
  // Every allocation and free was served and counted, the held free included.
  EXPECT_EQ(r.reported("allocations"), r.reported("frees")) << r.report;
  EXPECT_EQ(r.reported("live_bytes"), 0) << r.report;
  EXPECT_EQ(r.reported("pauses"), 1) << r.report;
  EXPECT_EQ(r.reported("waited_allocations"), 1) << r.report;
  std::ifstream file{paused_report.str()};
  std::stringstream paused;
  paused << file.rdbuf();
  EXPECT_TRUE(contains(paused.str(), "\"paused\":true")) << paused.str();
  EXPECT_TRUE(contains(paused.str(), "\"held_frees\":1")) << paused.str();
}

/// An allocation while paused with `pause_timeout` = `seconds`: out of memory once it has waited
/// that long; how long it waited.
double timed_out_allocation_ms(char const* seconds)
{
  auto const r = run_pause("timeout", {{"RMM_SHIM_PAUSE_TIMEOUT", seconds}});
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(r.value("allocation"), "cudaErrorMemoryAllocation") << r.output;
  EXPECT_EQ(r.value("contents_kept"), "1");
  EXPECT_EQ(r.reported("timed_out_allocations"), 1) << r.report;
  return r.value("waited_ms").empty() ? -1.0 : std::stod(r.value("waited_ms"));
}

TEST(Pause, AnAllocationPastThePauseTimeoutIsOutOfMemory)
{
  EXPECT_GE(timed_out_allocation_ms("1"), 900.0) << "it waited for the timeout first";
}

TEST(Pause, WithATimeoutOfZeroAnAllocationWhilePausedFailsAtOnce)
{
  auto const waited = timed_out_allocation_ms("0");
  EXPECT_GE(waited, 0.0);
  EXPECT_LT(waited, 500.0) << "it did not wait";
}

TEST(Pause, ACaptureIsRefusedUntilItIsOver)
{
  auto const r = run_pause("refuse-capture");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(r.value("pause_capturing"), "-1");
  EXPECT_TRUE(contains(r.value("pause_capturing_message"), "capturing a CUDA graph")) << r.output;
  EXPECT_EQ(r.value("contents_after_refusal"), "1");
  EXPECT_EQ(r.value("pause_after_capture"), "0") << r.output;
  EXPECT_EQ(r.value("contents_kept"), "1");
  EXPECT_EQ(r.reported("pauses"), 1) << r.report;
}

TEST(Pause, AnIpcExportIsRefusedUntilTheBlockIsFreed)
{
  auto const r = run_pause("refuse-export");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(r.value("pause_exported"), "-1");
  EXPECT_TRUE(contains(r.value("pause_exported_message"), "exported through CUDA IPC")) << r.output;
  EXPECT_EQ(r.value("allocation_after_refusal"), "cudaSuccess") << "nothing was paused";
  EXPECT_EQ(r.value("pause_after_free"), "0") << r.output;
  EXPECT_EQ(r.value("free_while_paused_is_start"), "1");
  EXPECT_EQ(r.value("contents_kept"), "1");
  EXPECT_EQ(r.reported("pauses"), 1) << r.report;
}

TEST(Pause, StreamOrderedAllocationsWaitAndFreesAreHeld)
{
  auto const r = run_pause("stream-ordered");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(r.value("allocated_while_paused"), "0") << "cudaMallocAsync waits for the resume";
  EXPECT_EQ(r.value("free_async_while_paused"), "cudaSuccess");
  EXPECT_EQ(r.value("pool_reserved_grew"), "1") << r.output;
  EXPECT_EQ(r.value("pool_reserved_paused_is_before"), "1")
    << "the default pool's reserved memory, paused: " << r.output;
  EXPECT_EQ(r.value("pool_used_paused_is_before"), "1") << r.output;
  EXPECT_EQ(r.value("resume"), "0") << r.output;
  EXPECT_TRUE(contains(r.value("resume_message"), "1 free made while paused applied")) << r.output;
  EXPECT_EQ(r.value("allocated_after_resume"), "1");
  EXPECT_EQ(r.value("contents_kept"), "1");
  EXPECT_EQ(r.reported("allocations"), r.reported("frees")) << r.report;
  EXPECT_EQ(r.reported("live_bytes"), 0) << r.report;
}

TEST(Pause, ADeviceResetWhilePausedDropsTheDevicesMemoryAndHeldFrees)
{
  auto const r = run_pause("reset-while-paused");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(r.value("reset"), "cudaSuccess");
  EXPECT_EQ(r.value("resume"), "0") << r.output;
  EXPECT_TRUE(contains(r.value("resume_message"), "0 frees made while paused applied"))
    << "the free held for the reset device went with it: " << r.output;
  EXPECT_EQ(r.value("usable_after_reset"), "1");
  EXPECT_EQ(r.reported("resets"), 1) << r.report;
}

TEST(Pause, ContentsTheHostCannotHoldAreRefusedBeforeTheCopy)
{
  if (rmm::test::current_backend() != rmm::test::backend::emulator) {
    GTEST_SKIP() << "needs the emulator, whose device can be larger than the host's available memory";
  }
  // A device twice the host's available memory: room for a block half as large again as the host.
  std::ifstream meminfo{"/proc/meminfo"};
  std::string key;
  std::size_t kib = 0;
  while (meminfo >> key >> kib && key != "MemAvailable:") { meminfo.ignore(256, '\n'); }
  ASSERT_EQ(key, "MemAvailable:") << "no MemAvailable in /proc/meminfo";
  auto const device_gib = std::to_string(kib * 2 / (1024 * 1024) + 1) + "GiB";
  auto const r          = run_pause("host-memory", {{"RMM_EMU_DEVICE_MEMORY", device_gib}});
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(r.value("pause"), "-1");
  EXPECT_TRUE(contains(r.value("pause_message"), "of memory available for")) << r.output;
  EXPECT_TRUE(contains(r.value("pause_message"), "nothing is paused")) << r.output;
  EXPECT_EQ(r.value("contents_kept"), "1");
  EXPECT_EQ(r.value("large_block_kept"), "1");
  EXPECT_EQ(r.value("pause_discard"), "0") << "without contents to keep, the same pause goes ahead";
}

TEST(Pause, WorkOnPausedMemoryIsReportedAsAFaultWhilePausedAndAtTheResume)
{
  if (rmm::test::current_backend() != rmm::test::backend::emulator) {
    GTEST_SKIP() << "needs the emulator's sticky faults (work on unmapped memory that the runtime accepts); on a "
                    "GPU, bench/apps/torch_pause.py fault touches paused memory with a kernel";
  }
  scratch_path const paused_report{"faulted_report", ".json"};
  auto const r =
    run_pause("fault-while-paused", {{"RMM_EMU_STICKY_FAULTS", "1"}, {"RMM_TEST_PAUSED_REPORT", paused_report.str()}});
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(r.value("pause"), "0") << r.output;
  EXPECT_EQ(r.value("program_saw"), "cudaErrorIllegalAddress") << r.output;
  // Said on stderr by the watch while paused, before the program asked to resume, and once only.
  auto const said = r.output.find("failed while the process's device memory was paused");
  ASSERT_NE(said, std::string::npos) << r.output;
  EXPECT_LT(said, r.output.find("before_resume")) << r.output;
  EXPECT_EQ(r.output.find("failed while the process's device memory was paused", said + 1), std::string::npos)
    << r.output;
  EXPECT_TRUE(contains(r.output, "CUDA_ERROR_ILLEGAL_ADDRESS")) << r.output;
  std::ifstream report_file{paused_report.str()};
  std::string const report{std::istreambuf_iterator<char>{report_file}, {}};
  EXPECT_TRUE(contains(report, R"("fault":{"device":0,"error":"CUDA_ERROR_ILLEGAL_ADDRESS"})")) << report;
  EXPECT_NE(r.value("resume"), "0") << r.output;
  EXPECT_TRUE(contains(r.value("resume_message"), "touched paused memory")) << r.output;
  EXPECT_TRUE(contains(r.value("resume_message"), "restart the process")) << r.output;
}

TEST(Pause, DiscardingKeepsTheAddressesWithoutTheContents)
{
  auto const r = run_pause("discard");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.value("pause_message"), "discarded")) << r.output;
  EXPECT_EQ(r.value("memory_given_back"), "1");
  EXPECT_EQ(r.value("usable_after_resume"), "1");
  EXPECT_NE(r.value("unknown_flag"), "0");
  EXPECT_TRUE(contains(r.value("unknown_flag_message"), "unknown flags")) << r.output;
}

TEST(Pause, AResumeWithoutTheMemorySaysHowMuchIsMissingAndALaterOneSucceeds)
{
  auto const r = run_pause("resume-fails");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.value("resume_without_memory"), "0");
  EXPECT_TRUE(contains(r.value("resume_without_memory_message"), "missing")) << r.output;
  EXPECT_TRUE(contains(r.value("resume_without_memory_message"), "stays paused")) << r.output;
  EXPECT_EQ(r.value("still_paused"), "1");
  EXPECT_EQ(r.value("resume_with_memory"), "0") << r.output;
  EXPECT_EQ(r.value("contents_kept"), "1") << "the contents waited in host memory";
}

TEST(Pause, AStackThatCannotPauseSaysWhyAndStaysAsItWas)
{
  auto const config =
    write_config("pause_arena.toml", "[[resource]]\ntype = \"arena\"\n\n[[resource]]\ntype = \"cuda\"\n");
  auto const r = run_pause("not-pausable", {{"RMM_CONFIG", config}});
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(r.value("pause"), "-1");
  EXPECT_TRUE(contains(r.value("pause_message"), "lowest sub-allocator is arena")) << r.output;
  EXPECT_EQ(r.value("contents_kept"), "1");
  EXPECT_EQ(r.value("allocation_after"), "cudaSuccess") << "nothing was paused";
}

TEST(Pause, NoCallOfBusyThreadsSlipsIntoAPausedStack)
{
  auto const r = run_pause("under-load");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(r.value("rounds_with_all_memory"), r.value("rounds")) << "while paused the stacks held nothing";
  EXPECT_GT(std::stol(r.value("worker_calls")), 0) << r.output;
  EXPECT_EQ(r.value("contents_kept"), "1");
  EXPECT_EQ(r.reported("allocations"), r.reported("frees")) << r.report;
  EXPECT_EQ(r.reported("pauses"), 40) << r.report;
}

TEST(Pause, RmmCtlPausesAndResumesAnotherProcess)
{
  auto const r = run_pause("from-outside");
  ASSERT_EQ(r.status, 0) << r.output;
  auto const pid = [&] {
    auto const line = r.value("list_running_output");
    return line.substr(line.find('|') + 1, line.find(' ', line.find('|')) - line.find('|') - 1);
  }();
  EXPECT_EQ(r.value("list_running_status"), "0");
  EXPECT_TRUE(contains(r.value("list_running_output"), "running")) << r.output;
  EXPECT_TRUE(contains(r.value("list_running_output"), "pause_client")) << r.output;
  EXPECT_EQ(r.value("report_status"), "0");
  EXPECT_TRUE(contains(r.value("report_output"), "rmm shim report (process " + pid + ")")) << r.output;
  EXPECT_TRUE(contains(r.value("report_json_output"), "\"pid\":" + pid)) << r.output;
  EXPECT_EQ(r.value("pause_status"), "0") << r.output;
  EXPECT_TRUE(contains(r.value("pause_output"), "paused:")) << r.output;
  EXPECT_EQ(r.value("memory_given_back"), "1");
  EXPECT_TRUE(contains(r.value("list_paused_output"), "paused")) << r.output;
  EXPECT_TRUE(contains(r.value("report_paused_output"), "PAUSED")) << r.output;
  EXPECT_EQ(r.value("pause_again_status"), "1");
  EXPECT_TRUE(contains(r.value("pause_again_output"), "paused already")) << r.output;
  EXPECT_EQ(r.value("release_paused_status"), "1");
  EXPECT_EQ(r.value("resume_status"), "0") << r.output;
  EXPECT_EQ(r.value("contents_kept"), "1");
  EXPECT_EQ(r.value("resume_again_status"), "1");
  EXPECT_EQ(r.value("release_status"), "0");
  EXPECT_TRUE(contains(r.value("release_output"), "released")) << r.output;
  EXPECT_EQ(r.value("bad_command_status"), "64");
  EXPECT_TRUE(contains(r.value("bad_command_output"), "unknown command 'frobnicate'")) << r.output;
  EXPECT_EQ(r.value("not_a_pid_status"), "64");
  EXPECT_EQ(r.value("pid_out_of_range_status"), "64") << "no process id wraps around to another";
}

TEST(Pause, KeptHostMemoryServesTheNextPauseWithNewerContentsUntilReleased)
{
  scratch_path const report{"kept_report", ".json"};
  auto const r = run_pause("keep-host-memory",
                           {{"RMM_SHIM_PAUSE_KEEPS_HOST_MEMORY", "1"}, {"RMM_TEST_PAUSED_REPORT", report.str()}});
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.value("first_resume_message"), "of host memory kept for the next pause")) << r.output;
  std::ifstream file{report.str()};
  std::string const json{std::istreambuf_iterator<char>{file}, std::istreambuf_iterator<char>{}};
  EXPECT_TRUE(contains(json, "\"kept_host_bytes\":")) << json;
  EXPECT_FALSE(contains(json, "\"kept_host_bytes\":0")) << json;
  EXPECT_TRUE(contains(json, "\"kept_host_held\":true")) << json;
  EXPECT_TRUE(contains(json, "\"staging_host_bytes\":")) << json;
  EXPECT_FALSE(contains(json, "\"staging_host_bytes\":0,")) << "the copies' page-locked staging is held: " << json;
  EXPECT_EQ(r.value("newer_contents_kept"), "1") << "the second pause copied the contents of its time";
  EXPECT_EQ(r.value("larger_contents_kept"), "1") << "contents larger than the kept memory got memory of their own";
  EXPECT_TRUE(contains(r.value("third_resume_message"), "kept for the next pause")) << r.output;
  EXPECT_EQ(r.value("release_status"), "0") << r.output;
  EXPECT_TRUE(contains(r.value("release_output"), "of host memory kept for the next pause")) << r.output;
  EXPECT_FALSE(contains(r.value("release_again_output"), "host memory")) << "nothing left to give back: " << r.output;
  EXPECT_EQ(r.value("contents_kept_after_release"), "1") << r.output;
}

TEST(Pause, WithoutTheSettingHostMemoryIsKeptUntilTheSystemNeedsIt)
{
  scratch_path const report{"lazy_report", ".json"};
  auto const r = run_pause("keep-host-memory", {{"RMM_TEST_PAUSED_REPORT", report.str()}});
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.value("first_resume_message"),
                       "of host memory kept for the next pause until the system "
                       "needs it (rmm-ctl release gives it back now)"))
    << r.output;
  std::ifstream file{report.str()};
  std::string const json{std::istreambuf_iterator<char>{file}, std::istreambuf_iterator<char>{}};
  EXPECT_TRUE(contains(json, "\"kept_host_held\":false")) << json;
  EXPECT_EQ(r.value("newer_contents_kept"), "1") << "the second pause copied the contents of its time";
  EXPECT_EQ(r.value("larger_contents_kept"), "1");
  EXPECT_TRUE(contains(r.value("release_output"), "of host memory kept for the next pause")) << r.output;
  EXPECT_FALSE(contains(r.value("release_again_output"), "host memory")) << "nothing left to give back: " << r.output;
  EXPECT_EQ(r.value("contents_kept_after_release"), "1") << r.output;
}

TEST(Pause, AQuestionIsAnsweredWhileAPauseIsUnderWay)
{
  if (rmm::test::current_backend() != rmm::test::backend::emulator) {
    GTEST_SKIP() << "needs the emulator's delayed streams to make a pause take seconds";
  }
  // Every stream operation waits 100 ms: the 64 MiB block's copy in 16 MiB pieces takes over a second.
  auto const r = run_pause("ask-while-pausing", {{"RMM_EMU_STREAM_DELAY_US", "100000"}});
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(r.value("pause_status"), "0") << r.output;
  EXPECT_EQ(r.value("list_pausing_status"), "0") << r.output;
  EXPECT_TRUE(contains(r.value("list_pausing_output"), "pausing")) << r.output;
  EXPECT_EQ(r.value("list_during_pause"), "1") << "the list was answered before the pause ended: " << r.output;
  EXPECT_LT(std::stoll(r.value("listed_ms")), std::stoll(r.value("paused_ms"))) << r.output;
  EXPECT_EQ(r.value("report_pausing_status"), "0") << r.output;
  EXPECT_EQ(r.value("report_during_pause"), "1") << r.output;
  // So is a release, which says why it cannot.
  EXPECT_EQ(r.value("release_during_pause"), "1") << r.output;
  EXPECT_NE(r.value("release_pausing_status"), "0") << r.output;
  EXPECT_TRUE(contains(r.value("release_pausing_output"), "paused")) << r.output;
  EXPECT_EQ(r.value("resume_status"), "0") << r.output;
  EXPECT_EQ(r.value("contents_kept"), "1") << r.output;
}

TEST(Pause, BadRequestsAndOtherUsersAreRefusedAndChangeNothing)
{
  auto const r = run_pause("bad-requests");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.value("oversized"), "error|the request is longer than 256 bytes")) << r.output;
  // Refused, the rest of the request read: the client finds the answer and the end, not a reset.
  EXPECT_TRUE(contains(r.value("oversized_strict"), "error|the request is longer than 256 bytes|end=eof")) << r.output;
  EXPECT_TRUE(contains(r.value("unknown"), "error|unknown request 'pause now'")) << r.output;
  EXPECT_TRUE(contains(r.value("two_requests"), "error|one request per connection")) << r.output;
  EXPECT_TRUE(contains(r.value("no_newline"), "error|the request ended before its newline")) << r.output;
  EXPECT_TRUE(contains(r.value("binary"), "error|unknown request '\?\?\?'")) << r.output;
  EXPECT_EQ(r.value("still_running"), "1") << "no bad request paused the process";
  EXPECT_EQ(r.value("contents_kept"), "1");
  if (::geteuid() != 0) { GTEST_SKIP() << "acting as another user needs root: run this test as root (CI does)"; }
  EXPECT_TRUE(contains(r.value("other_user"), "Permission denied")) << r.output;
  EXPECT_TRUE(contains(r.value("other_user_loosened"), "error|refused")) << r.output;
  EXPECT_TRUE(contains(r.value("other_user_strict"), "error|refused")) << r.output;
  EXPECT_TRUE(contains(r.value("other_user_strict"), "end=eof")) << r.output;
}

TEST(Pause, SlowAndIdleClientsDelayNobodyAndMeetTheirDeadlineOnTime)
{
  auto const r = run_pause("slow-clients");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(r.value("report_beside_idle_status"), "0") << r.output;
  EXPECT_LT(std::stoll(r.value("report_beside_idle_ms")), 2'000) << "20 idle connections held it up: " << r.output;
  EXPECT_TRUE(contains(r.value("trickle_answer"), "error|the request took longer than 5 s")) << r.output;
  auto const trickle_ms = std::stoll(r.value("trickle_answered_ms"));
  EXPECT_GE(trickle_ms, 4'500) << r.output;
  EXPECT_LT(trickle_ms, 6'500) << "the deadline is kept between bytes too: " << r.output;
  EXPECT_EQ(r.value("contents_kept"), "1");
}

TEST(Pause, ListRemovesOnlyTheSocketsOfProcessesThatAreGone)
{
  auto const r = run_pause("list-keeps-starting");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(r.value("list_while_starting_status"), "0") << r.output;
  EXPECT_EQ(r.value("starting_socket_kept"), "1") << "a process that binds and does not listen yet: " << r.output;
  EXPECT_EQ(r.value("stale_socket_removed"), "1") << r.output;
  EXPECT_EQ(r.value("no_starting_name_left"), "1") << r.output;
  EXPECT_TRUE(contains(r.value("list_while_starting_output"), "pause_client")) << r.output;
}

TEST(Pause, RmmCtlSaysSoWhenTheProcessExitsBeforeItAnswers)
{
  if (rmm::test::current_backend() != rmm::test::backend::emulator) {
    GTEST_SKIP() << "needs the emulator's delayed streams to make a pause take seconds";
  }
  auto const r = run_pause("exit-while-pausing", {{"RMM_EMU_STREAM_DELAY_US", "100000"}});
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(r.value("pause_of_exiting_status"), "1") << r.output;
  EXPECT_TRUE(contains(r.value("pause_of_exiting_output"), "exited before it answered")) << r.output;
}

TEST(Pause, APauseStuckBehindDeviceWorkGivesUpOrIsCancelledAndPausesNothing)
{
  auto const r = run_pause("stuck-device", {{"RMM_SHIM_PAUSE_DEVICE_WAIT", "2"}});
  ASSERT_EQ(r.status, 0) << r.output;
  // A resume cancels the pause that waits.
  EXPECT_EQ(r.value("resume_while_pausing"), "0") << r.output;
  EXPECT_TRUE(contains(r.value("resume_while_pausing_message"), "ended without pausing anything")) << r.output;
  EXPECT_LT(std::stoll(r.value("resume_while_pausing_ms")), 1'500) << r.output;
  EXPECT_EQ(r.value("cancelled_pause"), "-1") << r.output;
  EXPECT_TRUE(contains(r.value("cancelled_pause_message"), "a resume cancelled it")) << r.output;
  EXPECT_TRUE(contains(r.value("cancelled_pause_message"), "nothing is paused")) << r.output;
  // Left alone, it gives up after pause_device_wait.
  EXPECT_EQ(r.value("stuck_pause"), "-1") << r.output;
  EXPECT_TRUE(contains(r.value("stuck_pause_message"), "did not finish within 2 s (pause_device_wait)")) << r.output;
  EXPECT_TRUE(contains(r.value("stuck_pause_message"), "nothing is paused")) << r.output;
  auto const stuck_ms = std::stoll(r.value("stuck_pause_ms"));
  EXPECT_GE(stuck_ms, 1'900) << r.output;
  EXPECT_LT(stuck_ms, 4'000) << r.output;
  EXPECT_EQ(r.value("allocation_during_stuck_pause"), "cudaSuccess") << "served once the pause gave up: " << r.output;
  EXPECT_EQ(r.value("contents_kept"), "1") << r.output;
}

TEST(Pause, WhereAnotherUserMadeTheTmpDirectoryFirstTheHomeDirectoryServes)
{
  if (::geteuid() != 0) { GTEST_SKIP() << "acting as two other users needs root: run this test as root (CI does)"; }
  // User 65533 has no runtime directory, and user 65532 made /tmp/rmm-65533 first.
  std::string const squatted = "/tmp/rmm-65533";
  std::filesystem::remove_all(squatted);
  ASSERT_EQ(::mkdir(squatted.c_str(), 0700), 0);
  ASSERT_EQ(::chown(squatted.c_str(), 65532, 65532), 0);
  auto const home = ::testing::TempDir() + "pause_test_home_" + std::to_string(::getpid());
  std::filesystem::remove_all(home);
  ASSERT_EQ(::mkdir(home.c_str(), 0755), 0);
  ASSERT_EQ(::chown(home.c_str(), 65533, 65533), 0);
  // rmm-ctl where user 65533 can run it, whatever the build tree's modes.
  auto const ctl = ::testing::TempDir() + "rmm-ctl-" + std::to_string(::getpid());
  ASSERT_EQ(std::system(("cp " + std::string{RMM_CTL} + " " + ctl + " && chmod 755 " + ctl).c_str()), 0);
  auto const r =
    run_program(RMM_PAUSE_CLIENT, "other-user-from-outside", {{"RMM_TEST_CTL", ctl}, {"RMM_TEST_HOME", home}});
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(r.value("pause_status"), "0") << r.output;
  EXPECT_EQ(r.value("memory_given_back"), "1") << r.output;
  EXPECT_EQ(r.value("resume_status"), "0") << r.output;
  EXPECT_EQ(r.value("contents_kept"), "1") << r.output;
  EXPECT_TRUE(contains(r.output, "the control directory /tmp/rmm-65533 belongs to user 65532")) << r.output;
  EXPECT_TRUE(contains(r.output, "listening for rmm-ctl in " + home + "/.cache/rmm instead")) << r.output;
  EXPECT_TRUE(contains(r.value("list_running_output"), "pause_client")) << "rmm-ctl looked there too: " << r.output;
  for (auto const& path : {squatted, home, ctl}) { std::filesystem::remove_all(path); }
}

TEST(Pause, WithTheControlSwitchedOffThereIsNoSocket)
{
  auto const r = run_pause("from-outside", {{"RMM_SHIM_CONTROL", "false"}});
  EXPECT_EQ(r.value("pause_status"), "1");
  EXPECT_TRUE(contains(r.value("pause_output"), "has no control socket")) << r.output;
  EXPECT_TRUE(contains(r.value("list_running_output"), "no process")) << r.output;
}

}  // namespace
}  // namespace rmm::test
