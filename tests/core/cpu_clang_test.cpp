// The core driving the real CPU plugin, where this build has one (the sanitizer build does not).
#include <polygrad/program_builder.hpp>

#include <gtest/gtest.h>

#include "test_support.hpp"

namespace polygrad_test {
namespace {

TEST(CpuClangThroughTheCore, RunsAnElementwiseKernel) {
#ifndef PG_CPU_CLANG
  GTEST_SKIP() << "cpu_clang is not part of this build (POLYGRAD_PLUGIN_CPU_CLANG=OFF)";
#else
  polygrad::Registry registry(isolated({PG_CPU_CLANG}));
  polygrad::Device cpu = registry.device("cpu");
  EXPECT_EQ(cpu.name(), "cpu:0");
  EXPECT_EQ(cpu.plugin_name(), "cpu_clang");
  polygrad::DeviceProperties props = cpu.properties();
  EXPECT_GE(props.caps.compute_units, 1u);
  EXPECT_TRUE(props.supports(PG_DTYPE_FLOAT32));

  polygrad::sdk::ProgramBuilder b("add_one_f32");
  auto out = b.param_buffer(0, PG_DTYPE_FLOAT32);
  auto x = b.param_buffer(1, PG_DTYPE_FLOAT32);
  auto i = b.special(PG_SPECIAL_GLOBAL, 0);
  b.store(b.index(out, i),
          b.binary(PG_OP_ADD, b.load(b.index(x, i)), b.const_f(PG_DTYPE_FLOAT32, 1.0)));
  const pg_kernel_program& program = b.program();
  polygrad::Program loaded = cpu.load(cpu.render(program), program.name);

  const uint32_t n = 1000;
  std::vector<float> in(n), got(n);
  for (uint32_t k = 0; k < n; ++k) in[k] = 0.25f * static_cast<float>(k);
  polygrad::Buffer dout = cpu.alloc(n * 4), din = cpu.alloc(n * 4);
  cpu.copy_in(din, in.data(), n * 4);
  polygrad::LaunchArgs args;
  args.buffers = {&dout, &din};
  args.global_size = {n, 1, 1};
  cpu.launch(loaded, args);
  cpu.synchronize();
  cpu.copy_out(got.data(), dout, n * 4);
  for (uint32_t k = 0; k < n; ++k) ASSERT_EQ(got[k], in[k] + 1.0f) << "element " << k;
#endif
}

}  // namespace
}  // namespace polygrad_test
