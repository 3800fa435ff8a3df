// SPDX-License-Identifier: Apache-2.0
// Every class of mistake gives one line naming the file, line and column, what was found and
// what is expected.

#include "config_test_helpers.hpp"

#include <gtest/gtest.h>

#include <string>

namespace {

using namespace rmm::config;
using rmm::config::test::load_error;

/// The error of `toml` is at line:column, its found part contains `found` and its expected part
/// contains `expected`; the message is one line in the FILE:LINE:COLUMN form.
void expect_error(std::string_view toml,
                  std::uint32_t line,
                  std::uint32_t column,
                  std::string_view found,
                  std::string_view expected)
{
  auto const error = load_error(toml);
  SCOPED_TRACE(error.what());
  EXPECT_EQ(error.location().file, "test.toml");
  EXPECT_EQ(error.location().line, line);
  EXPECT_EQ(error.location().column, column);
  EXPECT_NE(error.found().find(found), std::string::npos);
  EXPECT_NE(error.expected().find(expected), std::string::npos);
  std::string const what = error.what();
  EXPECT_EQ(what.find('\n'), std::string::npos);
  EXPECT_EQ(what.rfind("test.toml:" + std::to_string(line) + ":" + std::to_string(column) + ": found ", 0), 0U);
  EXPECT_NE(what.find(", expected "), std::string::npos);
}

// ---- syntax ------------------------------------------------------------------------------------

TEST(ConfigErrors, SyntaxErrorsCarryThePosition)
{
  expect_error("[[resource]\ntype = \"cuda\"\n", 1, 12, "TOML syntax error while parsing table header: '\\n'", "']'");
  expect_error("[[resource]]\ntype = \"pool\"\ninitial_size = 12MiB\n", 3, 18, "TOML syntax error", "");
  expect_error("[[resource]]\ntype = \"cuda\n", 2, 13, "TOML syntax error", "");
  expect_error("[[resource]]\ntype = \"cuda\"\ntype = \"pool\"\n", 3, 8,
               "TOML syntax error while parsing key-value pair: cannot redefine existing string 'type'", "valid TOML");
}

// ---- unknown keys and types -------------------------------------------------------------------

TEST(ConfigErrors, UnknownKeyInALayer)
{
  expect_error("[[resource]]\ntype = \"pool\"\nintial_size = \"1GiB\"\n[[resource]]\ntype = \"cuda\"\n", 3, 1,
               "the unknown key \"intial_size\" in a \"pool\" layer", "did you mean \"initial_size\"?");
  expect_error("[[resource]]\ntype = \"cuda\"\nsize = 5\n", 3, 1, "\"size\"", "\"cuda\" has no settings");
}

TEST(ConfigErrors, UnknownTopLevelKey)
{
  expect_error("[[resources]]\ntype = \"cuda\"\n", 1, 3, "the unknown key \"resources\" at the top level",
               "did you mean \"resource\"?");
}

TEST(ConfigErrors, UnknownType)
{
  expect_error("[[resource]]\ntype = \"pol\"\n", 2, 8, "the unknown type \"pol\"", "did you mean \"pool\"?");
  expect_error("[[resource]]\nsize = 1\n", 1, 1, "without a type", "type = \"<name>\"");
}

TEST(ConfigErrors, TypesThatNeedCode)
{
  expect_error("[[resource]]\ntype = \"callback\"\n", 2, 8, "type \"callback\"", "can only be built in code");
  expect_error("[[resource]]\ntype = \"failure_callback\"\n[[resource]]\ntype = \"cuda\"\n", 2, 8,
               "type \"failure_callback\"", "can only be built in code");
  expect_error("[[resource]]\ntype = \"cuda_async_view\"\n", 2, 8, "type \"cuda_async_view\"", "build it in code");
}

TEST(ConfigErrors, ShimTable)
{
  expect_error("[shim]\nverbos = true\n", 2, 1, "the unknown key \"verbos\" in [shim]", "did you mean \"verbose\"?");
  expect_error("[shim]\nenabled = \"no\"\n", 2, 11, "enabled = \"no\" (a string)", "true or false");
  expect_error("shim = 1\n", 1, 1, "\"shim\" as an integer", "a [shim] table");
}

// ---- wrong value types ------------------------------------------------------------------------

TEST(ConfigErrors, WrongValueTypes)
{
  expect_error("[[resource]]\ntype = \"pool\"\ninitial_size = true\n", 3, 16, "initial_size = true (a boolean)",
               "a size");
  expect_error("[[resource]]\ntype = \"pool\"\ninitial_size = 1.5e9\n", 3, 16, "(a floating-point number)", "a size");
  expect_error("[[resource]]\ntype = 5\n", 2, 8, "type = 5 (an integer)", "the type as a string");
  expect_error("[[resource]]\ntype = \"logging\"\nfile = \"a.csv\"\nauto_flush = \"yes\"\n", 4, 14,
               "auto_flush = \"yes\" (a string)", "true or false");
  expect_error("[resource]\ntype = \"cuda\"\n", 1, 2, "\"resource\" as a table", "an array of tables");
  expect_error("resource = [1]\n", 1, 13, "an integer in the resource list", "a table per layer");
  expect_error("[[resource]]\ntype = \"binning\"\nbins = 256\n", 3, 8, "bins = 256 (an integer)", "a list of sizes");
}

// ---- impossible values ------------------------------------------------------------------------

TEST(ConfigErrors, NegativeAndZeroSizes)
{
  expect_error("[[resource]]\ntype = \"pool\"\ninitial_size = -1\n", 3, 16, "initial_size = -1", "cannot be negative");
  expect_error("[[resource]]\ntype = \"pool\"\nmaximum_size = 0\n", 3, 16, "maximum_size = 0", "above 0 bytes");
  expect_error("[[resource]]\ntype = \"arena\"\narena_size = \"0MiB\"\n", 3, 14, "arena_size = \"0MiB\"",
               "above 0 bytes");
  expect_error("[[resource]]\ntype = \"limiting\"\nlimit = \"-2GiB\"\n", 3, 9, "limit = \"-2GiB\"",
               "cannot be negative");
}

TEST(ConfigErrors, MaximumBelowInitial)
{
  expect_error(
    "[[resource]]\ntype = \"pool\"\ninitial_size = \"2GiB\"\nmaximum_size = \"1GiB\"\n[[resource]]\ntype = "
    "\"cuda\"\n",
    4, 16, "maximum_size = \"1GiB\", below initial_size = \"2GiB\" (test.toml:3:16)", "at least initial_size");
  expect_error(
    "[[resource]]\ntype = \"pool\"\ninitial_size = \"60%\"\nmaximum_size = \"50%\"\n[[resource]]\ntype = "
    "\"cuda\"\n",
    4, 16, "maximum_size = \"50%\"", "at least initial_size");
}

TEST(ConfigErrors, PercentageOver100)
{
  expect_error("[[resource]]\ntype = \"pool\"\ninitial_size = \"150%\"\n", 3, 16, "initial_size = \"150%\"",
               "at most 100%");
  expect_error("[[resource]]\ntype = \"fixed_size\"\nblock_size = \"10%\"\n", 3, 14, "block_size = \"10%\"",
               "not accepted here");
}

TEST(ConfigErrors, AmbiguousUnit)
{
  expect_error("[[resource]]\ntype = \"pool\"\ninitial_size = \"8GB\"\n", 3, 16, "initial_size = \"8GB\"", "GiB");
}

TEST(ConfigErrors, BinListOutOfOrder)
{
  expect_error("[[resource]]\ntype = \"binning\"\nbins = [256, \"8KiB\", 4096]\n", 3, 22,
               "\"4KiB\" after \"8KiB\" in bins", "ascending order");
  expect_error("[[resource]]\ntype = \"binning\"\nbins = [256, 256]\n", 3, 14, "256 after 256", "each listed once");
  expect_error("[[resource]]\ntype = \"binning\"\nbins = []\n", 3, 8, "an empty list", "a list of sizes");
  expect_error("[[resource]]\ntype = \"binning\"\nbins = [256, 0]\n", 3, 14, "bins = 0", "above 0");
  expect_error("[[resource]]\ntype = \"binning\"\nbins = [256, true]\n", 3, 14, "true in bins", "a list of sizes");
}

TEST(ConfigErrors, BinningExponents)
{
  expect_error(
    "[[resource]]\ntype = \"binning\"\nmin_size_exponent = 12\nmax_size_exponent = 10\n[[resource]]\ntype = "
    "\"cuda\"\n",
    4, 21, "min_size_exponent = 12 above max_size_exponent = 10", "min_size_exponent <= max_size_exponent");
  expect_error("[[resource]]\ntype = \"binning\"\nmin_size_exponent = 4\n", 3, 21, "min_size_exponent = 4",
               "an integer from 8 to 40");
  expect_error(
    "[[resource]]\ntype = \"binning\"\nbins = [256]\nmax_size_exponent = 10\n[[resource]]\ntype = "
    "\"cuda\"\n",
    4, 21, "max_size_exponent together with bins (test.toml:3:8)", "either bins");
}

TEST(ConfigErrors, StackShape)
{
  expect_error("[[resource]]\ntype = \"cuda\"\n[[resource]]\ntype = \"statistics\"\n", 2, 8,
               "resource \"cuda\" above 1 more layer(s)", "as the last [[resource]]");
  expect_error("[[resource]]\ntype = \"statistics\"\n", 2, 8,
               "adaptor \"statistics\" at the bottom of the stack, with no upstream", "\"cuda\"");
  expect_error("[[resource]]\ntype = \"pool\"\n", 2, 8, "sub-allocator \"pool\" at the bottom", "\"cuda_async\"");
  expect_error("resource = []\n", 1, 1, "an empty resource list", "at least one [[resource]]");
}

TEST(ConfigErrors, OtherImpossibleValues)
{
  expect_error("[[resource]]\ntype = \"aligned\"\nalignment = 1000\n", 3, 13, "alignment = 1000", "a power of two");
  expect_error("[[resource]]\ntype = \"limiting\"\n[[resource]]\ntype = \"cuda\"\n", 2, 8,
               "a limiting layer without limit", "RMM_LIMITING_LIMIT");
  expect_error("[[resource]]\ntype = \"fixed_size\"\nblocks_to_preallocate = 0\n", 3, 25, "blocks_to_preallocate = 0",
               "an integer from 1 to");
  expect_error("[[resource]]\ntype = \"cuda_async\"\nexport_handle_type = \"posix\"\n", 3, 22,
               "export_handle_type = \"posix\"", "one of \"none\", \"posix_file_descriptor\", \"fabric\"");
  expect_error("[[resource]]\ntype = \"cuda_async\"\nexport_handle_type = \"fabrik\"\n", 3, 22,
               "export_handle_type = \"fabrik\"", "did you mean \"fabric\"?");
  expect_error("[[resource]]\ntype = \"logging\"\nfile = \"log-%x.csv\"\n", 3, 8,
               "file = \"log-%x.csv\" with the unknown placeholder '%x'", "%p stands for the process id");
  expect_error("[[resource]]\ntype = \"logging\"\nfile = \"\"\n", 3, 8, "an empty file name", "a file name");
}

TEST(ConfigErrors, ANulCharacterInAFileName)
{
  // The file opened would be named by the text before the NUL: "a", not "a\0b".
  expect_error("[[resource]]\ntype = \"logging\"\nfile = \"a\\u0000b.csv\"\n[[resource]]\ntype = \"cuda\"\n", 3, 8,
               "file = \"a\\x00b.csv\" with a NUL character", "a file name");
}

TEST(ConfigErrors, SizesNoAllocationCanHave)
{
  // 2^64 - 1 bytes: wraps to 0 when rounded to 256 bytes. The error is where the value is.
  expect_error(
    "[[resource]]\ntype = \"fixed_size\"\nblock_size = \"18446744073709551615\"\n[[resource]]\ntype = "
    "\"cuda\"\n",
    3, 14, "block_size = \"18446744073709551615\"", "a size below 8 EiB");
  expect_error("[[resource]]\ntype = \"limiting\"\nlimit = \"9000000TiB\"\n[[resource]]\ntype = \"cuda\"\n", 3, 9,
               "limit = \"9000000TiB\"", "a size below 8 EiB");
  expect_error(
    "[[resource]]\ntype = \"aligned\"\nalignment = 4096\nalignment_threshold = \"16777215TiB\"\n"
    "[[resource]]\ntype = \"cuda\"\n",
    4, 23, "alignment_threshold = \"16777215TiB\"", "a size below 8 EiB");
  // The largest TOML integer, 2^63 - 1, is the largest size there is.
  EXPECT_NO_THROW(
    (void)load_string("[[resource]]\ntype = \"aligned\"\nalignment = 256\nalignment_threshold = "
                      "9223372036854775807\n[[resource]]\ntype = \"cuda\"\n",
                      "test.toml", environment{}));
}

TEST(ConfigErrors, MaximumBelowTheInitialSizeRoundedUp)
{
  // The pool rounds its initial size up to a multiple of 256 bytes: 1000 becomes 1024.
  expect_error(
    "[[resource]]\ntype = \"pool\"\ninitial_size = 1000\nmaximum_size = 1000\n[[resource]]\ntype = "
    "\"cuda\"\n",
    4, 16, "maximum_size = 1000, below initial_size = 1000 (test.toml:3:16) rounded up to 1024 B",
    "at least initial_size");
  EXPECT_NO_THROW((void)load_string(
    "[[resource]]\ntype = \"pool\"\ninitial_size = 1000\nmaximum_size = 1024\n[[resource]]\ntype = \"cuda\"\n",
    "test.toml", environment{}));
}

TEST(ConfigErrors, StackDepthIsCapped)
{
  auto const stack_of = [](std::size_t statistics_layers) {
    std::string toml;
    for (std::size_t i = 0; i < statistics_layers; ++i) { toml += "[[resource]]\ntype = \"statistics\"\n"; }
    return toml + "[[resource]]\ntype = \"cuda\"\n";
  };
  constexpr std::size_t cap = 64;
  static_assert(max_stack_depth == cap, "docs/configuration.md documents 64 layers");
  EXPECT_NO_THROW((void)load_string(stack_of(cap - 1), "test.toml", environment{}));
  // The layer past the cap is named: its type is on line 2 * 65.
  expect_error(stack_of(cap), 130, 8, "a stack of 65 layers", "at most 64 layers");
  expect_error(stack_of(30000), 130, 8, "a stack of 30001 layers", "at most 64 layers");
}

TEST(ConfigErrors, ControlCharactersStayOnOneLine)
{
  auto const error = load_error("[[resource]]\ntype = \"po\\nol\"\n");
  EXPECT_EQ(std::string{error.what()}.find('\n'), std::string::npos) << error.what();
  EXPECT_NE(error.found().find("\"po\\nol\""), std::string::npos) << error.what();
}

TEST(ConfigErrors, MissingFile)
{
  try {
    (void)load_file("/nonexistent/rmm.toml", environment{});
    FAIL() << "a missing file was accepted";
  } catch (config_error const& error) {
    EXPECT_EQ(std::string{error.what()},
              "/nonexistent/rmm.toml: found no readable file (No such file or directory), expected the path of a "
              "readable TOML configuration file");
  }
}

}  // namespace
