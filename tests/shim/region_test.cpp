// SPDX-License-Identifier: Apache-2.0
// Tagged regions: the memory a thread allocates inside rmm_shim_region_begin/_end belongs to a tag
// that is paused and resumed on its own, from inside the program and with rmm-ctl, while untagged
// memory and other tags run on; each tag keeps or discards its contents as its region or the pause
// says, and every wrong use is refused with its reason.

#include "shim_runner.hpp"

#include <scratch_path.hpp>

#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

namespace rmm::test {
namespace {

outcome run_regions(std::string const& scenario, std::map<std::string, std::string> environment = {})
{
  environment.emplace("XDG_RUNTIME_DIR", runtime_directory());
  environment.emplace("RMM_TEST_CTL", RMM_CTL);
  return run_program(RMM_REGION_CLIENT, scenario, std::move(environment));
}

bool contains(std::string const& text, std::string const& part) { return text.find(part) != std::string::npos; }

TEST(Regions, ATagPausesAloneWhileTheRestRunsOn)
{
  scratch_path const paused_report{"region_report", ".json"};
  auto const r = run_regions("tags", {{"RMM_TEST_PAUSED_REPORT", paused_report.str()}});
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(r.value("current_outside"), "none");
  EXPECT_EQ(r.value("current_nested"), "kv_cache") << "the innermost region tags";
  EXPECT_EQ(r.value("end_none"), "-1");
  EXPECT_TRUE(contains(r.value("end_none_message"), "no region is in place")) << r.output;

  EXPECT_EQ(r.value("pause_kv"), "0") << r.output;
  EXPECT_TRUE(contains(r.value("pause_kv_message"), "paused tag 'kv_cache'")) << r.output;
  EXPECT_TRUE(contains(r.value("pause_kv_message"), "discarded")) << "its region asked for it: " << r.output;
  EXPECT_EQ(r.value("given_back"), "1") << "the tag's memory went back to the device: " << r.output;
  EXPECT_TRUE(contains(r.value("pause_kv_again_message"), "tag 'kv_cache' is paused already")) << r.output;
  EXPECT_TRUE(contains(r.value("pause_unknown_message"),
                       "no region of this process is tagged 'nope' (its tags: 'weights', 'kv_cache')"))
    << r.output;
  EXPECT_TRUE(contains(r.value("pause_bad_name_message"), "characters other than")) << r.output;
  EXPECT_TRUE(contains(r.value("resume_weights_message"), "tag 'weights' is not paused")) << r.output;

  EXPECT_EQ(r.value("untagged_while_paused"), "cudaSuccess") << "untagged memory runs on";
  EXPECT_EQ(r.value("untagged_holds"), "1");
  EXPECT_EQ(r.value("tagged_allocated_while_paused"), "0") << "an allocation under the paused tag waits";
  EXPECT_EQ(r.value("report_while_paused"), "0");
  EXPECT_EQ(r.value("resume_kv"), "0") << r.output;
  EXPECT_TRUE(contains(r.value("resume_kv_message"), "resumed tag 'kv_cache'")) << r.output;
  EXPECT_TRUE(contains(r.value("resume_kv_message"), "1 free made while paused applied")) << r.output;
  EXPECT_EQ(r.value("tagged_allocated_after_resume"), "1");
  EXPECT_TRUE(contains(r.value("resume_kv_again_message"), "not paused")) << r.output;
  EXPECT_EQ(r.value("weights_hold"), "1") << "another tag's contents stay";

  EXPECT_TRUE(contains(r.value("pause_kv_keep_message"), "kept in host memory")) << r.output;
  EXPECT_EQ(r.value("kv_kept_holds"), "1") << "RMM_SHIM_PAUSE_KEEP keeps a discarding tag: " << r.output;
  EXPECT_EQ(r.value("pause_weights"), "0") << r.output;
  EXPECT_EQ(r.value("pause_all"), "0") << "the rest of the process pauses beside a paused tag: " << r.output;
  EXPECT_TRUE(contains(r.value("resume_tag_while_all_message"), "resume the process")) << r.output;
  EXPECT_EQ(r.value("resume_all"), "0") << r.output;
  EXPECT_EQ(r.value("after_all_weights_hold"), "1") << r.output;
  EXPECT_EQ(r.value("after_all_untagged_holds"), "1") << r.output;
  EXPECT_EQ(r.reported("allocations"), r.reported("frees")) << r.report;
  EXPECT_EQ(r.reported("live_bytes"), 0) << r.report;

  // While paused, the report says what is mapped now and what the pause holds.
  std::ifstream file{paused_report.str()};
  std::stringstream paused;
  paused << file.rdbuf();
  EXPECT_TRUE(contains(paused.str(),
                       "\"tag\":\"kv_cache\",\"live_bytes\":71303168,\"reserved_bytes\":0,"
                       "\"paused\":true,\"discards\":true,\"pauses\":1"))
    << paused.str();
  EXPECT_TRUE(contains(paused.str(), "\"discarded\":true,\"held_frees\":1")) << paused.str();
  EXPECT_TRUE(contains(paused.str(), "\"tag\":\"weights\"")) << paused.str();
  // Asked while the program runs, the report says what the driver holds for CUDA graphs (none here).
  EXPECT_TRUE(contains(paused.str(), "\"graph_reserved_bytes\":0,\"graph_used_bytes\":0")) << paused.str();
  // At exit, each tag's pauses: kv_cache alone twice and with the process, weights alone (then
  // with the process it was skipped, being paused already).
  EXPECT_TRUE(contains(r.output, "tag 'kv_cache': ")) << r.output;
}

TEST(Regions, WrongUsesAreRefusedAndAProcessWideRegionCoversOtherThreads)
{
  auto const r = run_regions("flags");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.value("begin_null_message"), "a tag needs a name")) << r.output;
  EXPECT_TRUE(contains(r.value("begin_bad_flags_message"), "unknown flags")) << r.output;
  EXPECT_TRUE(contains(r.value("pause_bad_flags_message"), "contradict")) << r.output;
  EXPECT_EQ(r.value("begin_all"), "0") << r.output;
  EXPECT_TRUE(contains(r.value("begin_all_again_message"), "in place already")) << r.output;
  EXPECT_EQ(r.value("worker_tag"), "loader") << "a thread in no region of its own";
  EXPECT_EQ(r.value("current_after_all"), "none");
  EXPECT_EQ(r.value("tags_registered"), "15");
  EXPECT_TRUE(contains(r.value("table_full_message"), "15 tags already")) << r.output;
  EXPECT_EQ(r.value("ctl_pause_status"), "0") << r.output;
  EXPECT_TRUE(contains(r.value("ctl_pause_output"), "paused tag 'loader'")) << r.output;
  EXPECT_TRUE(contains(r.value("ctl_pause_output"), "3.00 MiB of contents discarded")) << r.output;
  EXPECT_EQ(r.value("ctl_pause_unknown_status"), "1") << r.output;
  EXPECT_TRUE(contains(r.value("ctl_pause_unknown_output"), "no region of this process is tagged 'nope'")) << r.output;
  EXPECT_EQ(r.value("ctl_bad_option_status"), "64") << r.output;
  EXPECT_TRUE(contains(r.value("ctl_bad_option_output"), "--tag needs the tag's name")) << r.output;
  EXPECT_TRUE(contains(r.value("ctl_report_output"), "\"tag\":\"loader\",\"live_bytes\":3145728,\"reserved_bytes\":0"))
    << r.output;
  EXPECT_EQ(r.value("ctl_resume_status"), "0") << r.output;
  EXPECT_TRUE(contains(r.value("ctl_resume_output"), "resumed tag 'loader'")) << r.output;
}

TEST(Regions, AResumeTakesBackWhatTheOtherPhaseFreed)
{
  auto const r = run_regions("resume-after-other-phase", {{"RMM_EMU_DEVICE_MEMORY", "256MiB"}});
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(r.value("pause"), "0") << r.output;
  EXPECT_EQ(r.value("other_phase"), "cudaSuccess") << "the paused tag's memory served the other phase";
  EXPECT_EQ(r.value("resume"), "0") << "the untagged stack's free memory went back first: " << r.output;
  EXPECT_EQ(r.value("kv_holds"), "1") << r.output;
}

TEST(Regions, ADeviceResetEndsATagsPause)
{
  auto const r = run_regions("reset-while-paused", {{"RMM_SHIM_PAUSE_TIMEOUT", "2"}});
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(r.value("pause"), "0") << r.output;
  EXPECT_EQ(r.value("allocated_after_reset"), "cudaSuccess") << "the tag's allocations wait for nothing: " << r.output;
  EXPECT_TRUE(contains(r.value("resume_after_reset_message"), "tag 'kv_cache' is not paused")) << r.output;
}

}  // namespace
}  // namespace rmm::test
