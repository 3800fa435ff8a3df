// SPDX-License-Identifier: Apache-2.0
// The runtime's driver lookups, as an LD_PRELOADed dlsym override (the shim's way in) sees them.
#include "emu_test.hpp"

#include <unistd.h>

#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace {

struct Lookup {
  std::string kind;  // "dlsym" or "getproc"
  std::string name;
  long version        = 0;
  unsigned long flags = 0;
  int result          = -1;
  std::string fn;
};

std::vector<Lookup> read_log(std::string const& path)
{
  std::vector<Lookup> out;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    std::istringstream ss(line);
    Lookup l;
    ss >> l.kind >> l.name >> l.version >> l.flags >> l.result >> l.fn;
    out.push_back(l);
  }
  return out;
}

TEST(EmulatorPreload, RuntimeLookupsAreVisibleToADlsymOverride)
{
  std::string const log = "/tmp/rmm_emu_lookups_" + std::to_string(::getpid()) + ".log";
  ::unlink(log.c_str());
  auto const r =
    emu::run_child({emu::child_path(), "lookup"}, {"LD_PRELOAD=" + emu::build_path("liblookup_logger.so"),
                                                   "EMU_LOOKUP_LOG=" + log, "ASAN_OPTIONS=verify_asan_link_order=0"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(r.out, "lookup cudaSuccess\n");
  auto const lookups = read_log(log);
  ::unlink(log.c_str());
  ASSERT_FALSE(lookups.empty());
  // The resolver is found with a plain dlsym, first of all.
  EXPECT_EQ(lookups.front().kind, "dlsym");
  EXPECT_EQ(lookups.front().name, "cuGetProcAddress_v2");
  EXPECT_EQ(lookups.front().version, 1);  // found
  // Then the runtime asks the resolver for itself (the wrapped resolver keeps seeing lookups).
  std::map<std::pair<std::string, unsigned long>, Lookup> by_name;
  int getprocs = 0;
  for (auto const& l : lookups) {
    if (l.kind != "getproc") { continue; }
    ++getprocs;
    by_name[{l.name, l.flags}] = l;
  }
  auto const get = [&](std::string const& name, unsigned long flags) { return by_name[{name, flags}]; };
  auto const has = [&](std::string const& name, unsigned long flags) { return by_name.contains({name, flags}); };
  ASSERT_TRUE(has("cuGetProcAddress", 0));
  EXPECT_EQ(get("cuGetProcAddress", 0).version, 12000);
  EXPECT_GT(getprocs, 50);
  // Every stream-ordered allocation entry point twice, each flavour its own function.
  for (char const* name : {"cuMemAllocAsync", "cuMemFreeAsync", "cuMemAllocFromPoolAsync"}) {
    ASSERT_TRUE(has(name, 0)) << name;
    ASSERT_TRUE(has(name, 2)) << name;
    EXPECT_EQ(get(name, 0).version, 11020);
    EXPECT_EQ(get(name, 2).version, 11020);
    EXPECT_EQ(get(name, 2).result, 0);
    EXPECT_NE(get(name, 0).fn, get(name, 2).fn) << name;
  }
  EXPECT_TRUE(has("cuMemAlloc", 0));
  EXPECT_EQ(get("cuMemAlloc", 0).version, 3020);
  EXPECT_TRUE(has("cuMemFree", 0));
  EXPECT_TRUE(has("cuMemcpy", 2));
  // No lookup failed.
  for (auto const& l : lookups) {
    if (l.kind == "getproc") { EXPECT_EQ(l.result, 0) << l.name; }
  }
}

}  // namespace
