// SPDX-License-Identifier: Apache-2.0
// Fidelity: the probe that recorded the H200's behaviour (probe/h200_reference.txt) must report
// the same error code for every call when it runs on the emulator.
#include "emu_test.hpp"

#include <fstream>
#include <map>
#include <sstream>
#include <vector>

namespace {

// Lines the emulator deliberately answers differently, with the reason. Keep this short.
std::map<std::string, std::string> const kAllowedDifferences = {
  // (none today)
};

std::vector<std::string> arrow_lines(std::string const& text)
{
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.find("->") != std::string::npos) { out.push_back(line); }
  }
  return out;
}

TEST(EmulatorFidelity, ProbeMatchesTheH200Reference)
{
  std::ifstream ref_file(RMM_EMU_REFERENCE);
  ASSERT_TRUE(ref_file.good()) << RMM_EMU_REFERENCE;
  std::stringstream ref;
  ref << ref_file.rdbuf();
  auto const r = emu::run_child({emu::build_path("cuda_semantics_probe")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  auto const expected = arrow_lines(ref.str());
  auto const actual   = arrow_lines(r.out);
  ASSERT_EQ(actual.size(), expected.size()) << r.out;
  for (std::size_t i = 0; i < expected.size(); ++i) {
    if (actual[i] == expected[i]) { continue; }
    auto const allowed = kAllowedDifferences.find(expected[i]);
    EXPECT_NE(allowed, kAllowedDifferences.end()) << "H200:     " << expected[i] << "\nemulator: " << actual[i];
  }
}

}  // namespace
