// Where ops run when the default device is not cpu: the test plugin's "testdev" is the default
// here. An op runs on its tensor operands' device; a tensor created on or moved to cpu computes
// on cpu; scalars and constants follow their operands, never the default; operands on two
// devices are an error naming the op and both. A graph that moves data across devices realises
// with the right values, gradients included.
//
// "Nothing of it ran on testdev" is shown by realising under kNoTestDeviceWork, which makes
// every render, load, launch and allocation of the test plugin fail.
#include "harness.hpp"
#include "test_device.hpp"

#include <optional>
#include <vector>

namespace {

using polygrad::Tensor;
using tensor_test::expect_user_error;
using tensor_test::expect_values;
using tensor_test::ScopedEnv;
using tensor_test::TestDeviceFault;

class Placement : public ::testing::Test {
 protected:
  void SetUp() override { tensor_test::load_test_plugin(); }
  ScopedEnv default_device_{"POLYGRAD_DEVICE", "testdev"};
};

/// Realises `t` while the test device refuses every call that would compute or allocate.
void realize_without_test_device(Tensor t) {
  TestDeviceFault none(tensor_test::kNoTestDeviceWork);
  t.realize();
}

TEST_F(Placement, TensorsWithoutADeviceUseTheDefault) {
  Tensor a(std::vector<float>{1, 2, 3});
  EXPECT_EQ(a.device(), "testdev:0");
  EXPECT_EQ(Tensor::scalar(1.0).device(), "testdev:0");
  EXPECT_EQ(Tensor::arange(3).device(), "testdev:0");
  Tensor b = a * 2 + 1;
  EXPECT_EQ(b.device(), "testdev:0");
  expect_values(b, {3}, {3, 5, 7});
  // (the fault does reach it: realised on testdev, the same graph fails)
  Tensor c = a * 3;
  EXPECT_THROW(realize_without_test_device(c), polygrad::Error);
  expect_values(c, {3}, {3, 6, 9});
}

// The case: `Tensor(a).to('cpu').mul(2)` ran its multiply on the default device and
// failed with "a tensor on cpu:0 is used in a computation on testdev:0".
TEST_F(Placement, ATensorMovedToCpuComputesOnCpu) {
  Tensor a(std::vector<float>{1.5f, -2.0f, 3.0f});
  Tensor b = a.to("cpu").mul(2);
  EXPECT_EQ(b.device(), "cpu:0");
  expect_values(b, {3}, {3, -4, 6});

  Tensor c = a.to("cpu").mul(4).sum();  // a reduce too, and nothing of it on testdev
  EXPECT_EQ(c.device(), "cpu:0");
  realize_without_test_device(c);
  expect_values(c, {}, {10});
}

TEST_F(Placement, TensorsCreatedOnCpuComputeOnCpu) {
  Tensor x(std::vector<float>{1, 2, 3, 4}, {2, 2}, "cpu");
  Tensor i = Tensor::arange(4, "cpu").reshape({2, 2}).cast(PG_DTYPE_FLOAT32);
  Tensor eye = Tensor::eye(2, -1, PG_DTYPE_FLOAT32, "cpu");
  Tensor zeros = Tensor::zeros({2, 2}, PG_DTYPE_FLOAT32, "cpu");
  Tensor half = Tensor::full({2, 2}, 0.5, std::nullopt, "cpu");
  Tensor y = (x + zeros).matmul(eye) * i + half;  // x * i + 0.5
  Tensor s = y.sum(1);
  for (const Tensor& t : {i, eye, zeros, half, y, s}) EXPECT_EQ(t.device(), "cpu:0");
  realize_without_test_device(y);
  realize_without_test_device(s);
  expect_values(y, {2, 2}, {0.5, 2.5, 6.5, 12.5});
  expect_values(s, {2}, {3, 19});
}

TEST_F(Placement, ScalarsFollowTheirTensorNotTheDefault) {
  Tensor x(std::vector<float>{-1, 0.5f, 2}, {}, "cpu");
  const std::vector<std::pair<Tensor, std::vector<double>>> cases = {
      {x * 2, {-2, 1, 4}},
      {2 - x, {3, 1.5, 0}},
      {x / 4, {-0.25, 0.125, 0.5}},
      {x.maximum(0.75), {0.75, 0.75, 2}},
      {x.clamp(0, 1), {0, 0.5, 1}},
      {x.pow(2), {1, 0.25, 4}},
      {Tensor::pow(2, x), {0.5, 1.4142135623730951, 4}},
      {(x > 0).where(x, 10.0), {10, 0.5, 2}},
      {x.where(1.0, 0.0), {1, 1, 1}},
      {Tensor::full_like(x, 7), {7, 7, 7}},
      {Tensor::zeros_like(x) + Tensor::ones_like(x), {1, 1, 1}},
      {x.lerp(x * 3, 0.5), {-2, 1, 4}},
  };
  for (const auto& [t, want] : cases) {
    EXPECT_EQ(t.device(), "cpu:0");
    realize_without_test_device(t);
    expect_values(t, {3}, want);
  }
  // And on a device that is not the default either.
  Tensor y(std::vector<float>{1, 2}, {}, "testdev:1");
  Tensor z = 3 * y - 1;
  EXPECT_EQ(z.device(), "testdev:1");
  expect_values(z, {2}, {2, 5});
}

// A value of constants has nothing to copy: moved, it computes on its new device.
TEST_F(Placement, ConstantsMovedComputeWhereTheyWereMoved) {
  Tensor f = Tensor::full({3}, 2.5).to("cpu");
  Tensor r = Tensor::arange(3).to("cpu") * 2;
  EXPECT_EQ(f.device(), "cpu:0");
  EXPECT_EQ(r.device(), "cpu:0");
  realize_without_test_device(f);
  realize_without_test_device(r);
  expect_values(f, {3}, {2.5, 2.5, 2.5});
  expect_values(r, {3}, {0, 2, 4});
}

TEST_F(Placement, OperandsOnTwoDevicesAreAnErrorNamingBoth) {
  Tensor c(std::vector<float>{1, 2}, {}, "cpu");
  Tensor t(std::vector<float>{3, 4});
  Tensor t1(std::vector<float>{5, 6}, {}, "testdev:1");
  expect_user_error([&] { c + t; }, {"add: tensors on different devices (cpu:0 and testdev:0)"});
  expect_user_error([&] { t* t1; },
                    {"mul: tensors on different devices (testdev:0 and testdev:1)"});
  expect_user_error([&] { t1 - c; }, {"sub", "testdev:1", "cpu:0"});
  expect_user_error([&] { c < t; }, {"lt", "cpu:0", "testdev:0"});
  expect_user_error([&] { c.maximum(t); }, {"maximum", "cpu:0", "testdev:0"});
  expect_user_error([&] { (c > 1).where(t, c); }, {"where", "cpu:0", "testdev:0"});
  expect_user_error(
      [&] {
        c.reshape({1, 2}).matmul(t.reshape({2, 1}));
      },
      {"matmul", "cpu:0", "testdev:0"});
  expect_user_error([&] { Tensor::cat({c, t}); }, {"cat", "cpu:0", "testdev:0"});
  expect_user_error(
      [&] {
        c.gather(0, Tensor(std::vector<int32_t>{1, 0}));
      },
      {"gather", "cpu:0", "testdev:0"});
  expect_user_error([&] { Tensor(c).realize().assign(t); }, {"assign", "cpu:0", "testdev:0"});
  // Nothing was left half done: the same tensors still compute.
  expect_values(c + t.to("cpu"), {2}, {4, 6});
  expect_values(t * t1.to("testdev:0"), {2}, {15, 24});
}

// x on cpu, y = x.to(testdev) * 2, z = y.to(cpu) + x: one schedule with copies both ways.
TEST_F(Placement, AGraphAcrossDevicesRealises) {
  Tensor x(std::vector<float>{1, 2, 3}, {}, "cpu");
  Tensor y = x.to("testdev") * 2;
  Tensor z = y.to("cpu") + x;
  EXPECT_EQ(y.device(), "testdev:0");
  EXPECT_EQ(z.device(), "cpu:0");
  expect_values(z, {3}, {3, 6, 9});
  expect_values(y, {3}, {2, 4, 6});
  // Through both test devices, a reduce on one of them: sum(x + 1) * x - x = 8x.
  Tensor s = (x.to("testdev:0") + 1).sum();
  Tensor w = (s.to("testdev:1") * x.to("testdev:1")).to("cpu") - x;
  EXPECT_EQ(w.device(), "cpu:0");
  expect_values(w, {3}, {8, 16, 24});
  // Several roots on several devices at once.
  Tensor a = x.to("testdev:1") - 1, b = a.to("cpu") * x, d = b.to("testdev:0").sum();
  std::vector<Tensor> all = {d, b, a};
  Tensor::realize_all(all);
  expect_values(a, {3}, {0, 1, 2});
  expect_values(b, {3}, {0, 2, 6});
  expect_values(d, {}, {8});
  EXPECT_EQ(d.device(), "testdev:0");
}

TEST_F(Placement, GradientsFlowBackAcrossDevices) {
  Tensor x(std::vector<float>{1, -2, 3}, {}, "cpu");
  x.requires_grad(true);
  Tensor loss = (x.to("testdev").square() * 3).to("cpu").sum();  // d/dx = 6x
  loss.backward();
  ASSERT_TRUE(x.grad().has_value());
  EXPECT_EQ(x.grad()->device(), "cpu:0");
  expect_values(*x.grad(), {3}, {6, -12, 18});
  expect_values(loss, {}, {42});
}

}  // namespace
