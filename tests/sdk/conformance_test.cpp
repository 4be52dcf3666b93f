// The conformance kit driven through its library API: the template plugin passes every
// check; deliberately faulty plugins make it fail and name the failing check; unloadable
// files give exit code 2.
#include <polygrad/conformance.hpp>

#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace {

struct Outcome {
  int code;
  std::string text;
};

Outcome run_kit(const std::string& path, bool json = false, bool abi_only = false,
                const std::vector<std::pair<std::string, std::string>>& plugin_options = {}) {
  polygrad::conformance::Options options;
  options.plugin_path = path;
  options.json = json;
  options.abi_only = abi_only;
  options.plugin_options = plugin_options;
  std::ostringstream out;
  int code = polygrad::conformance::run(options, out);
  return {code, out.str()};
}

TEST(Conformance, TemplatePluginPassesEveryCheck) {
  Outcome r = run_kit(POLYGRAD_TEMPLATE_PATH);
  EXPECT_EQ(r.code, 0) << r.text;
  EXPECT_NE(r.text.find("result: PASS"), std::string::npos) << r.text;
  EXPECT_NE(r.text.find("[ops]"), std::string::npos);
  EXPECT_EQ(r.text.find("FAIL "), std::string::npos) << r.text;
}

TEST(Conformance, JsonHasTheSupportTable) {
  Outcome r = run_kit(POLYGRAD_TEMPLATE_PATH, true);
  EXPECT_EQ(r.code, 0);
  // The template declares bool, the ints and float32/64 but not float16/bfloat16; ADD is not
  // defined on bool; EXP2 is defined only for floats.
  EXPECT_NE(r.text.find("\"ADD\":{\"bool\":\"-\",\"int8\":\"ok\""), std::string::npos) << r.text;
  EXPECT_NE(r.text.find("\"float16\":\"-\",\"bfloat16\":\"-\",\"float32\":\"ok\""),
            std::string::npos);
  EXPECT_NE(r.text.find("\"EXP2\":{\"bool\":\"-\",\"int8\":\"-\""), std::string::npos);
  EXPECT_NE(r.text.find("\"exit_code\":0}"), std::string::npos);
}

TEST(Conformance, AbiOnlyRunsOnlyTheAbiSuite) {
  Outcome r = run_kit(POLYGRAD_TEMPLATE_PATH, false, true);
  EXPECT_EQ(r.code, 0) << r.text;
  EXPECT_NE(r.text.find("[abi]"), std::string::npos);
  EXPECT_EQ(r.text.find("[ops]"), std::string::npos);
  EXPECT_EQ(r.text.find("[allocator]"), std::string::npos);
}

TEST(Conformance, CatchesAnAddThatSubtracts) {
  Outcome r = run_kit(POLYGRAD_FAULTY_ADD_PATH);
  EXPECT_EQ(r.code, 1) << r.text;
  EXPECT_NE(r.text.find("FAIL  ADD int32: element"), std::string::npos) << r.text;
  EXPECT_EQ(r.text.find("FAIL  SUB int32"), std::string::npos) << r.text;
}

TEST(Conformance, CatchesAWmmaThatMultipliesTheWrongWayRound) {
  Outcome r = run_kit(POLYGRAD_FAULTY_WMMA_PATH);
  EXPECT_EQ(r.code, 1) << r.text;
  EXPECT_NE(r.text.find("FAIL  WMMA.2x2x2.float32: A * B + C differs: D[0][0]"), std::string::npos)
      << r.text;
}

TEST(Conformance, CatchesACorruptingCopyOut) {
  Outcome r = run_kit(POLYGRAD_FAULTY_COPY_PATH);
  EXPECT_EQ(r.code, 1) << r.text;
  EXPECT_NE(r.text.find("FAIL  round_trip.64MiB: byte 33554432"), std::string::npos) << r.text;
}

TEST(Conformance, CatchesAPluginThatAcceptsAnotherMajor) {
  Outcome r = run_kit(POLYGRAD_FAULTY_MAJOR_PATH, false, true);
  EXPECT_EQ(r.code, 1) << r.text;
  EXPECT_NE(r.text.find("FAIL  init.other_major_refused: returned PG_OK"), std::string::npos)
      << r.text;
}

