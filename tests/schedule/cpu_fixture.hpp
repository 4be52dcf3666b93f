// A test fixture for end-to-end tests on the cpu device: host inputs in, values out.
#ifndef POLYGRAD_TESTS_SCHEDULE_CPU_FIXTURE_HPP
#define POLYGRAD_TESTS_SCHEDULE_CPU_FIXTURE_HPP

#include "runtime/buffers.hpp"
#include "runtime/runtime.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace polygrad {

class CpuDeviceTest : public ::testing::Test {
 protected:
  std::string dev_ = runtime::canonical_device("cpu");
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
