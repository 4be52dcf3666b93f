// The register-tiled matmul (codegen/optimize.hpp) against a plain C++ matmul, for sizes that
// divide the tile and sizes that do not, in both operand layouts (b k-major: the dot form),
// and the upcast plan the heuristic picks.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "codegen/optimize.hpp"
#include "matmul_shapes.hpp"

namespace polygrad_test {
namespace {

using polygrad::range;

TEST(Matmul, DotFormMatchesPlainCpp) {
  // Rows and columns upcast by 4, 2 or not at all (odd sizes), or by 3 with a gated last block
  // (16 vector registers), k vectorised (or too short).
  const std::vector<std::array<int64_t, 3>> sizes = {{64, 64, 64}, {8, 10, 128}, {33, 17, 48},
                                                     {1, 3, 32},   {5, 3, 16},   {16, 8, 784},
                                                     {7, 9, 1023}, {5, 6, 300},  {3, 5, 40}};
  for (auto [m, n, k] : sizes) check_matmul(m, n, k, true);
}

TEST(Matmul, DotFormPlanVectorisesTheReduceRange) {
  polygrad::codegen::Target t = cpu_target();
  const int w = static_cast<int>(f32_lanes(t));
  if (w < 2) GTEST_SKIP() << "the cpu target declares no float vectors";
  // The plan points into the AST: keep each AST alive while its plan is read.
  const UOpRef nt = matmul_nt_ast(64, 8, 8 * w);
  polygrad::codegen::UpcastPlan p = polygrad::codegen::choose_upcast(nt, t);
  ASSERT_NE(p.dot_k, nullptr);
  EXPECT_EQ(p.dot_k->arg_int(), 2);
  EXPECT_EQ(p.lanes, w);
  EXPECT_EQ(p.j->arg_int(), 1);
  // 16 vector registers (8 float lanes) hold 3 x 3 accumulators and 6 loads, for any size (a
  // last partial block is gated); 32 hold 4 x 4 and 8, upcasts that divide the sizes.
  const bool few_registers = t.caps.vector_width_bytes < 64;
  EXPECT_EQ(p.cols, few_registers ? 3 : 4);
  ASSERT_NE(p.i, nullptr);
  EXPECT_EQ(p.rows, few_registers ? 3 : 4);
  // 10 columns: 2 at a time; 7 rows: not upcast (with 16 registers: 3 and 3).
  const UOpRef nt_small = matmul_nt_ast(7, 10, 2 * w);
  polygrad::codegen::UpcastPlan q = polygrad::codegen::choose_upcast(nt_small, t);
  ASSERT_NE(q.dot_k, nullptr);
  EXPECT_EQ(q.cols, few_registers ? 3 : 2);
  EXPECT_EQ(q.i != nullptr, few_registers);
  // k shorter than two vectors: left scalar.
  EXPECT_EQ(polygrad::codegen::choose_upcast(matmul_nt_ast(8, 8, w), t).j, nullptr);
  // k that the full width does not divide (2W + 3, 1023): full vectors, then a scalar rest.
  for (int64_t kk : {2 * int64_t{w} + 3, int64_t{1023}}) {
    const UOpRef ragged = matmul_nt_ast(8, 8, kk);
    const polygrad::codegen::UpcastPlan r = polygrad::codegen::choose_upcast(ragged, t);
    ASSERT_NE(r.dot_k, nullptr) << kk;
    EXPECT_EQ(r.lanes, w) << kk;
    check_matmul(8, 8, kk, true);
  }
  // The k-major b loads become vector loads, one per column and step.
  Compiled c = compile(matmul_nt_ast(64, 8, 8 * w));
  const auto& ins = c.kernel.instructions;
  int vector_loads = 0;
  for (const pg_instruction& in : ins) {
    if (in.op != PG_OP_LOAD || in.vcount != w) continue;
    const pg_instruction& at = ins[c.kernel.operands[in.src_start]];
    vector_loads += at.addrspace == PG_ADDR_GLOBAL;
  }
  EXPECT_EQ(vector_loads, p.rows + p.cols) << c.source;
}

// The dot form's accumulators are lane-summed together (upcast::lane_sums): pairs of vectors
// fold into one of as many lanes until each lane is one accumulator's sum. With 4 x 4
// accumulators of 16 lanes that is 15 full-width adds and no narrower vector add (one at a
// time: 4 adds each, of 8, 4, 2 and 1 lanes). Values on the host's target, on AVX2's (3 x 3
// accumulators of 8 lanes: folds in pairs and alone) and on AVX-512's, against plain C++; the
// count on AVX-512's, whatever this host has.
TEST(Matmul, DotFormSumsTheAccumulatorsLanesTogether) {
  const polygrad::codegen::Target host = cpu_target(), avx2 = avx2_target(),
                                  avx512 = avx512_target();
  for (const polygrad::codegen::Target* t : {&host, &avx2, &avx512})
    for (auto [m, n, k] : std::vector<std::array<int64_t, 3>>{
             {64, 8, 128}, {9, 9, 64}, {5, 7, 48}, {1, 16, 32}, {13, 6, 1000}})
      check_matmul(m, n, k, true, t);
  // A target whose widest vector is 12 lanes (no power of two): each accumulator is summed
  // alone, 12 -> 6 -> 3 lanes, then one by one.
  polygrad::codegen::Target twelve = avx512;
  twelve.caps.max_vector_lanes = 12;
  const UOpRef nt = matmul_nt_ast(16, 8, 96);
  EXPECT_EQ(polygrad::codegen::choose_upcast(nt, twelve).lanes, 12);
  check_matmul(16, 8, 96, true, &twelve);
  const int w = static_cast<int>(f32_lanes(avx512));
  ASSERT_EQ(w, 16);
  Compiled c = compile(matmul_nt_ast(64, 8, 8 * w), avx512);
  int full = 0, narrower = 0;
  for (const pg_instruction& in : c.kernel.instructions) {
    if (in.op != PG_OP_ADD || in.dtype != PG_DTYPE_FLOAT32) continue;
    full += in.vcount == w;
    narrower += in.vcount > 1 && in.vcount < w;
  }
  EXPECT_EQ(full, 15) << c.source;
  EXPECT_EQ(narrower, 0) << c.source;
}

// Two matmuls summed in one kernel, x @ wi.T + h @ wh.T (an RNN step), each over its own k:
// the dot form vectorises both reduce loops (one with a scalar rest). Values against plain C++.
TEST(Matmul, DotFormOverTwoReducesOfTheirOwnRanges) {
  const int64_t m = 9, n = 12, kx = 64, kh = 37;
  UOpRef i = range(idx(m), 0), j = range(idx(n), 1), k = range(idx(kx), 2), q = range(idx(kh), 3);
  UOpRef o = global(0, dtypes::float32), x = global(1, dtypes::float32);
  UOpRef wi = global(2, dtypes::float32), h = global(3, dtypes::float32);
  UOpRef wh = global(4, dtypes::float32);
  const UOpRef ast =
      sink({store(o, i * n + j,
                  reduce(Op::ADD, load(x, i * kx + k) * load(wi, j * kx + k), {k}) +
                      reduce(Op::ADD, load(h, i * kh + q) * load(wh, j * kh + q), {q}))});
  // Float vectors of 2 lanes or more take the dot form here (either k spans two vectors).
  if (f32_lanes(cpu_target()) < 2) GTEST_SKIP() << "the cpu target declares no float vectors";
  const polygrad::codegen::UpcastPlan p = polygrad::codegen::choose_upcast(ast, cpu_target());
  ASSERT_EQ(p.dot_ks.size(), 2u);
  EXPECT_EQ(p.dot_ks[0].first->arg_int() + p.dot_ks[1].first->arg_int(), 5);
  std::vector<float> xv = exact_ints(m * kx, 1), wiv = exact_ints(n * kx, 2),
                     hv = exact_ints(m * kh, 3), whv = exact_ints(n * kh, 4);
  std::vector<float> want(static_cast<size_t>(m * n), 0.0f);
  for (int64_t r = 0; r < m; ++r)
    for (int64_t c = 0; c < n; ++c) {
      float a = 0, b = 0;
      for (int64_t t = 0; t < kx; ++t) a += xv[r * kx + t] * wiv[c * kx + t];
      for (int64_t t = 0; t < kh; ++t) b += hv[r * kh + t] * whv[c * kh + t];
      want[r * n + c] = a + b;
    }
  std::vector<HostBuf> bufs{HostBuf::zeros<float>(m * n), HostBuf::of(xv), HostBuf::of(wiv),
                            HostBuf::of(hv), HostBuf::of(whv)};
  run(compile(ast), bufs);
  EXPECT_EQ(bufs[0].as<float>(), want);
}

// A sum inside another's terms, both over ranges of their own and both depending on the
// output column: out[i, j] = sum_q x[i, q] * (w[j, q] * sum_k c[j, k]). The inner sums' lanes
// are summed first, then the outer ones' (each round jointly). Values against plain C++.
TEST(Matmul, DotFormSumsNestedReducesLanesInTurn) {
  const int64_t m = 8, n = 8, kq = 64, kc = 48;
  UOpRef i = range(idx(m), 0), j = range(idx(n), 1), q = range(idx(kq), 2), k = range(idx(kc), 3);
  UOpRef o = global(0, dtypes::float32), x = global(1, dtypes::float32);
  UOpRef w = global(2, dtypes::float32), c = global(3, dtypes::float32);
  const UOpRef inner = reduce(Op::ADD, load(c, j * kc + k), {k});
  const UOpRef ast = sink({store(
      o, i * n + j, reduce(Op::ADD, load(x, i * kq + q) * (load(w, j * kq + q) * inner), {q}))});
  if (f32_lanes(cpu_target()) < 2) GTEST_SKIP() << "the cpu target declares no float vectors";
  const polygrad::codegen::UpcastPlan p = polygrad::codegen::choose_upcast(ast, cpu_target());
  ASSERT_EQ(p.dot_ks.size(), 2u);
  std::vector<float> xv = exact_ints(m * kq, 5), wv = exact_ints(n * kq, 6),
                     cv = exact_ints(n * kc, 7);
  std::vector<float> want(static_cast<size_t>(m * n), 0.0f);
  for (int64_t r = 0; r < m; ++r)
    for (int64_t col = 0; col < n; ++col) {
      float s = 0, a = 0;
      for (int64_t t = 0; t < kc; ++t) s += cv[col * kc + t];
      for (int64_t t = 0; t < kq; ++t) a += xv[r * kq + t] * (wv[col * kq + t] * s);
      want[r * n + col] = a;
    }
  std::vector<HostBuf> bufs{HostBuf::zeros<float>(m * n), HostBuf::of(xv), HostBuf::of(wv),
                            HostBuf::of(cv)};
  run(compile(ast), bufs);
  EXPECT_EQ(bufs[0].as<float>(), want);
}

// Two REDUCEs free of the output column (a layernorm's row mean and mean square): no dot form.
TEST(Matmul, RowStatisticsAreNotADotForm) {
  const int64_t m = 8, n = 769;
  UOpRef i = range(idx(m), 0), j = range(idx(n), 1), k = range(idx(n), 2), q = range(idx(n), 3);
  UOpRef o = global(0, dtypes::float32), x = global(1, dtypes::float32);
  UOpRef mean = reduce(Op::ADD, load(x, i * n + k), {k});
  UOpRef sq = reduce(Op::ADD, load(x, i * n + q) * load(x, i * n + q), {q});
  const UOpRef ast = sink({store(o, i * n + j, (load(x, i * n + j) - mean) * sq)});
  EXPECT_TRUE(polygrad::codegen::choose_upcast(ast, cpu_target()).dot_ks.empty());
}

TEST(Matmul, MatchesPlainCpp) {
  // Sizes that divide the tile, sizes that do not, and k tiled with partial sums in the output
  // (16x1056x1024 with 8 or 16 lanes, 8x784x256 with 16).
  const std::vector<std::array<int64_t, 3>> sizes = {
      {64, 64, 64}, {33, 17, 5},   {1, 1, 1},        {16, 32, 3},  {6, 48, 9},
      {3, 16, 1},   {128, 96, 40}, {16, 1056, 1024}, {8, 784, 256}};
  for (auto [m, n, k] : sizes) check_matmul(m, n, k);
}

// The plans for AVX2's and AVX-512's vectors (8 and 16 float lanes), whatever this host has.
TEST(Matmul, PlanTilesDividingSizes) {
  for (const polygrad::codegen::Target& t : {avx2_target(), avx512_target()}) {
    const int w = static_cast<int>(f32_lanes(t));
    SCOPED_TRACE(testing::Message() << w << " float lanes");
    // The plan points into the AST: keep each AST alive while its plan is read.
    const UOpRef small = matmul_ast(64, 64, 64);
    polygrad::codegen::UpcastPlan p = polygrad::codegen::choose_upcast(small, t);
    ASSERT_NE(p.j, nullptr);
    EXPECT_EQ(p.lanes, w);
    EXPECT_EQ(p.j->arg_int(), 1);
    ASSERT_NE(p.i, nullptr);
    EXPECT_EQ(p.i->arg_int(), 0);
    EXPECT_GE(p.rows, 2);
    // 16 registers: 6 rows of 2 vectors (12 accumulators, 2 loads, a broadcast); 64 rows then
    // end in a gated block of 4. 32 registers: up to 12 rows (24 accumulators), 64 rows as 6
    // blocks of 11 (the last clamped).
    EXPECT_EQ(p.rows, t.caps.vector_width_bytes < 64 ? 6 : 11);
    EXPECT_EQ(p.k, nullptr);  // b's panel is small: no k tiles
    // A column block's panel of b larger than L1 (1024 rows of 2 vectors: 64 KiB with 8
    // lanes, 128 KiB with 16): k is tiled, in slices of at most 16 KiB. With 16 lanes, 256
    // rows (32 KiB) stay whole.
    const UOpRef big_ast = matmul_ast(16, 1056, 1024);
    polygrad::codegen::UpcastPlan big = polygrad::codegen::choose_upcast(big_ast, t);
    ASSERT_NE(big.k, nullptr);
    EXPECT_EQ(big.k->arg_int(), 2);
    EXPECT_GE(big.k_tile, 32);
    EXPECT_LE(big.k_tile * big.vectors * w * 4, 16 << 10);
    EXPECT_EQ(1024 % big.k_tile, 0);
    if (w == 16) {
      EXPECT_EQ(polygrad::codegen::choose_upcast(matmul_ast(16, 1056, 256), t).k, nullptr);
    }
    // 784 = 7 * 7 * 16 columns: 7 vectors per row share each load of a. 3 rows (8 as 3 + 3 +
    // 2, the last block clamped), not 4: 4 x 7 accumulators, 7 loaded vectors and a broadcast
    // would not fit 32 registers. Their 448-byte rows of b make a 256-row panel too large for
    // L1, and 7 column blocks cannot be grouped: k slices of 32 rows stay in L1.
    if (784 % w == 0 && (784 / w) % 2 != 0) {
      const UOpRef wide = matmul_ast(8, 784, 256);
      polygrad::codegen::UpcastPlan v = polygrad::codegen::choose_upcast(wide, t);
      EXPECT_EQ(v.vectors, 7);
      EXPECT_EQ(v.rows, 3);
      EXPECT_EQ(v.k_tile, 32);
      check_matmul(8, 784, 256, false, &t);
    }
    // 33x17: no vector width divides 17; the last vector is moved back (a tail plan).
    EXPECT_TRUE(polygrad::codegen::choose_upcast(matmul_ast(33, 17, 5), t).tail);
  }
}

// Columns no vector width of 4 or more divides (17, 555, 1023), or only a narrower one does
// and there are 4 full vectors or more (1000 with 16 lanes): full vectors, the last one of
// each row moved back to end at the last column and storing only the lanes the one before it
// did not. Values against plain C++, k slices (partial sums read back, the last slice
// shorter) included. For AVX2's and AVX-512's vectors, whatever this host has.
TEST(Matmul, ColumnsNoVectorDividesEndInAMovedBackVector) {
  for (const polygrad::codegen::Target& t : {avx2_target(), avx512_target()}) {
    const int64_t w = f32_lanes(t);
    SCOPED_TRACE(testing::Message() << w << " float lanes");
    const UOpRef odd = matmul_ast(33, 17, 5);
    const polygrad::codegen::UpcastPlan p = polygrad::codegen::choose_upcast(odd, t);
    ASSERT_NE(p.j, nullptr);
    EXPECT_TRUE(p.tail);
    EXPECT_EQ(p.lanes, w);
    EXPECT_EQ(p.vectors, 17 >= 2 * p.lanes ? 2 : 1);
    const UOpRef wide = matmul_ast(20, 4 * w + w / 2, 37);
    EXPECT_TRUE(polygrad::codegen::choose_upcast(wide, t).tail);
    EXPECT_FALSE(polygrad::codegen::choose_upcast(matmul_ast(20, w / 2 * 5, 37), t).tail);
    // (1001 x 1024: the 1024-row panel of b is beyond L1, so k is sliced.)
    const UOpRef sliced = matmul_ast(16, 1001, 1024);
    const polygrad::codegen::UpcastPlan q = polygrad::codegen::choose_upcast(sliced, t);
    EXPECT_TRUE(q.tail);
    EXPECT_GT(q.k_tile, 0);
    const std::vector<std::array<int64_t, 3>> sizes = {
        {33, 17, 5}, {5, 6, 3},  {9, 555, 40},     {7, 1023, 9},    {20, 4 * w + w / 2, 37},
        {1, 5, 1},   {13, 7, 2}, {16, 1001, 1024}, {16, 1025, 1025}};
    for (auto [m, n, k] : sizes) check_matmul(m, n, k, false, &t);
    // A k with no divisor half as long as the longest slice that fits (1031, prime): even
    // slices and a shorter last one, with the columns divided or not.
    for (int64_t n : {int64_t{1024}, int64_t{1001}}) {
      const UOpRef prime = matmul_ast(16, n, 1031);
      const polygrad::codegen::UpcastPlan r = polygrad::codegen::choose_upcast(prime, t);
      ASSERT_GT(r.k_tile, 0) << n;
      EXPECT_NE(1031 % r.k_tile, 0) << n;
      check_matmul(16, n, 1031, false, &t);
    }
  }
}

// Columns the target's full vector width does not divide (1000 with 16 float lanes) run in
// narrower vectors, and a k no power of two divides into slices of another divisor (1000 in
// slices of 125), instead of scalar code; values against plain C++. On AVX2's 8 lanes and
// AVX-512's 16, whatever this host has.
TEST(Matmul, NarrowerVectorsAndOtherDivisorsForOddSizes) {
  for (const polygrad::codegen::Target& t : {avx2_target(), avx512_target()}) {
    const int64_t full = f32_lanes(t), half = full / 2;
    const UOpRef odd = matmul_ast(20, half * 5, 37);  // 5 half-width vectors of columns
    const polygrad::codegen::UpcastPlan p = polygrad::codegen::choose_upcast(odd, t);
    ASSERT_NE(p.j, nullptr) << full;
    EXPECT_EQ(p.lanes, half) << full;
    EXPECT_EQ(int64_t{p.vectors} * p.lanes, half * 5) << full;
    check_matmul(20, half * 5, 37, false, &t);
    const UOpRef sliced = matmul_ast(16, 2 * full * 33, 1000);
    const polygrad::codegen::UpcastPlan q = polygrad::codegen::choose_upcast(sliced, t);
    ASSERT_NE(q.k, nullptr) << full;
    EXPECT_EQ(q.k_tile, 125) << full;
    check_matmul(16, 2 * full * 33, 1000, false, &t);
  }
}

// With AVX2's 16 registers, columns that 8 lanes divide but pairs of vectors do not (1000 =
// 125 x 8) take the tail plan's 6 x 2 tile, not 5 vectors of 2 rows; an odd count of pairs
// (2000 = 125 x 16) with a constant k too, so the k slices can group column blocks (the last
// group short). Values of the 1000-column kernel against plain C++.
TEST(Matmul, SixteenRegistersTakeSixRowsForOddVectorCounts) {
  const polygrad::codegen::Target t = avx2_target();
  for (const int64_t n : {int64_t{1000}, int64_t{2000}}) {
    const polygrad::codegen::UpcastPlan p =
        polygrad::codegen::choose_upcast(matmul_ast(64, n, 1024), t);
    EXPECT_TRUE(p.tail) << n;
    EXPECT_EQ(p.lanes, 8) << n;
    EXPECT_EQ(p.vectors, 2) << n;
    EXPECT_EQ(p.rows, 6) << n;
    EXPECT_GT(p.k_tile, 0) << n;
  }
  EXPECT_GT(polygrad::codegen::choose_upcast(matmul_ast(64, 2000, 2000), t).col_blocks, 1);
  // 40 columns stay 5 vectors: the tail's wasted sixth vector would cost more than rows gain.
  const polygrad::codegen::UpcastPlan narrow =
      polygrad::codegen::choose_upcast(matmul_ast(64, 40, 64), t);
  EXPECT_FALSE(narrow.tail);
  EXPECT_EQ(narrow.vectors, 5);
  check_matmul(23, 1000, 300, false, &t);
}

// One column block (8 or 40 columns) over a long k: with 2 compute units no k slices, whose
// loops would put the column blocks outermost and leave only the slices to launch over; the
// rows are launched instead. With 1 unit the slices stay, and the kernel is one launch step:
// the launch steps run in parallel (the plugin's threads, whatever the target says), and
// slices all add into the same outputs. Values against plain C++ (launched over the slices,
// they raced: wrong sums now and then).
TEST(Matmul, OneColumnBlockNeverLaunchesOverKSlices) {
  polygrad::codegen::Target t = avx2_target();
  for (const int64_t units : {int64_t{2}, int64_t{1}})
    for (const int64_t n : {int64_t{8}, int64_t{40}}) {
      t.caps.compute_units = static_cast<uint32_t>(units);
      const UOpRef ast = matmul_ast(130, n, 1025);
      const polygrad::codegen::UpcastPlan p = polygrad::codegen::choose_upcast(ast, t);
      EXPECT_EQ(p.k != nullptr, units == 1) << n;
      const uint32_t steps = polygrad::codegen::lower(ast, t).launch_global({})[0];
      if (units == 1)
        EXPECT_EQ(steps, 1u) << n;
      else
        EXPECT_GT(steps, 1u) << n;
      for (int rep = 0; rep < 3; ++rep) check_matmul(130, n, 1025, false, &t);
    }
}

// With k slices, column blocks loop inside the row loop (each row block's slice of a serves
// CB column blocks) while the launch keeps two steps per compute unit. Planned for 2 compute
// units and AVX2's and AVX-512's vectors, whatever this machine has. A column block is 2
// vectors (2W columns). With 16 registers (8 lanes) the slices keep a slice of the panel in L1
// (at most 128 rows); with 32 (16 lanes) the row block's slice of a (12 rows of KT) fits half
// an L1, planned here for the caches of a Sapphire Rapids core (48 KiB L1, 2 MiB L2): KT 512
// at k = 1024.
TEST(Matmul, KSlicesShareRowsAcrossColumnBlocks) {
  polygrad::codegen::Target wide = avx512_target();
  wide.caps.l1_cache_bytes = 48 << 10;
  wide.caps.l2_cache_bytes = 2 << 20;
  for (polygrad::codegen::Target t : {avx2_target(), wide}) {
    const int64_t w = f32_lanes(t);
    const int64_t kk = 1024;  // a panel of b (kk rows of 2W floats) beyond L1
    const UOpRef square = matmul_ast(1024, 1024, kk);  // 1024 / 2W column blocks
    polygrad::codegen::UpcastPlan p = polygrad::codegen::choose_upcast(square, t);
    ASSERT_NE(p.k, nullptr) << w;
    EXPECT_EQ(p.k_tile, w == 16 ? 512 : 128) << w;
    EXPECT_EQ(p.rows, w == 16 ? 12 : 6) << w;
    EXPECT_EQ(p.col_blocks, 8) << w;  // 32 (or 64) blocks: 4 (or 8) launch steps of 8
    t.caps.compute_units = 16;        // two steps per unit: 32 blocks cannot be grouped, 64 by 2
    EXPECT_EQ(polygrad::codegen::choose_upcast(square, t).col_blocks, w == 16 ? 1 : 2);
    t.caps.compute_units = 2;
    // 33 column blocks: with 16 registers a tail plan, its groups of 2 the last one short (17
    // launch steps); with 32, no groups.
    const UOpRef odd = matmul_ast(16, 33 * 2 * w, kk);
    const polygrad::codegen::UpcastPlan po = polygrad::codegen::choose_upcast(odd, t);
    EXPECT_EQ(po.tail, w == 8) << w;
    EXPECT_EQ(po.col_blocks, w == 8 ? 2 : 1) << w;
    check_matmul(16, 33 * 2 * w, kk, false, &t);
    // Values: 64 column blocks run as 8 launch steps of 8.
    const int64_t m = 16, n = 64 * 2 * w;
    const UOpRef cols = matmul_ast(m, n, kk);
    ASSERT_EQ(polygrad::codegen::choose_upcast(cols, t).col_blocks, 8) << w;
    check_matmul(m, n, kk, false, &t);
  }
}

// Panels of b small enough for L1 (128 rows of 2 vectors) but a b of 512 KiB: one k slice puts
// the column blocks outermost, so each panel stays in L1 across the row blocks instead of
// every row block streaming all of b.
TEST(Matmul, SmallPanelsOfALargeBGoColumnsOutermost) {
  polygrad::codegen::Target t = cpu_target();
  t.caps.compute_units = 2;
  const int64_t m = 20, n = 1024, kk = 128;
  if (f32_lanes(t) < 4) GTEST_SKIP() << "the cpu target declares fewer than 4 float lanes";
  const UOpRef ast = matmul_ast(m, n, kk);
  polygrad::codegen::UpcastPlan p = polygrad::codegen::choose_upcast(ast, t);
  ASSERT_EQ(p.vectors, 2);
  ASSERT_NE(p.k, nullptr);
  EXPECT_EQ(p.k_tile, kk);
  // A b of 256 KiB (512 columns) stays whole: rows outermost.
  EXPECT_EQ(polygrad::codegen::choose_upcast(matmul_ast(m, 512, kk), t).k, nullptr);
  check_matmul(m, n, kk, false, &t);
}

// The k tiling is planned for the caches the target declares (pg_capabilities, ABI 1.2): a
// panel of b (1024 rows of 2 vectors: 64 or 128 KiB) is sliced for a 32 KiB L1, taken whole
// with the columns outermost for a 256 KiB L1, and left alone when all of b (4.1 MiB) fits
// half of a 16 MiB L2. A target that declares none is planned for 32 KiB and 512 KiB. For
// AVX2's and AVX-512's vectors, whatever this host has.
TEST(Matmul, KTilingFollowsTheDeclaredCaches) {
  for (polygrad::codegen::Target t : {avx2_target(), avx512_target()}) {
    SCOPED_TRACE(testing::Message() << f32_lanes(t) << " float lanes");
    const UOpRef ast = matmul_ast(16, 1056, 1024);
    polygrad::codegen::UpcastPlan p = polygrad::codegen::choose_upcast(ast, t);
    ASSERT_NE(p.k, nullptr);
    EXPECT_LE(p.k_tile, 128);
    t.caps.l1_cache_bytes = 256 << 10;
    EXPECT_EQ(polygrad::codegen::choose_upcast(ast, t).k_tile, 1024);
    t.caps.l2_cache_bytes = 16 << 20;
    EXPECT_EQ(polygrad::codegen::choose_upcast(ast, t).k, nullptr);
    t.caps.l1_cache_bytes = t.caps.l2_cache_bytes = 0;
    EXPECT_EQ(polygrad::codegen::choose_upcast(ast, t).k_tile, p.k_tile);
    check_matmul(16, 1056, 1024, false, &t);
  }
}

TEST(Matmul, TiledKernelSharesOneReduceLoop) {
  polygrad::codegen::Target t = cpu_target();
  if (f32_lanes(t) < 4) GTEST_SKIP() << "the cpu target declares fewer than 4 float lanes";
  const UOpRef ast = matmul_ast(64, 64, 64);
  polygrad::codegen::UpcastPlan p = polygrad::codegen::choose_upcast(ast, t);
  ASSERT_NE(p.j, nullptr);
  ASSERT_NE(p.i, nullptr);
  Compiled c = compile(matmul_ast(64, 64, 64));
  int ranges = 0, vector_loads = 0, accumulators = 0;
  for (const pg_instruction& in : c.kernel.instructions) {
    ranges += in.op == PG_OP_RANGE;
    vector_loads += in.op == PG_OP_LOAD && in.vcount == p.lanes;
    accumulators += in.op == PG_OP_DEFINE_REG;
  }
  EXPECT_EQ(ranges, 2) << c.source;  // j' and k; i' is the launch index
  EXPECT_EQ(accumulators, p.rows * p.vectors) << c.source;
  EXPECT_GT(vector_loads, 0) << c.source;
}

/// out[r * n + c] = sum over (e, q) < (batch, pos) of a[(e * m + r) * pos + q] * b[b_at(e, q, c)]
/// (w[r * n + c] - 0.5 * the sum instead, given `w`: an SGD update), in plain loops.
template <typename BAt>
std::vector<float> batched_products(const std::vector<float>& a, const std::vector<float>& b,
                                    int64_t batch, int64_t m, int64_t n, int64_t pos, BAt b_at,
                                    const std::vector<float>* w = nullptr) {
  std::vector<float> out(static_cast<size_t>(m * n), 0.0f);
  for (int64_t r = 0; r < m; ++r)
    for (int64_t c = 0; c < n; ++c) {
      float s = 0;
      for (int64_t e = 0; e < batch; ++e)
        for (int64_t q = 0; q < pos; ++q) s += a[(e * m + r) * pos + q] * b[b_at(e, q, c)];
      out[r * n + c] = w != nullptr ? (*w)[r * n + c] - 0.5f * s : s;
    }
  return out;
}

// A convolution's weight gradient: out[o, c] = sum over (batch, p) of a[batch, o, p] *
// b[batch, p, c], the batch a launch variable. Sliced one batch element at a time (each column
// block's slice of b reused by every row block), one program for every batch size.
TEST(Matmul, TwoReduceRangesSliceByTheOuterOne) {
  polygrad::codegen::Target t = cpu_target();
  t.caps.compute_units = 2;
  const int64_t w = f32_lanes(t);
  if (w < 4) GTEST_SKIP() << "the cpu target declares fewer than 4 float lanes";
  const int64_t m = 20, n = 8 * w, pos = 49;  // 4 column blocks of 2 vectors
  UOpRef nb = polygrad::define_var("n1", 1, 1 << 20);
  UOpRef i = range(idx(m), 0), j = range(idx(n), 1), bt = range(nb, 2), p = range(idx(pos), 3);
  UOpRef o = global(0, dtypes::float32), a = global(1, dtypes::float32);
  UOpRef b = global(2, dtypes::float32);
  UOpRef prod = load(a, bt * (m * pos) + i * pos + p) * load(b, bt * (pos * n) + p * n + j);
  UOpRef ast = sink({store(o, i * n + j, reduce(Op::ADD, prod, {bt, p}))});
  polygrad::codegen::UpcastPlan plan = polygrad::codegen::choose_upcast(ast, t);
  ASSERT_EQ(plan.vectors, 2);
  EXPECT_EQ(plan.k_outer, bt.get());
  EXPECT_EQ(plan.k, p.get());
  EXPECT_EQ(plan.k_tile, pos);
  Compiled c = compile(ast, t);
  for (int64_t batch : {1, 3, 6}) {
    std::vector<float> av = exact_ints(batch * m * pos, batch), bv = exact_ints(batch * pos * n, 7);
    const std::vector<float> want =
        batched_products(av, bv, batch, m, n, pos,
                         [&](int64_t e, int64_t q, int64_t c) { return (e * pos + q) * n + c; });
    std::vector<HostBuf> bufs{HostBuf::zeros<float>(m * n), HostBuf::of(av), HostBuf::of(bv)};
    run(c, bufs, {{"n1", batch}});
    EXPECT_EQ(bufs[0].as<float>(), want) << "batch " << batch;
  }
}

// A weight gradient in the dot form: out[o, c] = sum over (batch, p) of a[batch, o, p] *
// b[batch, c, p], both operands contiguous along the inner reduce range p: p in vectors, the
// batch (a launch variable) a loop around it. b over every batch is beyond half an L2, so the
// kernel slices by groups of batch elements, each slice adding to the stored partial sums;
// with an SGD update fused in (w - 0.5 * sum), the first slice stores w - 0.5 * partial.
// The plan is the one for 32 vector registers (AVX-512's 64-byte vectors; with 16 the dot form
// takes 3 x 3 blocks, too narrow to slice), whatever this host has: clang splits the wider
// vectors for an AVX2 host, so the kernel still runs here.
TEST(Matmul, DotFormOverTheInnerOfTwoReduceRanges) {
  polygrad::codegen::Target t = cpu_target();
  t.caps.compute_units = 2;
  t.caps.vector_width_bytes = 64;
  const int64_t m = 12, n = 32, pos = 64;
  for (bool sgd : {false, true}) {
    UOpRef nb = polygrad::define_var("n1", 1, 1 << 20);
    UOpRef i = range(idx(m), 0), j = range(idx(n), 1), bt = range(nb, 2), p = range(idx(pos), 3);
    UOpRef o = global(0, dtypes::float32), a = global(1, dtypes::float32);
    UOpRef b = global(2, dtypes::float32);
    UOpRef prod = load(a, bt * (m * pos) + i * pos + p) * load(b, bt * (n * pos) + j * pos + p);
    UOpRef sum = reduce(Op::ADD, prod, {bt, p});
    UOpRef value =
        sgd ? load(o, i * n + j) - sum * polygrad::const_float(dtypes::float32, 0.5) : sum;
    UOpRef ast = sink({store(o, i * n + j, value)});
    polygrad::codegen::UpcastPlan plan = polygrad::codegen::choose_upcast(ast, t);
    ASSERT_EQ(plan.lanes, 16);
    EXPECT_EQ(plan.dot_k, p.get());
    EXPECT_EQ(plan.k_outer, bt.get());
    // Several batch elements per slice (the last slice takes the rest: 11 and 17 leave one
    // or more), column blocks in groups.
    EXPECT_GT(plan.k_group, 1);
    EXPECT_GT(plan.col_blocks, 1);
    Compiled c = compile(ast, t);
    for (int64_t batch : {1, 4, 11, 17}) {
      std::vector<float> av = exact_ints(batch * m * pos, 2), bv = exact_ints(batch * n * pos, 9);
      const std::vector<float> w = exact_ints(m * n, 4);
      const std::vector<float> want = batched_products(
          av, bv, batch, m, n, pos,
          [&](int64_t e, int64_t q, int64_t c) { return (e * n + c) * pos + q; },
          sgd ? &w : nullptr);
      std::vector<HostBuf> bufs{sgd ? HostBuf::of(w) : HostBuf::zeros<float>(m * n),
                                HostBuf::of(av), HostBuf::of(bv)};
      run(c, bufs, {{"n1", batch}});
      EXPECT_EQ(bufs[0].as<float>(), want) << "batch " << batch << (sgd ? " (sgd)" : "");
    }
  }
}

TEST(Matmul, ColumnSumsTakeEightVectorsPerStep) {
  // out[j] = sum_r x[r, j]: no row range to upcast, so each step takes 8 vectors (64 columns,
  // 4 cache lines of each row) where the launch keeps two blocks per compute unit; a narrow
  // matrix keeps fewer. Values on the host's own target against plain C++ (exact small ints).
  const polygrad::codegen::Target t = avx2_target();
  auto column_sum = [](int64_t rows, int64_t cols) {
    UOpRef r = range(idx(rows), 1), j = range(idx(cols), 0);
    UOpRef o = global(0, dtypes::float32), x = global(1, dtypes::float32);
    return sink({store(o, j, reduce(Op::ADD, load(x, r * cols + j), {r}))});
  };
  const UOpRef wide = column_sum(300, 1024), narrow = column_sum(300, 128);
  const polygrad::codegen::UpcastPlan p = polygrad::codegen::choose_upcast(wide, t);
  EXPECT_EQ(p.i, nullptr);
  EXPECT_EQ(p.lanes, 8);
  EXPECT_EQ(p.vectors, 8);
  EXPECT_EQ(polygrad::codegen::choose_upcast(narrow, t).vectors, 4);  // 4 blocks of 32
  const std::vector<float> xv = exact_ints(300 * 1024, 5);
  std::vector<HostBuf> bufs{HostBuf::zeros<float>(1024), HostBuf::of(xv)};
  run(compile(wide, t), bufs);
  const std::vector<float> out = bufs[0].as<float>();
  for (int64_t c = 0; c < 1024; ++c) {
    float want = 0;
    for (int64_t r = 0; r < 300; ++r) want += xv[r * 1024 + c];
    ASSERT_EQ(out[c], want) << "column " << c;
  }
}

TEST(Matmul, OneRowProductsReadPagesOfRowsInKSlices) {
  // out[j] = sum_k x[k] * w[k, j] (x @ w of one row, w large): k in slices of 16 rows outside
  // the column blocks, which loop in groups covering 16 KiB of each row per launch step;
  // partial sums in the output. Columns that no vector divides (a tail plan), columns that
  // blocks of 8 vectors do not divide (fewer vectors), and a symbolic k (the launch variable
  // the scheduler may make of it) with a short last slice. Values against plain C++ (exact
  // small ints), on both register files.
  for (const bool wide : {false, true}) {
    const polygrad::codegen::Target t = wide ? avx512_target() : avx2_target();
    const int64_t lanes = wide ? 16 : 8, vectors = wide ? 8 : 4;
    for (const auto& [n, kk, symbolic] :
         std::vector<std::tuple<int64_t, int64_t, bool>>{{5003, 100, false},
                                                         {6144, 100, false},
                                                         {4096 + 2 * lanes, 100, false},
                                                         {5003, 0, true}}) {
      UOpRef nk = symbolic ? polygrad::define_var("n0", 1, 1 << 20) : idx(kk);
      UOpRef j = range(idx(n), 0), k = range(nk, 1);
      UOpRef o = global(0, dtypes::float32), x = global(1, dtypes::float32);
      UOpRef w = global(2, dtypes::float32);
      UOpRef ast = sink({store(o, j, reduce(Op::ADD, load(x, k) * load(w, k * n + j), {k}))});
      const polygrad::codegen::UpcastPlan plan = polygrad::codegen::choose_upcast(ast, t);
      ASSERT_EQ(plan.j, j.get()) << n;
      EXPECT_EQ(plan.i, nullptr);
      EXPECT_EQ(plan.lanes, lanes);
      // (A tail plan too where lanes divide the columns but 16 registers take one, 4112 = 257
      // pairs of vectors: see choose_upcast.) Without a tail, the blocks divide the columns
      // (4096 + 2 vectors: blocks of 2 vectors, then no group of blocks divides 129 or 257).
      EXPECT_TRUE(plan.tail || n % lanes == 0) << n;
      if (plan.tail || n % (vectors * lanes) == 0) {
        EXPECT_EQ(plan.vectors, vectors) << n;
        EXPECT_GT(plan.col_blocks, 1) << n;
      } else {
        EXPECT_EQ(n % (int64_t{plan.vectors} * lanes), 0) << n;
      }
      EXPECT_EQ(plan.k, k.get());
      EXPECT_EQ(plan.k_tile, 16);
      EXPECT_LE(int64_t{plan.col_blocks} * plan.vectors * plan.lanes * 4,
                polygrad::codegen::cpu_tuning::kRowProductBytes)
          << n;
      Compiled c = compile(ast, t);
      for (const int64_t rows : symbolic ? std::vector<int64_t>{1, 16, 37} : std::vector{kk}) {
        const std::vector<float> xv = exact_ints(rows, 2), wv = exact_ints(rows * n, 5);
        std::vector<float> want(static_cast<size_t>(n), 0.0f);
        for (int64_t r = 0; r < rows; ++r)
          for (int64_t col = 0; col < n; ++col) want[col] += xv[r] * wv[r * n + col];
        std::vector<HostBuf> bufs{HostBuf::zeros<float>(n), HostBuf::of(xv), HostBuf::of(wv)};
        run(c, bufs,
            symbolic ? std::unordered_map<std::string, int64_t>{{"n0", rows}}
                     : std::unordered_map<std::string, int64_t>{});
        EXPECT_EQ(bufs[0].as<float>(), want) << "n " << n << ", k " << rows;
      }
    }
  }
}

TEST(Matmul, OneRowTimesBTransposedReadsRowsFromEightParts) {
  // out[j] = sum_k x[k] * b[j, k] (x @ b.T of one row): the dot form's 8 columns per step are
  // one row of b from each eighth of b, so a thread streams 8 long runs of rows; a symbolic
  // column count (the launch variable) leaves the last part short, its copies gated. A column
  // sum's partial rows (no row operand) keep neighbouring rows. Values against plain C++.
  const polygrad::codegen::Target t = avx512_target();
  const int64_t kk = 96;
  for (const bool symbolic : {false, true}) {
    UOpRef nj = symbolic ? polygrad::define_var("n0", 1, 1 << 20) : idx(1000);
    UOpRef j = range(nj, 0), k = range(idx(kk), 1);
    UOpRef o = global(0, dtypes::float32), x = global(1, dtypes::float32);
    UOpRef b = global(2, dtypes::float32);
    UOpRef ast = sink({store(o, j, reduce(Op::ADD, load(x, k) * load(b, j * kk + k), {k}))});
    const polygrad::codegen::UpcastPlan plan = polygrad::codegen::choose_upcast(ast, t);
    ASSERT_NE(plan.dot_k, nullptr);
    EXPECT_EQ(plan.i, nullptr);
    EXPECT_EQ(plan.cols, 8);
    EXPECT_TRUE(plan.strided_cols);
    Compiled c = compile(ast, t);
    for (const int64_t n :
         symbolic ? std::vector<int64_t>{1, 7, 8, 1001} : std::vector<int64_t>{1000}) {
      const std::vector<float> xv = exact_ints(kk, 3), bv = exact_ints(n * kk, 6);
      std::vector<float> want(static_cast<size_t>(n), 0.0f);
      for (int64_t r = 0; r < n; ++r)
        for (int64_t q = 0; q < kk; ++q) want[r] += xv[q] * bv[r * kk + q];
      std::vector<HostBuf> bufs{HostBuf::zeros<float>(n), HostBuf::of(xv), HostBuf::of(bv)};
      run(c, bufs,
          symbolic ? std::unordered_map<std::string, int64_t>{{"n0", n}}
                   : std::unordered_map<std::string, int64_t>{});
      EXPECT_EQ(bufs[0].as<float>(), want) << "n " << n;
    }
  }
  UOpRef r = range(idx(64), 1), j = range(idx(1024), 0);
  UOpRef rows = sink({store(global(0, dtypes::float32), j,
                            reduce(Op::ADD, load(global(1, dtypes::float32), j * 64 + r), {r}))});
  const polygrad::codegen::UpcastPlan sums = polygrad::codegen::choose_upcast(rows, t);
  ASSERT_NE(sums.dot_k, nullptr);
  EXPECT_EQ(sums.cols, 8);
  EXPECT_FALSE(sums.strided_cols);
}

}  // namespace
}  // namespace polygrad_test
