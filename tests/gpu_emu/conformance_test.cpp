// The conformance kit on gpu_emu, through its library API: every suite passes, tensor cores and
// atomics included.
#include <polygrad/conformance.hpp>

#include <gtest/gtest.h>

#include <sstream>

namespace {

TEST(GpuEmuConformance, PassesEveryCheckOfTheKit) {
  polygrad::conformance::Options options;
  options.plugin_path = POLYGRAD_GPU_EMU_PATH;
  std::ostringstream out;
  const int code = polygrad::conformance::run(options, out);
  const std::string text = out.str();
  EXPECT_EQ(code, 0) << text;
  EXPECT_NE(text.find("result: PASS"), std::string::npos) << text;
  EXPECT_EQ(text.find("FAIL "), std::string::npos) << text;
  // The suites a group target with tensor cores and atomics runs, not skipped.
  EXPECT_NE(text.find("[wmma] 6 passed, 0 failed"), std::string::npos) << text;
  EXPECT_NE(text.find("[atomic] 12 passed, 0 failed"), std::string::npos) << text;
  EXPECT_NE(text.find("dtypes: bool int8 int16 int32 int64 uint8 uint16 uint32 uint64 float16 "
                      "bfloat16 float32 float64"),
            std::string::npos)
      << text;
}

}  // namespace