// The reading of STORE's vcount under which a renderer writes one lane of a vector: every
// vector case fails at the second element.
TEST(Conformance, CatchesAStoreThatWritesOneLane) {
  Outcome r = run_kit(POLYGRAD_FAULTY_STORE_PATH);
  EXPECT_EQ(r.code, 1) << r.text;
  EXPECT_NE(r.text.find("FAIL  LOAD.vec2 int32: element 1: got "), std::string::npos) << r.text;
  EXPECT_NE(r.text.find("FAIL  ADD.vec8 float32: element 1: got "), std::string::npos) << r.text;
  EXPECT_EQ(r.text.find("FAIL  ADD int32"), std::string::npos) << r.text;  // scalars are fine
}

TEST(Conformance, TellsAPluginWithoutInt64WhatItLacks) {
  Outcome r = run_kit(POLYGRAD_FAULTY_INT64_PATH);
  EXPECT_EQ(r.code, 1) << r.text;
  EXPECT_NE(r.text.find("FAIL  properties.required_dtypes: the device lacks int64: the host's "
                        "kernels compute indices, loop counters and sizes in int64"),
            std::string::npos)
      << r.text;
}

// The vector cases run at every width up to the device's max_vector_lanes (8 for the
// template), not only at 4.
TEST(Conformance, VectorCasesRunAtEveryDeclaredWidth) {
  Outcome r = run_kit(POLYGRAD_TEMPLATE_PATH, true);
  EXPECT_EQ(r.code, 0) << r.text;
  for (const char* check : {"LOAD.vec2 float32", "LOAD.vec4 float32", "LOAD.vec8 float32",
                            "ADD.vec8 int64", "STORE.stream.vec8 uint8", "GEP.vec8 float64"})
    EXPECT_NE(r.text.find(std::string("{\"name\":\"") + check + "\",\"status\":\"pass\""),
              std::string::npos)
        << check << "\n"
        << r.text;
  EXPECT_EQ(r.text.find("vec16"), std::string::npos);
  EXPECT_NE(r.text.find("8 vector lanes (checked at 2,4,8)"), std::string::npos) << r.text;
}

TEST(Conformance, AnOptionOutsideThePluginsSchemaCannotRun) {
  Outcome r = run_kit(POLYGRAD_TEMPLATE_PATH, false, true, {{"threads", "4"}});
  EXPECT_EQ(r.code, 2) << r.text;
  EXPECT_NE(r.text.find("--option threads=4: the plugin declares no option 'threads' (it "
                        "declares: trace)"),
            std::string::npos)
      << r.text;
  r = run_kit(POLYGRAD_TEMPLATE_PATH, false, true, {{"trace", "yes"}});
  EXPECT_EQ(r.code, 2) << r.text;
  EXPECT_NE(r.text.find("--option trace=yes: 'trace' takes true or false"), std::string::npos)
      << r.text;
}

#ifdef POLYGRAD_TEST_HOST_PATH
// test_host names its devices after the options get_option hands it.
TEST(Conformance, OptionsReachThePluginThroughGetOption) {
  Outcome r = run_kit(POLYGRAD_TEST_HOST_PATH, false, true, {{"label", "kit"}, {"level", "3"}});
  EXPECT_EQ(r.code, 0) << r.text;
  EXPECT_NE(r.text.find("device 0: test device 0 label=kit level=3 fast=false"), std::string::npos)
      << r.text;
  r = run_kit(POLYGRAD_TEST_HOST_PATH, false, true, {{"level", "9"}});
  EXPECT_EQ(r.code, 2) << r.text;
  EXPECT_NE(r.text.find("--option level=9: 'level' takes a value from 0"), std::string::npos)
      << r.text;
}
#endif

TEST(Conformance, MissingFileCannotLoad) {
  Outcome r = run_kit("/nonexistent/polygrad_nothing.so");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.text.find("dlopen failed"), std::string::npos) << r.text;
}

TEST(Conformance, LibraryWithoutEntrySymbolCannotLoad) {
  Outcome r = run_kit("libm.so.6");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.text.find("does not export pg_plugin_entry"), std::string::npos) << r.text;
}

}  // namespace
