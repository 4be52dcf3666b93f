// polygrad::Device over the test plugin: properties, buffers, copies, render/load/launch and
// the error each misuse produces.
#include <polygrad/program_builder.hpp>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>

#include "test_support.hpp"

namespace polygrad_test {
namespace {

using ::testing::HasSubstr;

class DeviceTest : public ::testing::Test {
 protected:
  DeviceTest() : registry_(isolated({kTestPlugin})), device_(registry_.device("testdev")) {}
  polygrad::Registry registry_;
  polygrad::Device device_;
};

/// out[i] = x[i] * scale + 1 for i < n (float32), one launch index per element.
polygrad::sdk::ProgramBuilder scale_kernel() {
  polygrad::sdk::ProgramBuilder b("scale_f32");
  auto out = b.param_buffer(0, PG_DTYPE_FLOAT32);
  auto x = b.param_buffer(1, PG_DTYPE_FLOAT32);
  auto scale = b.param_scalar(0, PG_DTYPE_FLOAT32);
  auto n = b.param_scalar(1, PG_DTYPE_INT32);
  auto i = b.special(PG_SPECIAL_GLOBAL, 0);
  auto gate = b.if_(b.binary(PG_OP_CMPLT, i, n));
  auto v = b.ternary(PG_OP_MULACC, b.load(b.index(x, i)), scale, b.const_f(PG_DTYPE_FLOAT32, 1.0));
  b.store(b.index(out, i), v);
  b.end_if(gate);
  return b;
}

TEST_F(DeviceTest, NameAndProperties) {
  EXPECT_EQ(device_.name(), "testdev:0");
  EXPECT_EQ(device_.plugin_name(), "test_host");
  polygrad::DeviceProperties p = device_.properties();
  EXPECT_EQ(p.name, "test device 0 label=none level=1 fast=false");
  EXPECT_EQ(p.target, "interpreter");
  EXPECT_EQ(p.memory_bytes, 1ull << 30);
  EXPECT_EQ(p.dtype_names(),
            (std::vector<std::string>{"bool", "int32", "int64", "float32", "float64"}));
  EXPECT_TRUE(p.supports(PG_DTYPE_FLOAT32));
  EXPECT_FALSE(p.supports(PG_DTYPE_FLOAT16));
  EXPECT_EQ(registry_.device("testdev:1").name(), "testdev:1");
}

TEST_F(DeviceTest, CopiesRoundTripWithOffsets) {
  polygrad::Buffer b = device_.alloc(16);
  EXPECT_EQ(b.size(), 16u);
  const int32_t in[4] = {1, 2, 3, 4};
  device_.copy_in(b, in, sizeof(in));
  const int32_t patch[2] = {-7, -8};
  device_.copy_in(b, patch, sizeof(patch), 4);
  int32_t out[3] = {};
  device_.copy_out(out, b, sizeof(out), 4);
  EXPECT_EQ(out[0], -7);
  EXPECT_EQ(out[1], -8);
  EXPECT_EQ(out[2], 4);
  // The test plugin keeps buffers in host memory and says where.
  ASSERT_NE(b.host_pointer(), nullptr);
  int32_t first;
  std::memcpy(&first, b.host_pointer(), sizeof(first));
  EXPECT_EQ(first, 1);
}

TEST_F(DeviceTest, CopyDeviceFallsBackThroughHostMemory) {
  ASSERT_FALSE(device_.has_copy_device());
  polygrad::Buffer a = device_.alloc(8), b = device_.alloc(8);
  const uint8_t in[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  device_.copy_in(a, in, 8);
  device_.copy_device(b, a, 4, 2, 4);  // b[2..6) = a[4..8)
  uint8_t out[8] = {};
  device_.copy_out(out, b, 8);
  EXPECT_EQ(std::vector<uint8_t>(out, out + 8), (std::vector<uint8_t>{0, 0, 5, 6, 7, 8, 0, 0}));
  // Across devices too.
  polygrad::Device other = registry_.device("testdev:1");
  polygrad::Buffer c = other.alloc(8);
  other.copy_device(c, a, 8);
  other.copy_out(out, c, 8);
  EXPECT_EQ(std::vector<uint8_t>(out, out + 8), std::vector<uint8_t>(in, in + 8));
}

TEST_F(DeviceTest, OutOfRangeAndForeignBuffersAreUserErrors) {
  polygrad::Buffer b = device_.alloc(20);
  char data[16] = {};
  EXPECT_EQ(error_of([&] { device_.copy_in(b, data, 16, 8); }),
            "[copy_in] testdev:0: 16 bytes at offset 8 exceed the buffer's 20 bytes");
  polygrad::Device other = registry_.device("testdev:1");
  EXPECT_EQ(error_of([&] { other.copy_out(data, b, 4); }),
            "[copy_out] testdev:1: the buffer belongs to another device");
  polygrad::Buffer moved = std::move(b);
  EXPECT_FALSE(b.valid());  // NOLINT(bugprone-use-after-move): testing the moved-from state
  EXPECT_EQ(error_of([&] { device_.copy_in(b, data, 1); }),
            "[copy_in] testdev:0: the buffer is empty (moved from or default)");
}

TEST_F(DeviceTest, RenderLoadLaunchComputesTheKernel) {
  polygrad::sdk::ProgramBuilder builder = scale_kernel();
  const pg_kernel_program& program = builder.program();
  polygrad::Artifact artifact = device_.render(program);
  EXPECT_EQ(artifact.format, PG_ARTIFACT_OTHER);
  polygrad::Program loaded = device_.load(artifact, "scale_f32");
  EXPECT_EQ(loaded.entry(), "scale_f32");

  const int n = 10;
  std::vector<float> x(n), want(n), got(n + 2, -1.0f);
  for (int i = 0; i < n; ++i) {
    x[i] = 0.5f * static_cast<float>(i) - 2.0f;
    want[i] = x[i] * 3.0f + 1.0f;
  }
  polygrad::Buffer out = device_.alloc((n + 2) * sizeof(float)), in = device_.alloc(n * 4);
  device_.copy_in(in, x.data(), n * 4);
  device_.copy_in(out, got.data(), (n + 2) * 4);
  polygrad::LaunchArgs args;
  args.buffers = {&out, &in};
  args.scalars = {polygrad::LaunchArgs::float_scalar(3.0), n};
  args.global_size = {n + 2, 1, 1};  // two launch indices past n, gated off
  device_.launch(loaded, args);
  device_.synchronize();
  device_.copy_out(got.data(), out, (n + 2) * 4);
  for (int i = 0; i < n; ++i) EXPECT_EQ(got[i], want[i]) << "element " << i;
  EXPECT_EQ(got[n], -1.0f);
  EXPECT_EQ(got[n + 1], -1.0f);
}

TEST_F(DeviceTest, PluginFailuresCarryStatusPluginAndCall) {
  polygrad::sdk::ProgramBuilder builder = scale_kernel();
  polygrad::Artifact artifact = device_.render(builder.program());
  try {
    device_.load(artifact, "wrong_name");
    FAIL() << "expected PG_ERR_COMPILE";
  } catch (const polygrad::Error& e) {
    EXPECT_EQ(e.status(), PG_ERR_COMPILE);
    EXPECT_EQ(e.kind(), polygrad::ErrorKind::user);
    EXPECT_EQ(std::string(e.what()),
              "[load 'wrong_name'] testdev:0 (plugin test_host): PG_ERR_COMPILE: template: "
              "artifact holds 'scale_f32', not 'wrong_name'");
  }
  // test_host declares no float16 (its interpreter leaves it out).
  polygrad::sdk::ProgramBuilder half_builder("uses_half");
  auto p = half_builder.param_buffer(0, PG_DTYPE_FLOAT16);
  auto i = half_builder.special(PG_SPECIAL_GLOBAL, 0);
  auto ptr = half_builder.index(p, i);
  half_builder.store(ptr, half_builder.unary(PG_OP_NEG, half_builder.load(ptr)));
  // The host checks the program against what the device declares before the plugin sees it.
  EXPECT_EQ(error_of([&] { device_.render(half_builder.program()); }),
            "[render 'uses_half'] testdev:0 (plugin test_host): instruction 0: the device does "
            "not support PARAM_BUFFER on float16 (the device lacks float16)");
}

TEST_F(DeviceTest, LaunchErrorsAndMissingLaunchTimed) {
  polygrad::sdk::ProgramBuilder builder = scale_kernel();
  polygrad::Program loaded = device_.load(device_.render(builder.program()), "scale_f32");
  polygrad::Buffer out = device_.alloc(4);
  polygrad::LaunchArgs args;
  args.buffers = {&out, nullptr};
  EXPECT_EQ(error_of([&] { device_.launch(loaded, args); }),
            "[launch] testdev:0: buffer slot 1 is empty");
  args.buffers = {&out, &out};
  args.scalars = {polygrad::LaunchArgs::float_scalar(1.0), 4};
  args.global_size = {4, 1, 1};  // reads 4 floats from a 1-float buffer
  EXPECT_THAT(error_of([&] { device_.launch(loaded, args); }),
              HasSubstr("PG_ERR_LAUNCH: template: 'scale_f32' instruction 9 (LOAD) accesses "
                        "elements 1..1 of 1"));
  EXPECT_FALSE(device_.has_launch_timed());
  EXPECT_EQ(error_of([&] { device_.launch_timed(loaded, args); }),
            "[launch_timed] testdev:0 (plugin test_host): the plugin cannot time launches (no "
            "launch_timed)");
}

TEST_F(DeviceTest, UnknownDevicesListWhatExists) {
  EXPECT_EQ(error_of([&] { registry_.device("tpu"); }),
            "[device] unknown device 'tpu' (available: testdev:0, testdev:1)");
  EXPECT_EQ(error_of([&] { registry_.device("testdev:2"); }),
            "[device] unknown device 'testdev:2' (available: testdev:0, testdev:1)");
  EXPECT_THAT(error_of([&] { registry_.device("Bad Name"); }),
              HasSubstr("[device] 'Bad Name' is not a device name"));
}

TEST(DeviceNoPlugins, UnknownDeviceSaysNoPluginLoaded) {
  polygrad::Registry registry(isolated({}));
  EXPECT_EQ(error_of([&] { registry.device("cpu"); }),
            "[device] unknown device 'cpu' (available: none (no plugin loaded; `polygrad "
            "devices --verbose` says why))");
}

TEST_F(DeviceTest, DevicesAndBuffersKeepTheirPluginAliveAfterTheRegistry) {
  std::optional<polygrad::Registry> registry(std::in_place, isolated({kTestPlugin}));
  polygrad::Device d = registry->device("testdev:1");
  polygrad::Buffer b = d.alloc(4);
  registry.reset();
  const float in = 4.5f;
  float out = 0;
  d.copy_in(b, &in, 4);
  d.copy_out(&out, b, 4);
  EXPECT_EQ(out, 4.5f);
}

}  // namespace
}  // namespace polygrad_test
