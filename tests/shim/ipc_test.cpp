// SPDX-License-Identifier: Apache-2.0
// CUDA IPC between processes under the shim (ipc_client.cpp): an open and a close between two
// processes, and what the rest of the machine can do to an exporter: descriptors attached to
// requests, idle connections, requests of unknown kinds, closes of a process that never opened,
// importers that die, an exporter that runs out of descriptors, a forged exporter, and another
// process taking an exited exporter's socket name. On the emulator (whose shareable physical
// memory is shared between processes as a GPU's is) and on a GPU alike.

#include "shim_runner.hpp"

#include <cuda.h>

#include <gtest/gtest.h>

#include <unistd.h>

#include <string>

namespace rmm::test {
namespace {

/// Control sockets in the test's own directory: exporters that exit without cleaning up (as some
/// here do) leave theirs there.
outcome run_ipc(std::string const& scenario)
{
  return run_program(RMM_IPC_CLIENT, scenario, {{"XDG_RUNTIME_DIR", runtime_directory()}});
}

bool contains(std::string const& text, std::string const& part) { return text.find(part) != std::string::npos; }

long long number(outcome const& r, std::string const& key)
{
  auto const text = r.value(key);
  return text.empty() ? -1 : std::stoll(text);
}

TEST(Ipc, AnImporterSeesTheBlockAndTheExporterSeesItsWrites)
{
  auto const r = run_ipc("open-close");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(r.value("opened"), "CUDA_SUCCESS") << r.output;
  EXPECT_EQ(r.value("importer_status"), "0") << r.output;
  EXPECT_EQ(r.value("importer_saw_pattern"), "1") << r.output;
  EXPECT_EQ(r.value("exporter_sees_importer_writes"), "1") << r.output;
  EXPECT_EQ(r.value("tail_untouched"), "1") << r.output;
  EXPECT_EQ(r.value("open_in_exporter"), "CUDA_ERROR_INVALID_CONTEXT") << r.output;
  EXPECT_EQ(r.value("pause_after_close"), "0") << "the close reached the exporter: " << r.output;
}

TEST(Ipc, AnImporterThatDiesWithTheBlockOpenLetsItGo)
{
  auto const r = run_ipc("importer-dies");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(r.value("opened"), "CUDA_SUCCESS") << r.output;
  EXPECT_EQ(r.value("pause_after_importer_died"), "0") << r.output;
  EXPECT_LT(number(r, "waited_ms"), 2'000) << r.output;
}

TEST(Ipc, OnlyTheProcessThatOpenedCanClose)
{
  auto const r = run_ipc("forged-close");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(r.value("forged_close_status"), std::to_string(CUDA_ERROR_INVALID_VALUE)) << r.output;
  EXPECT_EQ(r.value("pause_while_open_elsewhere"), "-1") << "the block stays exported: " << r.output;
  EXPECT_TRUE(contains(r.value("pause_while_open_message"), "exported through CUDA IPC")) << r.output;
  EXPECT_EQ(r.value("holder_status"), "0") << r.output;
  EXPECT_EQ(r.value("pause_after_holder_exited"), "0") << r.output;
}

TEST(Ipc, DescriptorsAttachedToRequestsNeverStayInTheExporter)
{
  auto const r = run_ipc("stray-descriptors");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(r.value("answered_requests"), "300") << "each bad request was answered: " << r.output;
  EXPECT_EQ(r.value("descriptors_added_by_export"), "1") << "the export's socket: " << r.output;
  EXPECT_EQ(r.value("descriptors_added_by_requests"), "0") << r.output;
}

TEST(Ipc, IdleConnectionsDelayNobodyAndNoCloseIsLost)
{
  auto const r = run_ipc("idle-connections");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_GE(number(r, "idle_connections"), 64) << "more than the backlog: " << r.output;
  EXPECT_EQ(r.value("opened"), "CUDA_SUCCESS") << r.output;
  EXPECT_LT(number(r, "import_ms"), 2'000) << r.output;
  EXPECT_EQ(r.value("pause_after_close"), "0") << "the close reached the exporter: " << r.output;
}

TEST(Ipc, ARequestOfAnUnknownKindIsRefusedAndOpensNothing)
{
  auto const r = run_ipc("unknown-kind");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(r.value("unknown_kind_status"), std::to_string(CUDA_ERROR_INVALID_VALUE)) << r.output;
  EXPECT_EQ(r.value("unknown_kind_answer_went_on"), "0") << "no piece, no descriptor: " << r.output;
  EXPECT_EQ(r.value("pause_after_free"), "0") << "nothing holds the block: " << r.output;
}

TEST(Ipc, AnExporterOutOfDescriptorsServesAgainOnceItHasSome)
{
  auto const r = run_ipc("out-of-descriptors");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_GT(number(r, "flood_connections"), 0) << r.output;
  EXPECT_EQ(r.value("opened_after_running_out"), "CUDA_SUCCESS") << r.output;
  EXPECT_EQ(r.value("importer_status"), "0") << r.output;
}

TEST(Ipc, AForgedExportersCountsAreRefusedBeforeAnythingIsAllocated)
{
  auto const r = run_ipc("forged-exporter");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(r.value("forged_open"), "CUDA_ERROR_INVALID_VALUE") << r.output;
  EXPECT_LT(number(r, "forged_open_ms"), 1'000) << r.output;
  EXPECT_LT(number(r, "rss_growth_mib"), 64) << r.output;
  EXPECT_TRUE(contains(r.output, "names 100000000 pieces")) << r.output;
}

TEST(Ipc, AnotherProcessHoldingAnExitedExportersNameNeverGetsTheToken)
{
  auto const r = run_ipc("squatter");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(r.value("exporter_status"), "0") << r.output;
  EXPECT_EQ(r.value("squatted_open"), "CUDA_ERROR_INVALID_VALUE") << r.output;
  EXPECT_EQ(r.value("taker_read_bytes"), "0") << "the importer sent nothing to it: " << r.output;
  EXPECT_TRUE(contains(r.output, "its socket is held by process")) << r.output;
  // As root (CI), the taker is another user; otherwise a process of this user, which the check of
  // the listener's process id refuses all the same.
  EXPECT_EQ(r.value("taker_user"), ::geteuid() == 0 ? "65534" : std::to_string(::geteuid())) << r.output;
}

}  // namespace
}  // namespace rmm::test
