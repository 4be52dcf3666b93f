// Elementwise kernels in vector form (codegen/optimize.hpp) and the streaming hint the
// linearizer puts on large vector stores (PG_STORE_STREAM).
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "codegen/optimize.hpp"
#include "harness.hpp"

namespace polygrad_test {
namespace {

using polygrad::range;

/// The hints of the kernel's STOREs, in program order.
std::vector<int64_t> store_hints(const Compiled& k) {
  std::vector<int64_t> hints;
  for (const pg_instruction& in : k.kernel.instructions)
    if (in.op == PG_OP_STORE) hints.push_back(in.arg.i);
  return hints;
}

TEST(VectorStore, ContiguousElementwiseKernelIsVectorised) {
  const int64_t w = f32_lanes(cpu_target());
  if (w < 4) GTEST_SKIP() << "the cpu target declares fewer than 4 float lanes";
  const UOpRef ast = mul_add_ast(8 * w);  // the plan points into it
  const polygrad::codegen::UpcastPlan p = polygrad::codegen::choose_upcast(ast, cpu_target());
  ASSERT_NE(p.j, nullptr);
  EXPECT_EQ(p.lanes, w);
  EXPECT_EQ(p.vectors, 1);
  EXPECT_EQ(p.i, nullptr);
  // Not a multiple of the lanes: left to the scalar loop.
  EXPECT_EQ(polygrad::codegen::choose_upcast(mul_add_ast(8 * w + 1), cpu_target()).j, nullptr);
  // MAX, comparisons and WHERE have whole-vector forms (relu and its gradient); SQRT, a
  // math call per lane, has none; a strided load is not one vector.
  UOpRef r = range(idx(8 * w), 0);
  UOpRef o = global(0, dtypes::float32), a = global(1, dtypes::float32);
  UOpRef zero = polygrad::const_float(dtypes::float32, 0.0);
  const UOpRef relu_grad = sink({store(
      o, r,
      polygrad::where(polygrad::lt(zero, load(a, r)), polygrad::max(load(a, r), zero), zero))});
  EXPECT_NE(polygrad::codegen::choose_upcast(relu_grad, cpu_target()).j, nullptr);
  EXPECT_EQ(polygrad::codegen::choose_upcast(
                sink({store(o, r, polygrad::alu(polygrad::Op::SQRT, {load(a, r)}))}), cpu_target())
                .j,
            nullptr);
  EXPECT_EQ(polygrad::codegen::choose_upcast(sink({store(o, r, load(a, r * 2))}), cpu_target()).j,
            nullptr);
}

TEST(VectorStore, VectorisedValuesMatchPlainCpp) {
  // (1000 elements: Elementwise.MulAddFloat32.)
  for (int64_t n : {f32_lanes(cpu_target()) * 4, f32_lanes(cpu_target()) * 4 + 3}) check_mul_add(n);
}

// 16 MiB and up of output through a vector store the kernel does not read back: streamed.
TEST(VectorStore, LargeOutputIsStreamedSmallOrReadBackIsNot) {
  const int64_t w = f32_lanes(cpu_target());
  if (w < 4) GTEST_SKIP() << "the cpu target declares fewer than 4 float lanes";
  const int64_t big = int64_t{4} << 20;  // 16 MiB of float32
  EXPECT_EQ(store_hints(compile(mul_add_ast(big))), std::vector<int64_t>{PG_STORE_STREAM});
  EXPECT_EQ(store_hints(compile(mul_add_ast(big / 2))), std::vector<int64_t>{0});
  EXPECT_EQ(store_hints(compile(mul_add_ast(big, true))), std::vector<int64_t>{0});
  // Blocks of 256 over a launch variable: any length, so small ones must stay cached.
  UOpRef outer = range(polygrad::define_var("n0", 1, INT32_MAX), 0), inner = range(idx(256), 1);
  UOpRef r = outer * 256 + inner;
  UOpRef o = global(0, dtypes::float32), a = global(1, dtypes::float32);
  EXPECT_EQ(store_hints(compile(sink({store(o, r, load(a, r) + load(a, r))}))),
            std::vector<int64_t>{0});
  check_mul_add(big);
}

}  // namespace
}  // namespace polygrad_test
