// The conformance kit's ccl suites: the loopback plugin passes them, a plugin of another CCL
// ABI major is a load failure (exit code 2), and a plugin that writes past its results fails
// the check that says so (exit code 1).
#include <polygrad/conformance.hpp>

#include <gtest/gtest.h>

#include <sstream>
#include <string>

namespace {

int run_kit(const std::string& file, std::string& report, bool json = false) {
  polygrad::conformance::Options options;
  options.plugin_path = std::string(PG_TEST_CCL_DIR) + "/" + file;
  options.json = json;
  options.verbose = true;
  std::ostringstream out;
  int code = polygrad::conformance::run(options, out);
  report = out.str();
  return code;
}

TEST(CclConformance, LoopbackPassesBothSuites) {
  std::string report;
  EXPECT_EQ(run_kit("polygrad_ccl_loopback.so", report), 0) << report;
  for (const char* check :
       {"ccl loopback 0.0.1 (CCL ABI 1.0)", "required slots", "comm_init: a world of one",
        "all_reduce mean float32 gives the input bit for bit",
        "all_reduce max float64 at offsets writes only its elements",
        "all_reduce sum float32 in place writes only its elements", "an unknown dtype is refused",
        "mean of int32 is refused", "a broadcast root outside the world is refused"})
    EXPECT_NE(report.find(check), std::string::npos) << check << "\n" << report;
}

TEST(CclConformance, AnotherMajorIsALoadFailure) {
  std::string report;
  EXPECT_EQ(run_kit("polygrad_ccl_major2.so", report), 2) << report;
  EXPECT_NE(report.find("plugin CCL ABI major 2, the kit speaks 1"), std::string::npos) << report;
}

TEST(CclConformance, WritingPastTheCountFails) {
  std::string report;
  EXPECT_EQ(run_kit("polygrad_ccl_writes_past.so", report), 1) << report;
  EXPECT_NE(report.find("all_reduce sum int32 writes only its elements"), std::string::npos)
      << report;
  EXPECT_NE(report.find("bytes before or past the receive range changed"), std::string::npos)
      << report;
}

}  // namespace
