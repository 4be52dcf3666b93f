// all_reduce_devices (polygrad/device_collectives.hpp) over the cpu device and the core tests'
// plugin's two devices (testdev:0, testdev:1: another plugin's host memory), against sums and
// maxima worked out here: both algorithms, two and three devices, chunks of unequal length,
// integers, one device, and the errors that name what is wrong.
#include <polygrad/device_collectives.hpp>

#include "harness.hpp"
#include "test_device.hpp"

#include <algorithm>
#include <string>
#include <vector>

namespace {

using polygrad::DeviceReduce;
using polygrad::ReduceOp;
using polygrad::Tensor;
using tensor_test::expect_user_error;
using tensor_test::expect_values;

class DeviceCollectives : public ::testing::Test {
 protected:
  void SetUp() override { tensor_test::load_test_plugin(); }
};

/// Input k on its device: element e is (e * 7 + k * 13) % 23 - 11 (exact in float32).
std::vector<double> input_values(int64_t n, int k) {
  std::vector<double> v;
  for (int64_t e = 0; e < n; ++e) v.push_back(static_cast<double>((e * 7 + k * 13) % 23 - 11));
  return v;
}

TEST_F(DeviceCollectives, SumMaxAndMeanOverTwoAndThreeDevicesOfTwoPlugins) {
  const std::vector<std::vector<std::string>> placements = {{"cpu", "testdev:0"},
                                                            {"testdev:1", "cpu", "testdev:0"}};
  for (const auto& devices : placements)
    for (DeviceReduce algorithm : {DeviceReduce::naive, DeviceReduce::ring})
      for (ReduceOp op : {ReduceOp::sum, ReduceOp::max, ReduceOp::mean}) {
        const int64_t rows = 5, cols = 7;  // 35 elements: ring chunks of 17/18 and 11/12
        std::vector<Tensor> in;
        std::vector<std::vector<double>> values;
        for (size_t k = 0; k < devices.size(); ++k) {
          values.push_back(input_values(rows * cols, static_cast<int>(k)));
          std::vector<float> f(values.back().begin(), values.back().end());
          in.push_back(Tensor(f, {rows, cols}, devices[k]));
        }
        std::vector<double> want(rows * cols);
        for (size_t e = 0; e < want.size(); ++e) {
          double acc = values[0][e];
          for (size_t k = 1; k < values.size(); ++k)
            acc = op == ReduceOp::max ? std::max(acc, values[k][e]) : acc + values[k][e];
          want[e] = op == ReduceOp::mean ? acc / static_cast<double>(values.size()) : acc;
        }
        std::vector<Tensor> out = polygrad::all_reduce_devices(in, op, algorithm);
        ASSERT_EQ(out.size(), in.size());
        for (size_t k = 0; k < out.size(); ++k) {
          SCOPED_TRACE(devices[k] + " of " + std::to_string(devices.size()) + ", op " +
                       std::to_string(static_cast<int>(op)));
          EXPECT_TRUE(out[k].is_realized());
          EXPECT_EQ(out[k].device(), in[k].device());
          expect_values(out[k], {rows, cols}, want);
          expect_values(in[k], {rows, cols}, values[k]);  // the inputs are not written
        }
      }
}

TEST_F(DeviceCollectives, AutomaticGivesTheSameIntegersAtEveryRingBytes) {
  std::vector<int32_t> a(300), b(300), sum(300);
  for (int i = 0; i < 300; ++i) {
    a[i] = i % 17 - 8;
    b[i] = (i * 5) % 13 - 6;
    sum[i] = a[i] + b[i];
  }
  std::vector<Tensor> in = {Tensor(a, {300}, "cpu"), Tensor(b, {300}, "testdev:0")};
  for (uint64_t ring_bytes : {uint64_t{1}, uint64_t{1} << 30, polygrad::kRingBytes})
    for (const Tensor& t :
         polygrad::all_reduce_devices(in, ReduceOp::sum, DeviceReduce::automatic, ring_bytes))
      EXPECT_EQ(t.to_vector<int32_t>(), sum) << ring_bytes;
}

TEST_F(DeviceCollectives, OneDeviceAndFewerElementsThanDevices) {
  Tensor x(std::vector<float>{1, 2}, {2}, "testdev:1");
  std::vector<Tensor> one = polygrad::all_reduce_devices({x}, ReduceOp::mean);
  ASSERT_EQ(one.size(), 1u);
  expect_values(one[0], {2}, {1, 2});
  // Two elements over three devices: the ring would leave a chunk empty; naive runs instead.
  std::vector<Tensor> in = {Tensor(std::vector<float>{1, 2}, {2}, "cpu"),
                            Tensor(std::vector<float>{10, 20}, {2}, "testdev:0"), x};
  for (const Tensor& t : polygrad::all_reduce_devices(in, ReduceOp::sum, DeviceReduce::ring))
    expect_values(t, {2}, {12, 24});
}

TEST_F(DeviceCollectives, BadArgumentsAreUserErrorsNamingThem) {
  Tensor x(std::vector<float>{0, 0, 0, 0}, {4}, "cpu");
  Tensor y(std::vector<float>{0, 0, 0, 0, 0}, {5}, "testdev:0");
  expect_user_error(
      [&] {
        polygrad::all_reduce_devices({x, y});
      },
      {"all_reduce_devices", "tensor 1 on testdev:0", "(5,)", "(4,)", "same shape and dtype"});
  expect_user_error([&] { polygrad::all_reduce_devices({}); },
                    {"all_reduce_devices", "no tensors"});
  Tensor i(std::vector<int32_t>{1, 2}, {2}, "cpu");
  expect_user_error(
      [&] {
        polygrad::all_reduce_devices({i, i}, ReduceOp::mean);
      },
      {"all_reduce_devices", "mean needs a floating-point dtype", "int32"});
}

}  // namespace
