// Reductions: full and per-row sum/max/prod with odd sizes, softmax- and layernorm-shaped ASTs.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "harness.hpp"

namespace polygrad_test {
namespace {

using polygrad::range;

/// Values that are multiples of 1/4 below 4: every partial sum below 2^22 is exact in float32,
/// so the sum does not depend on the order the kernel adds in.
float quarter(int64_t i) {
  return 0.25f * static_cast<float>(i % 17);
}

TEST(Reduce, FullSumOddSize) {
  for (int64_t n : {int64_t{37}, int64_t{1000003}}) {  // (up to 16 terms unroll: no loop)
    UOpRef k = range(idx(n), 0);
    UOpRef o = global(0, dtypes::float32), a = global(1, dtypes::float32);
    UOpRef ast = sink({store(o, idx(0), reduce(Op::ADD, load(a, k), {k}))});
    std::vector<float> va(n);
    double want = 0;
    for (int64_t i = 0; i < n; ++i) want += va[i] = quarter(i);
    std::vector<HostBuf> bufs{HostBuf::zeros<float>(1), HostBuf::of(va)};
    Compiled c = compile(ast);
    EXPECT_EQ(c.kernel.name, "r");
    run(c, bufs);
    EXPECT_EQ(bufs[0].as<float>()[0], static_cast<float>(want)) << "n = " << n;
  }
}

TEST(Reduce, FullMaxInt32AndFloat32) {
  for (int64_t n : {int64_t{7}, int64_t{1000003}}) {
    UOpRef k = range(idx(n), 0);
    UOpRef oi = global(0, dtypes::int32), ai = global(1, dtypes::int32);
    UOpRef of = global(2, dtypes::float32), af = global(3, dtypes::float32);
    UOpRef ast = sink({store(oi, idx(0), reduce(Op::MAX, load(ai, k), {k})),
                       store(of, idx(0), reduce(Op::MAX, load(af, k), {k}))});
    std::vector<int32_t> vi(n);
    std::vector<float> vf(n);
    for (int64_t i = 0; i < n; ++i) {
      vi[i] = static_cast<int32_t>(-1000000 - ((i * 7919) % 100003));
      vf[i] = -1e30f + static_cast<float>((i * 104729) % 1000) * 1e27f;
    }
    std::vector<HostBuf> bufs{HostBuf::zeros<int32_t>(1), HostBuf::of(vi), HostBuf::zeros<float>(1),
                              HostBuf::of(vf)};
    lower_and_run(ast, bufs);
    EXPECT_EQ(bufs[0].as<int32_t>()[0], *std::max_element(vi.begin(), vi.end())) << n;
    EXPECT_EQ(bufs[2].as<float>()[0], *std::max_element(vf.begin(), vf.end())) << n;
  }
}

TEST(Reduce, MaxPropagatesNaN) {
  UOpRef k = range(idx(100), 0);
  UOpRef o = global(0, dtypes::float32), a = global(1, dtypes::float32);
  std::vector<float> va(100, 1.0f);
  va[37] = std::numeric_limits<float>::quiet_NaN();
  std::vector<HostBuf> bufs{HostBuf::zeros<float>(1), HostBuf::of(va)};
  lower_and_run(sink({store(o, idx(0), reduce(Op::MAX, load(a, k), {k}))}), bufs);
  EXPECT_TRUE(std::isnan(bufs[0].as<float>()[0]));
}

TEST(Reduce, ProdPerRow) {
  // out[i] = prod_k x[i * 7 + k] over 5 rows of 7 (int32) and of 23 (float64, tail lanes).
  UOpRef i = range(idx(5), 0), k = range(idx(7), 1), k2 = range(idx(23), 2);
  UOpRef oi = global(0, dtypes::int32), xi = global(1, dtypes::int32);
  UOpRef od = global(2, dtypes::float64), xd = global(3, dtypes::float64);
  UOpRef ast = sink({store(oi, i, reduce(Op::MUL, load(xi, i * 7 + k), {k})),
                     store(od, i, reduce(Op::MUL, load(xd, i * 23 + k2), {k2}))});
  std::vector<int32_t> vi(35);
  std::vector<double> vd(5 * 23);
  for (int n = 0; n < 35; ++n) vi[n] = n % 4 - 1;
  for (int n = 0; n < 5 * 23; ++n) vd[n] = n % 3 == 0 ? 2.0 : (n % 3 == 1 ? 0.5 : -1.0);
  std::vector<HostBuf> bufs{HostBuf::zeros<int32_t>(5), HostBuf::of(vi), HostBuf::zeros<double>(5),
                            HostBuf::of(vd)};
  Compiled c = compile(ast);
  EXPECT_EQ(c.kernel.name, "r_5");
  run(c, bufs);
  for (int r = 0; r < 5; ++r) {
    int32_t pi = 1;
    double pd = 1;
    for (int n = 0; n < 7; ++n) pi *= vi[r * 7 + n];
    for (int n = 0; n < 23; ++n) pd *= vd[r * 23 + n];
    EXPECT_EQ(bufs[0].as<int32_t>()[r], pi) << "row " << r;
    EXPECT_EQ(bufs[2].as<double>()[r], pd) << "row " << r;
  }
}

TEST(Reduce, SumPerRowAndOverTwoRanges) {
  // rows[i] = sum_k x[i*1000+k] (13 rows); total = sum_{i,k} x (both ranges reduced).
  UOpRef i = range(idx(13), 0), k = range(idx(1000), 1);
  UOpRef a = range(idx(13), 2), b = range(idx(1000), 3);
  UOpRef rows = global(0, dtypes::float32), x = global(1, dtypes::float32),
         total = global(2, dtypes::float32);
  UOpRef ast = sink({store(rows, i, reduce(Op::ADD, load(x, i * 1000 + k), {k})),
                     store(total, idx(0), reduce(Op::ADD, load(x, a * 1000 + b), {a, b}))});
  std::vector<float> vx(13000);
  for (int n = 0; n < 13000; ++n) vx[n] = quarter(n);
  std::vector<HostBuf> bufs{HostBuf::zeros<float>(13), HostBuf::of(vx), HostBuf::zeros<float>(1)};
  lower_and_run(ast, bufs);
  double all = 0;
  for (int r = 0; r < 13; ++r) {
    double s = 0;
    for (int n = 0; n < 1000; ++n) s += vx[r * 1000 + n];
    all += s;
    EXPECT_EQ(bufs[0].as<float>()[r], static_cast<float>(s)) << "row " << r;
  }
  EXPECT_EQ(bufs[2].as<float>()[0], static_cast<float>(all));
}

TEST(Reduce, SoftmaxValuesAndPlacement) {
  const int64_t n = 6, m = 37;
  std::vector<float> vx(n * m);
  for (int64_t t = 0; t < n * m; ++t) vx[t] = static_cast<float>((t * 37) % 23) * 0.7f - 5.0f;
  std::vector<HostBuf> bufs{HostBuf::zeros<float>(n * m), HostBuf::of(vx)};
  Compiled c = compile(softmax_ast(n, m));
  run(c, bufs);
  std::vector<float> out = bufs[0].as<float>();
  std::vector<double> want = softmax_ref(vx, n, m);
  for (int64_t t = 0; t < n * m; ++t) ASSERT_NEAR(out[t], want[t], 1e-6) << "element " << t;

  // The row max and the row sum are computed once per row: no MAX and no EXP2 inside the loop
  // over j (RANGE id 1), which reads the exponentials back from the output (stash.hpp); the
  // row index i is SPECIAL dim 0. Counted on
  // a target without SIMD lanes, where EXP2 stays one instruction (with lanes it is decomposed
  // into a polynomial, with MAXes of its own, for speed).
  polygrad::codegen::Target scalar = cpu_target();
  scalar.caps.vector_width_bytes = 4;
  c = compile(softmax_ast(n, m), scalar);
  const auto& ins = c.kernel.instructions;
  std::vector<uint32_t> open;  // indices of open RANGEs
  int max_in_j = 0, exp_in_j = 0, max_total = 0, specials = 0;
  bool in_j = false;
  for (uint32_t t = 0; t < ins.size(); ++t) {
    const pg_instruction& in = ins[t];
    if (in.op == PG_OP_RANGE) open.push_back(t);
    if (in.op == PG_OP_END_RANGE) open.pop_back();
    in_j = std::any_of(open.begin(), open.end(), [&](uint32_t r) { return ins[r].arg.i == 1; });
    if (in.op == PG_OP_SPECIAL) ++specials;
    if (in.op == PG_OP_MAX) ++max_total;
    if (in.op == PG_OP_MAX && in_j) ++max_in_j;
    if (in.op == PG_OP_EXP2 && in_j) ++exp_in_j;
  }
  EXPECT_EQ(specials, 1);
  EXPECT_GT(max_total, 0);
  EXPECT_EQ(max_in_j, 0);
  EXPECT_EQ(exp_in_j, 0);
  // And the j loop comes after both reductions: it is the last RANGE opened at top level.
  int last_top_range = -1;
  int depth = 0;
  for (uint32_t t = 0; t < ins.size(); ++t) {
    if (ins[t].op == PG_OP_RANGE && depth++ == 0) last_top_range = static_cast<int>(ins[t].arg.i);
    if (ins[t].op == PG_OP_END_RANGE) --depth;
  }
  EXPECT_EQ(last_top_range, 1);
}

TEST(Reduce, LayernormNestedReduce) {
  // mean_i = sum_k x/m; var_i = sum_k (x - mean_i)^2 / m (mean's REDUCE inside var's value,
  // over the same RANGE k); out = (x - mean) / sqrt(var + eps).
  const int64_t n = 5, m = 301;
  UOpRef i = range(idx(n), 0), j = range(idx(m), 1), k = range(idx(m), 2);
  UOpRef o = global(0, dtypes::float32), x = global(1, dtypes::float32);
  auto f = [](double v) { return polygrad::const_float(dtypes::float32, v); };
  UOpRef mean = reduce(Op::ADD, load(x, i * m + k), {k}) * f(1.0 / m);
  UOpRef d = load(x, i * m + k) - mean;
  UOpRef var = reduce(Op::ADD, d * d, {k}) * f(1.0 / m);
  UOpRef out = (load(x, i * m + j) - mean) *
               polygrad::alu(Op::RECIP, {polygrad::alu(Op::SQRT, {var + f(1e-5)})});
  std::vector<float> vx(n * m);
  for (int64_t t = 0; t < n * m; ++t) vx[t] = static_cast<float>((t * 13) % 29) * 0.3f + 1.0f;
  std::vector<HostBuf> bufs{HostBuf::zeros<float>(n * m), HostBuf::of(vx)};
  lower_and_run(sink({store(o, i * m + j, out)}), bufs);
  std::vector<float> got = bufs[0].as<float>();
  for (int64_t r = 0; r < n; ++r) {
    double mu = 0, v = 0;
    for (int64_t c = 0; c < m; ++c) mu += vx[r * m + c];
    mu /= m;
    for (int64_t c = 0; c < m; ++c) v += (vx[r * m + c] - mu) * (vx[r * m + c] - mu);
    v /= m;
    for (int64_t c = 0; c < m; ++c)
      ASSERT_NEAR(got[r * m + c], (vx[r * m + c] - mu) / std::sqrt(v + 1e-5), 2e-5)
          << r << "," << c;
  }
}

}  // namespace
}  // namespace polygrad_test
