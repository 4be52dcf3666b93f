// Stashes (codegen/stash.hpp): a softmax's exponentials computed once, stored in the output
// before the row sum and read back; and the kernels where that would be wrong or no faster.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>

#include "harness.hpp"

namespace polygrad_test {
namespace {

using polygrad::range;

constexpr double kLog2e = 1.4426950408889634;

UOpRef f32(double v) {
  return polygrad::const_float(dtypes::float32, v);
}

/// exp((x[at] - shift) * 1) as the scheduler writes it: exp2 of the product with log2(e).
UOpRef e_of(const UOpRef& x, const UOpRef& at, const UOpRef& shift) {
  return polygrad::alu(Op::EXP2, {(load(x, at) - shift) * f32(kLog2e)});
}

/// The stores into buffer slot `slot` and the EXP2s in the lowered program.
struct Counts {
  int stores = 0, exps = 0;
};
Counts count(const Compiled& c, int64_t slot) {
  const auto& ins = c.kernel.instructions;
  const auto& ops = c.kernel.operands;
  Counts n;
  for (const pg_instruction& in : ins) {
    if (in.op == PG_OP_EXP2) ++n.exps;
    if (in.op != PG_OP_STORE) continue;
    const pg_instruction& at = ins[ops[in.src_start]];
    if (at.op != PG_OP_INDEX) continue;
    const pg_instruction& buf = ins[ops[at.src_start]];
    if (buf.op == PG_OP_PARAM_BUFFER && buf.arg.i == slot) ++n.stores;
  }
  return n;
}

/// A target whose EXP2 stays one instruction (no lanes: nothing decomposed), to count them.
polygrad::codegen::Target scalar_target() {
  polygrad::codegen::Target t = cpu_target();
  t.caps.vector_width_bytes = 4;
  return t;
}

/// Inputs in [-6, 6) with every row different.
std::vector<float> inputs(int64_t count) {
  std::vector<float> v(count);
  for (int64_t t = 0; t < count; ++t) v[t] = static_cast<float>((t * 7919) % 1201) / 100.0f - 6.0f;
  return v;
}

TEST(Stash, SoftmaxComputesEachExponentialOnce) {
  // One EXP2 (in the loop that stores them), two stores into the output, on a scalar target;
  // the values on the vector one, for widths with and without a tail past the lanes (the sum
  // of 50257 in blocks: 4e-6 relative error in one run of 8 lanes, under 1e-6 in blocks).
  const Counts n = count(compile(softmax_ast(3, 37), scalar_target()), 0);
  EXPECT_EQ(n.exps, 1);
  EXPECT_EQ(n.stores, 2);
  for (int64_t m : {int64_t{37}, int64_t{1000}, int64_t{50257}}) {
    const int64_t rows = 3;
    const std::vector<float> vx = inputs(rows * m);
    std::vector<HostBuf> bufs{HostBuf::zeros<float>(rows * m), HostBuf::of(vx)};
    Compiled c = compile(softmax_ast(rows, m));
    EXPECT_EQ(count(c, 0).stores, 2) << m;
    run(c, bufs);
    const std::vector<float> out = bufs[0].as<float>();
    const std::vector<double> want = softmax_ref(vx, rows, m);
    for (int64_t t = 0; t < rows * m; ++t)
      ASSERT_NEAR(out[t], want[t], 1e-6 * want[t]) << "m = " << m << ", element " << t;
  }
}

// A variable that only the stashed value uses (here a scale of the exponent, bound to 1; a
// fuzzed graph's symbolic reduce inside the exponential) is still a parameter of the kernel:
// the stash takes the value out of the sum, and the linearizer numbered the kernel's variables
// from what was left ('internal error: map::at').
TEST(Stash, AVariableOnlyTheStashedValueUsesIsAParameter) {
  const int64_t rows = 3, m = 37;
  UOpRef i = range(idx(rows), 0), j = range(idx(m), 1), k = range(idx(m), 2);
  UOpRef k2 = range(idx(m), 3);
  UOpRef o = global(0, dtypes::float32), x = global(1, dtypes::float32);
  UOpRef scale = polygrad::cast(polygrad::define_var("n1", 1, 1000), dtypes::float32);
  UOpRef mx = reduce(Op::MAX, load(x, i * m + k), {k});
  auto e = [&](const UOpRef& col) {
    return polygrad::alu(Op::EXP2, {(load(x, i * m + col) - mx) * (f32(kLog2e) * scale)});
  };
  Compiled c = compile(sink({store(o, i * m + j, e(j) / reduce(Op::ADD, e(k2), {k2}))}));
  EXPECT_EQ(count(c, 0).stores, 2);  // stashed
  const std::vector<float> vx = inputs(rows * m);
  std::vector<HostBuf> bufs{HostBuf::zeros<float>(rows * m), HostBuf::of(vx)};
  run(c, bufs, {{"n1", 1}});
  const std::vector<float> out = bufs[0].as<float>();
  const std::vector<double> want = softmax_ref(vx, rows, m);
  for (int64_t t = 0; t < rows * m; ++t) ASSERT_NEAR(out[t], want[t], 1e-6 * want[t]) << t;
}

TEST(Stash, NotWhenTheStoreRunsAgainAfterTheSum) {
  // out[i, a, j] = e(i, j) / sum_k e(i, k): the sum runs once per row i, the store once per
  // (a, j). Stashed, a = 1 would read back what a = 0 stored over the exponentials.
  const int64_t n = 2, reps = 3, m = 40;
  UOpRef i = range(idx(n), 0), a = range(idx(reps), 1), j = range(idx(m), 2);
  UOpRef k = range(idx(m), 3), k2 = range(idx(m), 4);
  UOpRef o = global(0, dtypes::float32), x = global(1, dtypes::float32);
  UOpRef mx = reduce(Op::MAX, load(x, i * m + k), {k});
  UOpRef sum = reduce(Op::ADD, e_of(x, i * m + k2, mx), {k2});
  UOpRef ast = sink({store(o, (i * reps + a) * m + j, e_of(x, i * m + j, mx) / sum)});
  EXPECT_EQ(count(compile(ast, scalar_target()), 0).stores, 1);
  const std::vector<float> vx = inputs(n * m);
  std::vector<HostBuf> bufs{HostBuf::zeros<float>(n * reps * m), HostBuf::of(vx)};
  lower_and_run(ast, bufs);
  const std::vector<double> want = softmax_ref(vx, n, m);
  for (int64_t r = 0; r < n; ++r)
    for (int64_t b = 0; b < reps; ++b)
      for (int64_t c = 0; c < m; ++c)
        ASSERT_NEAR(bufs[0].as<float>()[(r * reps + b) * m + c], want[r * m + c], 1e-6);
}

TEST(Stash, NotWhenTheKernelReadsItsOutput) {
  // out[i, j] += softmax: the output's old values are read, so nothing may be stored over
  // them first.
  const int64_t n = 2, m = 40;
  UOpRef i = range(idx(n), 0), j = range(idx(m), 1), k = range(idx(m), 2), k2 = range(idx(m), 3);
  UOpRef o = global(0, dtypes::float32), x = global(1, dtypes::float32);
  UOpRef mx = reduce(Op::MAX, load(x, i * m + k), {k});
  UOpRef sum = reduce(Op::ADD, e_of(x, i * m + k2, mx), {k2});
  UOpRef ast = sink({store(o, i * m + j, load(o, i * m + j) + e_of(x, i * m + j, mx) / sum)});
  EXPECT_EQ(count(compile(ast, scalar_target()), 0).stores, 1);
  const std::vector<float> vx = inputs(n * m);
  std::vector<float> old(n * m);
  for (int64_t t = 0; t < n * m; ++t) old[t] = static_cast<float>(t % 5);
  std::vector<HostBuf> bufs{HostBuf::of(old), HostBuf::of(vx)};
  lower_and_run(ast, bufs);
  const std::vector<double> want = softmax_ref(vx, n, m);
  for (int64_t t = 0; t < n * m; ++t)
    ASSERT_NEAR(bufs[0].as<float>()[t], old[t] + want[t], 1e-6) << t;
}

TEST(Stash, NotForValuesCheaperThanAStoreAndALoad) {
  // out[i, j] = (x[i, j] - 1) / sum_k (x[i, k] - 1): computed twice, not stored.
  const int64_t n = 2, m = 40;
  UOpRef i = range(idx(n), 0), j = range(idx(m), 1), k = range(idx(m), 2);
  UOpRef o = global(0, dtypes::float32), x = global(1, dtypes::float32);
  UOpRef sum = reduce(Op::ADD, load(x, i * m + k) - f32(1.0), {k});
  UOpRef ast = sink({store(o, i * m + j, (load(x, i * m + j) - f32(1.0)) / sum)});
  EXPECT_EQ(count(compile(ast, scalar_target()), 0).stores, 1);
  std::vector<float> vx(n * m);
  for (int64_t t = 0; t < n * m; ++t) vx[t] = static_cast<float>(t % 7) + 1.5f;
  std::vector<HostBuf> bufs{HostBuf::zeros<float>(n * m), HostBuf::of(vx)};
  lower_and_run(ast, bufs);
  for (int64_t r = 0; r < n; ++r) {
    double s = 0;
    for (int64_t c = 0; c < m; ++c) s += vx[r * m + c] - 1.0;
    for (int64_t c = 0; c < m; ++c)
      ASSERT_NEAR(bufs[0].as<float>()[r * m + c], (vx[r * m + c] - 1.0) / s, 1e-6);
  }
}

}  // namespace
}  // namespace polygrad_test
