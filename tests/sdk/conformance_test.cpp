// The conformance kit driven through its library API: the template plugin passes every
// check; deliberately faulty plugins make it fail and name the failing check; unloadable
// files give exit code 2.
#include <polygrad/conformance.hpp>

#include <gtest/gtest.h>

#include <sstream>

namespace {

struct Outcome {
  int code;
  std::string text;
};

Outcome run_kit(const std::string& path, bool json = false, bool abi_only = false) {
  polygrad::conformance::Options options;
  options.plugin_path = path;
  options.json = json;
  options.abi_only = abi_only;
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
