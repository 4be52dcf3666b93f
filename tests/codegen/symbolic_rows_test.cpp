// Register tiling over a symbolic row count (the launch variable n0: a batch size). The row
// upcast cannot assume n0 divides R, so the last block is clamped and its stores gated
// (optimize.hpp): one compiled kernel, run here for row counts that are and are not multiples
// of R, must give the values of plain C++ loops.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "codegen/optimize.hpp"
#include "matmul_shapes.hpp"

namespace polygrad_test {
namespace {

using polygrad::range;

const std::vector<int64_t> kRowCounts = {1, 3, 8, 19, 64};

UOpRef n0() {
  return polygrad::define_var("n0", 1, INT32_MAX);
}

/// out[i*N+j] = sum_k a[i*K+k] * b[k*N+j] (b_k_major: b[j*K+k]) with i over n0 rows.
UOpRef rows_ast(int64_t n, int64_t kk, bool b_k_major) {
  UOpRef i = range(n0(), 0), j = range(idx(n), 1), k = range(idx(kk), 2);
  UOpRef o = global(0, dtypes::float32), a = global(1, dtypes::float32);
  UOpRef b = global(2, dtypes::float32);
  UOpRef prod = load(a, i * kk + k) * load(b, b_k_major ? j * kk + k : k * n + j);
  return sink({store(o, i * n + j, reduce(Op::ADD, prod, {k}))});
}

/// The targets the kernels are planned and run for: AVX2's and AVX-512's vectors (16 and 32
/// registers), whatever this host has.
std::vector<polygrad::codegen::Target> vector_targets() {
  return {avx2_target(), avx512_target()};
}

/// The plan for the AST's symbolic range 0 upcasts it (rows or columns) by more than one.
void expect_symbolic_upcast(const UOpRef& ast, bool as_rows, const polygrad::codegen::Target& t) {
  polygrad::codegen::UpcastPlan p = polygrad::codegen::choose_upcast(ast, t);
  ASSERT_NE(p.j, nullptr);
  if (as_rows) {
    ASSERT_NE(p.i, nullptr);
    EXPECT_EQ(p.i->arg_int(), 0);
    EXPECT_GT(p.rows, 1);
  } else {
    EXPECT_EQ(p.j->arg_int(), 0);
    EXPECT_GT(p.cols, 1);
  }
}

/// The kernel `c` (rows_ast) against plain loops for every row count, a spare row left alone.
void check_rows_values(const Compiled& c, int64_t n, int64_t kk, bool b_k_major) {
  for (int64_t m : kRowCounts) {
    std::vector<float> a = exact_ints(m * kk, 1), b = exact_ints(kk * n, 5);
    std::vector<float> want(static_cast<size_t>(m * n), 0.0f);
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j)
        for (int64_t k = 0; k < kk; ++k)
          want[i * n + j] += a[i * kk + k] * b[b_k_major ? j * kk + k : k * n + j];
    // One spare row past the end: a gated store must leave it alone.
    std::vector<HostBuf> bufs{HostBuf::of(std::vector<float>(static_cast<size_t>((m + 1) * n), 7)),
                              HostBuf::of(a), HostBuf::of(b)};
    run(c, bufs, {{"n0", m}});
    std::vector<float> got = bufs[0].as<float>();
    want.resize(got.size(), 7);
    EXPECT_EQ(got, want) << m << " rows of " << n << "x" << kk << (b_k_major ? " (a @ b.T)" : "");
  }
}

/// rows_ast's plan and values on every vector target.
void check_rows(int64_t n, int64_t kk, bool b_k_major) {
  const UOpRef ast = rows_ast(n, kk, b_k_major);
  for (const polygrad::codegen::Target& t : vector_targets()) {
    SCOPED_TRACE(testing::Message() << f32_lanes(t) << " float lanes");
    expect_symbolic_upcast(ast, true, t);
    check_rows_values(compile(ast, t), n, kk, b_k_major);
  }
}

TEST(SymbolicRows, MatmulRowsAnyCount) {
  check_rows(64, 48, false);
}

TEST(SymbolicRows, DotFormRowsAnyCount) {
  check_rows(12, 64, true);
}

// A weight gradient fused with its SGD step, w -= lr * (g.T @ x), over n0 rows of w: k (the
// batch, 1024) is tiled, so the stores of later slices read back partial sums (gated loads)
// and must skip the rows past n0 as well. Planned and run for AVX2's and AVX-512's vectors,
// whatever this host has; `tail(t)`: whether t's plan moves the last vector back.
void check_in_place_update(int64_t n, bool (*tail)(const polygrad::codegen::Target&)) {
  const int64_t kk = 1024;
  UOpRef i = range(n0(), 0), j = range(idx(n), 1), k = range(idx(kk), 2);
  UOpRef w = global(0, dtypes::float32), g = global(1, dtypes::float32);
  UOpRef x = global(2, dtypes::float32);
  UOpRef grad = reduce(Op::ADD, load(g, k * n0() + i) * load(x, k * n + j), {k});
  UOpRef lr = polygrad::const_float(dtypes::float32, 0.5);
  const UOpRef ast = sink({store(w, i * n + j, load(w, i * n + j) - lr * grad)});
  for (const polygrad::codegen::Target& t : vector_targets()) {
    const int64_t lanes = f32_lanes(t);
    polygrad::codegen::UpcastPlan p = polygrad::codegen::choose_upcast(ast, t);
    ASSERT_NE(p.j, nullptr) << lanes << " lanes";
    ASSERT_NE(p.i, nullptr) << lanes << " lanes";
    EXPECT_NE(p.k, nullptr) << "expected k slices for a 1024-row panel of " << n << " columns, "
                            << lanes << " lanes";
    EXPECT_EQ(p.tail, tail(t)) << lanes << " lanes";
    const Compiled c = compile(ast, t);
    for (int64_t m : kRowCounts) {
      std::vector<float> w0 = exact_ints((m + 1) * n, 3), gv = exact_ints(kk * m, 1),
                         xv = exact_ints(kk * n, 5);
      std::vector<float> want = w0;
      for (int64_t r = 0; r < m; ++r)
        for (int64_t col = 0; col < n; ++col) {
          float s = 0;
          for (int64_t q = 0; q < kk; ++q) s += gv[q * m + r] * xv[q * n + col];
          want[r * n + col] = w0[r * n + col] - 0.5f * s;
        }
      std::vector<HostBuf> bufs{HostBuf::of(w0), HostBuf::of(gv), HostBuf::of(xv)};
      run(c, bufs, {{"n0", m}});
      EXPECT_EQ(bufs[0].as<float>(), want) << m << " rows of " << n << ", " << lanes << " lanes";
    }
  }
}

TEST(SymbolicRows, KTiledInPlaceUpdateAnyCount) {
  check_in_place_update(768, [](const polygrad::codegen::Target&) { return false; });
}

// The same with 1001 columns (no vector width divides them): the moved-back last vector of
// each row reads lanes the vector before it updates in place, and must not write them.
TEST(SymbolicRows, KTiledInPlaceUpdateOddColumns) {
  check_in_place_update(1001, [](const polygrad::codegen::Target&) { return true; });
}

// 784 columns, 49 column blocks of 16: with AVX2's 16 registers a tail plan too (see
// choose_upcast), its moved-back vector within the columns and nothing to move.
TEST(SymbolicRows, KTiledInPlaceUpdateOddBlocks) {
  check_in_place_update(
      784, [](const polygrad::codegen::Target& t) { return t.caps.vector_width_bytes == 32; });
}

// Row sums over n0 rows (the only output range, contiguous along k): the dot form's columns
// are the symbolic range, upcast by 8 and gated.
TEST(SymbolicRows, RowSumsAnyCount) {
  const int64_t kk = 64;
  UOpRef r = range(n0(), 0), k = range(idx(kk), 1);
  UOpRef o = global(0, dtypes::float32), a = global(1, dtypes::float32);
  const UOpRef ast = sink({store(o, r, reduce(Op::ADD, load(a, r * kk + k), {k}))});
  for (const polygrad::codegen::Target& t : vector_targets()) {
    SCOPED_TRACE(testing::Message() << f32_lanes(t) << " float lanes");
    expect_symbolic_upcast(ast, false, t);
    const Compiled c = compile(ast, t);
    for (int64_t m : kRowCounts) {
      std::vector<float> a = exact_ints(m * kk, 2), want(static_cast<size_t>(m + 1), 7);
      for (int64_t row = 0; row < m; ++row) {
        want[row] = 0;
        for (int64_t q = 0; q < kk; ++q) want[row] += a[row * kk + q];
      }
      std::vector<HostBuf> bufs{HostBuf::of(std::vector<float>(static_cast<size_t>(m + 1), 7)),
                                HostBuf::of(a)};
      run(c, bufs, {{"n0", m}});
      EXPECT_EQ(bufs[0].as<float>(), want) << m << " rows";
    }
  }
}

// A column sum's only output range is contiguous in its loads: the scheduler keeps it static,
// as vectorizes_along says; a row sum's is not.
TEST(SymbolicRows, VectorizesAlongOnlyContiguousRanges) {
  const int64_t kk = 64, n = 256;
  UOpRef jc = range(idx(n), 0), kc = range(idx(kk), 1);
  UOpRef o = global(0, dtypes::float32), a = global(1, dtypes::float32);
  const UOpRef cols = sink({store(o, jc, reduce(Op::ADD, load(a, kc * n + jc), {kc}))});
  UOpRef jr = range(idx(n), 0), kr = range(idx(kk), 1);
  const UOpRef rows = sink({store(o, jr, reduce(Op::ADD, load(a, jr * kk + kr), {kr}))});
  EXPECT_TRUE(polygrad::codegen::vectorizes_along(cols, jc.get()));
  EXPECT_FALSE(polygrad::codegen::vectorizes_along(rows, jr.get()));
}

}  // namespace
}  // namespace polygrad_test
