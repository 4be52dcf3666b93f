// PG_CAP_EXPLICIT_SIMD (a target whose scalar loops nothing vectorises, as WebAssembly's): the
// CPU strategy vectorises every elementwise kernel it can, a softmax's normalised row, and a
// reduce's lanes as one vector. The kernels are lowered for the cpu's target with the flag set
// (and transcendentals decomposed, as for wasm), run on the cpu, and checked against plain C++.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "codegen/optimize.hpp"
#include "harness.hpp"

namespace polygrad_test {
namespace {

using polygrad::range;

polygrad::codegen::Target explicit_simd() {
  polygrad::codegen::Target t = cpu_target();
  t.caps.flags |= PG_CAP_EXPLICIT_SIMD | PG_CAP_DECOMPOSE_TRANSCENDENTAL;
  return t;
}

/// Instructions of op `op` on float32 vectors of `lanes` lanes.
int vector_ops(const Compiled& c, uint32_t op, int64_t lanes) {
  int n = 0;
  for (const pg_instruction& in : c.kernel.instructions)
    n += in.op == op && in.dtype == PG_DTYPE_FLOAT32 && in.vcount == lanes;
  return n;
}

TEST(ExplicitSimd, ElementwiseKernelsWithoutWholeVectorOpsAreVectorised) {
  const int64_t w = f32_lanes(cpu_target());
  if (w < 4) GTEST_SKIP() << "the cpu target declares fewer than 4 float lanes";
  // sqrt(a) has no whole-vector form in a C renderer, so the cpu leaves it to clang's
  // vectoriser; an explicit-SIMD target takes it as vectors.
  const int64_t n = 8 * w;
  UOpRef r = range(idx(n), 0);
  UOpRef o = global(0, dtypes::float32), a = global(1, dtypes::float32);
  const UOpRef ast = sink({store(o, r, polygrad::alu(Op::SQRT, {load(a, r)}))});
  EXPECT_EQ(polygrad::codegen::choose_upcast(ast, cpu_target()).j, nullptr);
  const polygrad::codegen::UpcastPlan p = polygrad::codegen::choose_upcast(ast, explicit_simd());
  ASSERT_NE(p.j, nullptr);
  EXPECT_EQ(p.lanes, w);

  // exp2 decomposed (bit shifts, casts, selects) runs as vectors, and gives 2^x.
  const UOpRef e = sink({store(o, r, polygrad::alu(Op::EXP2, {load(a, r)}))});
  Compiled c = compile(e, explicit_simd());
  EXPECT_GE(vector_ops(c, PG_OP_MUL, w), 1);
  std::vector<float> x(n);
  for (int64_t i = 0; i < n; ++i) x[i] = 0.37f * static_cast<float>(i) - 9.0f;
  std::vector<HostBuf> bufs{HostBuf::zeros<float>(n), HostBuf::of(x)};
  run(c, bufs);
  const std::vector<float> out = bufs[0].as<float>();
  for (int64_t i = 0; i < n; ++i)
    EXPECT_NEAR(out[i], std::exp2(static_cast<double>(x[i])), 2e-6 * std::exp2(x[i])) << i;
}

/// softmax over n rows of m, lowered for the explicit-SIMD target and run, against softmax_ref.
void check_softmax(int64_t n, int64_t m, const Compiled& c) {
  std::vector<float> x(n * m);
  for (int64_t i = 0; i < n * m; ++i) x[i] = static_cast<float>((i * 37) % 101) * 0.1f - 5.0f;
  std::vector<HostBuf> bufs{HostBuf::zeros<float>(n * m), HostBuf::of(x)};
  run(c, bufs);
  const std::vector<float> out = bufs[0].as<float>();
  const std::vector<double> want = softmax_ref(x, n, m);
  for (int64_t i = 0; i < n * m; ++i) ASSERT_NEAR(out[i], want[i], 1e-6 + 1e-5 * want[i]) << i;
}

TEST(ExplicitSimd, SoftmaxReducesInVectorsAndWritesVectorRows) {
  const int64_t w = f32_lanes(cpu_target());
  if (w < 4) GTEST_SKIP() << "the cpu target declares fewer than 4 float lanes";
  const int64_t n = 5, m = 16 * w + 3;  // a tail past the lanes, and a row of vectors
  Compiled c = compile(softmax_ast(n, m), explicit_simd());
  // The row max and the sum of exponentials accumulate whole vectors; the normalised row is
  // stored as vectors.
  EXPECT_GE(vector_ops(c, PG_OP_MAX, w), 1);
  EXPECT_GE(vector_ops(c, PG_OP_ADD, w), 1);
  int vector_stores = 0;
  for (const pg_instruction& in : c.kernel.instructions)
    vector_stores += in.op == PG_OP_STORE && in.vcount == w;
  EXPECT_GE(vector_stores, 1);
  // The cpu's own plan keeps both reduces in scalar lanes for clang to vectorise.
  EXPECT_EQ(vector_ops(compile(softmax_ast(n, m)), PG_OP_MAX, w), 0);

  check_softmax(n, m, c);
  // A row long enough for the sum of exponentials to be summed in blocks (partial vector sums
  // joined lane by lane), with a tail.
  const int64_t long_m = 256 * w + 5;
  Compiled blocked = compile(softmax_ast(2, long_m), explicit_simd());
  EXPECT_GE(vector_ops(blocked, PG_OP_ADD, w), 1);
  check_softmax(2, long_m, blocked);
}

TEST(ExplicitSimd, SoftmaxStashesItsExponentialsAsVectors) {
  const int64_t w = f32_lanes(cpu_target());
  if (w < 4) GTEST_SKIP() << "the cpu target declares fewer than 4 float lanes";
  // Rows of whole vectors: the exponentials are computed once, in a loop that stores them
  // into the output as vectors before the row sum reads them back, then the normalised row
  // (exp decomposed, so each computation is dozens of vector ops, not one EXP2): two vector
  // stores into the output, where the unstashed kernel has one.
  const int64_t n = 3, m = 64 * w;
  Compiled c = compile(softmax_ast(n, m), explicit_simd());
  int stores = 0, scalar_stores = 0;
  const auto& ins = c.kernel.instructions;
  for (const pg_instruction& in : ins) {
    if (in.op != PG_OP_STORE) continue;
    const pg_instruction& at = ins[c.kernel.operands[in.src_start]];
    if (at.op != PG_OP_INDEX || ins[c.kernel.operands[at.src_start]].op != PG_OP_PARAM_BUFFER ||
        ins[c.kernel.operands[at.src_start]].arg.i != 0)
      continue;
    stores += in.vcount == w;
    scalar_stores += in.vcount == 1;
  }
  EXPECT_EQ(stores, 2);
  EXPECT_EQ(scalar_stores, 0);
  check_softmax(n, m, c);
}

TEST(ExplicitSimd, IntegerRowSumsAccumulateVectors) {
  const int64_t w = f32_lanes(cpu_target());  // int32 lanes: as many as float32's
  if (w < 4) GTEST_SKIP() << "the cpu target declares fewer than 4 int32 lanes";
  // out[i] = sum_k a[i, k] * 3 in int32, a row of 8 vectors and a tail.
  const int64_t n = 3, m = 8 * w + 1;
  UOpRef i = range(idx(n), 0), k = range(idx(m), 1);
  UOpRef o = global(0, dtypes::int32), a = global(1, dtypes::int32);
  UOpRef v = load(a, i * m + k) * polygrad::const_int(dtypes::int32, 3);
  Compiled c = compile(sink({store(o, i, reduce(Op::ADD, v, {k}))}), explicit_simd());
  int vector_adds = 0;
  for (const pg_instruction& in : c.kernel.instructions)
    vector_adds += in.op == PG_OP_ADD && in.dtype == PG_DTYPE_INT32 && in.vcount == w;
  EXPECT_GE(vector_adds, 1);
  std::vector<int32_t> xa(n * m);
  for (int64_t e = 0; e < n * m; ++e) xa[e] = static_cast<int32_t>(e % 17) - 8;
  std::vector<HostBuf> bufs{HostBuf::zeros<int32_t>(n), HostBuf::of(xa)};
  run(c, bufs);
  const std::vector<int32_t> out = bufs[0].as<int32_t>();
  for (int64_t r = 0; r < n; ++r) {
    int64_t want = 0;
    for (int64_t e = 0; e < m; ++e) want += 3 * xa[r * m + e];
    EXPECT_EQ(out[r], want) << r;
  }
}

}  // namespace
}  // namespace polygrad_test
