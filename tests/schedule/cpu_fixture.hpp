// A test fixture for end-to-end tests on a device (the cpu unless POLYGRAD_TEST_DEVICE names
// another): host inputs in, values out.
#ifndef POLYGRAD_TESTS_SCHEDULE_CPU_FIXTURE_HPP
#define POLYGRAD_TESTS_SCHEDULE_CPU_FIXTURE_HPP

#include "runtime/buffers.hpp"
#include "runtime/runtime.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

namespace polygrad {

/// The device the fixture's tests run on: POLYGRAD_TEST_DEVICE, else the cpu (CI runs the
/// realize tests a second time on the GPU-semantics emulator, "emu").
inline std::string test_device() {
  const char* env = std::getenv("POLYGRAD_TEST_DEVICE");
  return env != nullptr && *env != '\0' ? env : "cpu";
}

class CpuDeviceTest : public ::testing::Test {
 protected:
  std::string dev_ = runtime::canonical_device(test_device());
  /// A realised float32 tensor of shape `s` holding `v`.
  UOpRef input(const std::vector<float>& v, const lazy::Shape& s) {
    return runtime::from_host(dev_, dtypes::float32, s, v.data());
  }
  /// The values of `root`, realised on the device.
  std::vector<float> values(const UOpRef& root) {
    UOpRef r = runtime::realize({root}, dev_)[0];
    std::vector<float> out(static_cast<size_t>(lazy::numel(lazy::shape_of(r))));
    runtime::to_host(r, out.data());
    return out;
  }
};

}  // namespace polygrad

#endif  // POLYGRAD_TESTS_SCHEDULE_CPU_FIXTURE_HPP
