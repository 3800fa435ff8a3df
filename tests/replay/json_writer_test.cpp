// SPDX-License-Identifier: Apache-2.0
// The JSON writer of core/src/detail, which the shim's report and rmm-replay's --json share.

#include "detail/json_writer.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>

namespace {

using rmm::detail::json_string;
using rmm::detail::json_writer;

TEST(JsonWriter, EscapesStrings)
{
  EXPECT_EQ(json_string("plain"), "\"plain\"");
  EXPECT_EQ(json_string("a \"quote\" and a \\"), "\"a \\\"quote\\\" and a \\\\\"");
  EXPECT_EQ(json_string("line\nnext\ttab\rreturn"), "\"line\\nnext\\ttab\\rreturn\"");
  EXPECT_EQ(json_string(std::string{"nul\0bell\x07", 9}), "\"nul\\u0000bell\\u0007\"");
  EXPECT_EQ(json_string("caf\xc3\xa9"), "\"caf\xc3\xa9\"") << "UTF-8 passes as it is";
}

TEST(JsonWriter, CompactNestsObjectsAndArrays)
{
  json_writer json;
  json.begin_object().member("pid", 42).key("devices").begin_array();
  json.begin_object().member("device", 0).member("fragmentation", 0.25, 4).end_object();
  json.begin_object().member("device", std::uint64_t{1}).key("none").null().end_object();
  json.end_array().key("empty").begin_object().end_object().member("name", "cu\"Mem").end_object();
  EXPECT_EQ(json.take(), R"({"pid":42,"devices":[{"device":0,"fragmentation":0.2500},{"device":1,"none":null}],)"
                         R"("empty":{},"name":"cu\"Mem"})");
}

TEST(JsonWriter, SpacedWithMembersOnLinesOfTheirOwn)
{
  json_writer json{json_writer::spacing::spaced};
  json.begin_object(json_writer::layout::lines)
    .member("device", "emulator")
    .member("size", std::optional<std::size_t>{})
    .key("results")
    .begin_array(json_writer::layout::lines);
  json.begin_object().member("a", 1).member("b", std::optional<int>{2}).end_object();
  json.begin_object().member("a", 3).key("flag").boolean(true).end_object();
  json.end_array().end_object();
  EXPECT_EQ(json.take(),
            "{\n"
            "  \"device\": \"emulator\",\n"
            "  \"size\": null,\n"
            "  \"results\": [\n"
            "    {\"a\": 1, \"b\": 2},\n"
            "    {\"a\": 3, \"flag\": true}\n"
            "  ]\n"
            "}");
}

TEST(JsonWriter, AnEmptyContainerOfLinesStaysOnOneLine)
{
  json_writer json{json_writer::spacing::spaced};
  json.begin_object(json_writer::layout::lines).key("results").begin_array(json_writer::layout::lines);
  json.end_array().end_object();
  EXPECT_EQ(json.take(), "{\n  \"results\": []\n}");
}

TEST(JsonWriter, NumbersAsGivenAndNoNaN)
{
  json_writer json;
  json.begin_array().number(-7).number(std::uint64_t{18446744073709551615U}).number(1.0 / 3.0, 6);
  json.number(std::nan(""), 2).number(HUGE_VAL, 1).end_array();
  EXPECT_EQ(json.take(), "[-7,18446744073709551615,0.333333,null,null]");
}

}  // namespace
