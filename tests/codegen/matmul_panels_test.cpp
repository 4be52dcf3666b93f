// Matmul kernels reading operands from copies in panels (codegen::panel_packing): the
// packings the plan picks and the kernels' values on host-packed copies against plain C++.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "codegen/optimize.hpp"
#include "matmul_shapes.hpp"

namespace polygrad_test {
namespace {

using polygrad::range;

// The packings planned for AVX2's and AVX-512's vectors, whatever this host has.
TEST(Matmul, PanelPackingForLargeBsWithConflictingRowsOrShortBlocks) {
  using polygrad::codegen::panel_packing;
  for (const polygrad::codegen::Target& cpu : {avx2_target(), avx512_target()}) {
    const int64_t w = f32_lanes(cpu);  // 2 vectors per column block for widths a multiple of 2W
    SCOPED_TRACE(testing::Message() << w << " float lanes");
    // m, n, k of a @ b with b (k, n) row-major in slot 2, larger than half the 512 KiB L2
    for (auto [m, n, kk] : std::vector<std::array<int64_t, 3>>{
             {1024, 1024, 1024},        // 4 KiB rows: every row in one L1 set
             {512, 512, 512},           // 2 KiB rows, b 1 MiB
             {64, 128, 640},            // 512-byte rows, b 320 KiB
             {64, 34 * 2 * w, 512}}) {  // rows apart by no multiple of 512 bytes, short blocks
      std::optional<polygrad::codegen::PanelPacking> p =
          panel_packing(matmul_ast(m, n, kk), cpu, m);
      ASSERT_TRUE(p.has_value()) << m << " " << n << " " << kk;
      EXPECT_EQ(p->slot, 2);
      EXPECT_EQ(p->row, n);
      EXPECT_EQ(p->panel, 2 * w);
    }
    EXPECT_FALSE(panel_packing(matmul_ast(256, 256, 256), cpu, 256));  // b: half an L2
    EXPECT_FALSE(panel_packing(matmul_ast(32, 1024, 1024), cpu, 32));  // few rows of a
    // a @ b.T (the dot form): b (n, k) in panels of 2W rows, which turns the kernel into the
    // vector form; not for a small b or few rows.
    for (auto [m, n, kk] : std::vector<std::array<int64_t, 3>>{{1024, 1024, 1024}, {64, 96, 784}}) {
      std::optional<polygrad::codegen::PanelPacking> p =
          panel_packing(matmul_nt_ast(m, n, kk), cpu, m);
      ASSERT_TRUE(p.has_value()) << m << " " << n << " " << kk;
      EXPECT_TRUE(p->by_rows);
      EXPECT_EQ(p->slot, 2);
      EXPECT_EQ(p->row, kk);
      EXPECT_EQ(p->panel, 2 * w);
    }
    EXPECT_FALSE(panel_packing(matmul_nt_ast(256, 64, 784), cpu, 256));  // b 196 KiB
    EXPECT_FALSE(panel_packing(matmul_nt_ast(32, 1024, 1024), cpu, 32));
    // 7 vectors per column block (rows of 7 * 2W * 4 bytes: no multiple of 512): wide blocks
    // stream well as they are.
    EXPECT_FALSE(panel_packing(matmul_ast(256, 7 * w, 4096), cpu, 256));
    // a.T @ b with a (k, m) larger than the 512 KiB L2: a transposed whole (up to 16 MiB); a
    // smaller a stays, and b may take column panels instead.
    for (auto [m, n, kk] :
         std::vector<std::array<int64_t, 3>>{{1024, 1024, 1024}, {256, 64, 784}}) {
      std::optional<polygrad::codegen::PanelPacking> p =
          panel_packing(matmul_tn_ast(m, n, kk), cpu, m);
      ASSERT_TRUE(p.has_value()) << m << " " << n << " " << kk;
      EXPECT_TRUE(p->transpose_rows && p->by_rows);
      EXPECT_EQ(p->slot, 1);
      EXPECT_EQ(p->row, m);
    }
    std::optional<polygrad::codegen::PanelPacking> small =
        panel_packing(matmul_tn_ast(256, 256, 256), cpu, 256);
    EXPECT_TRUE(!small || !small->transpose_rows);
    std::optional<polygrad::codegen::PanelPacking> huge =
        panel_packing(matmul_tn_ast(2048, 64, 4096), cpu, 2048);  // a 32 MiB
    EXPECT_TRUE(!huge || !huge->transpose_rows);
    polygrad::codegen::Target gpu = cpu;
    gpu.caps.max_threads_per_group = 1024;
    gpu.caps.flags |= PG_CAP_GROUPS;
    EXPECT_FALSE(panel_packing(matmul_ast(1024, 1024, 1024), gpu, 1024));
  }
}

// A b in panels (what the scheduler's copy holds), read through panel_offset's index math:
// the codegen sees loads contiguous along the columns, in groups of the vector lanes, and
// vectorises them; values against plain C++. Panels of columns of a b (k, n), and panels of
// rows of a b (n, k) in a @ b.T, which the vector form then computes.
TEST(Matmul, PackedPanelsVectoriseAndMatchPlainCpp) {
  polygrad::codegen::Target t = cpu_target();
  if (f32_lanes(t) < 4) GTEST_SKIP() << "the cpu target declares fewer than 4 float lanes";
  const UOpRef probe = matmul_ast(64, 64, 64);
  const polygrad::codegen::UpcastPlan plan = polygrad::codegen::choose_upcast(probe, t);
  ASSERT_NE(plan.j, nullptr);
  ASSERT_EQ(plan.lanes, f32_lanes(t));
  const int64_t panel = int64_t{plan.vectors} * plan.lanes;
  const int64_t m = 20, n = 3 * panel, kk = 37;
  std::vector<float> av = exact_ints(m * kk, 1), bv = exact_ints(kk * n, 5);
  std::vector<float> want(static_cast<size_t>(m * n), 0.0f);
  for (int64_t r = 0; r < m; ++r)
    for (int64_t c = 0; c < n; ++c)
      for (int64_t x = 0; x < kk; ++x) want[r * n + c] += av[r * kk + x] * bv[x * n + c];
  for (const bool by_rows : {false, true}) {
    // b as stored: (kk, n), or (n, kk) for a @ b.T; then in panels of `panel` output columns.
    const int64_t rows = by_rows ? n : kk, row = by_rows ? kk : n;
    const polygrad::codegen::PanelPacking layout{2, row, panel, by_rows};
    std::vector<float> packed(bv.size());
    for (int64_t x = 0; x < kk; ++x)
      for (int64_t c = 0; c < n; ++c) {
        const int64_t r = by_rows ? c : x, col = by_rows ? x : c;
        const int64_t at = by_rows ? r / panel * row * panel + col * panel + r % panel
                                   : col / panel * rows * panel + r * panel + col % panel;
        packed[static_cast<size_t>(at)] = bv[x * n + c];
      }
    UOpRef i = range(idx(m), 0), j = range(idx(n), 1), k = range(idx(kk), 2);
    UOpRef o = global(0, dtypes::float32), a = global(1, dtypes::float32);
    UOpRef b = global(2, dtypes::float32);
    UOpRef b_off = polygrad::codegen::panel_offset(by_rows ? j * kk + k : k * n + j, rows, layout);
    const UOpRef ast =
        sink({store(o, i * n + j, reduce(Op::ADD, load(a, i * kk + k) * load(b, b_off), {k}))});
    const polygrad::codegen::UpcastPlan p = polygrad::codegen::choose_upcast(ast, t);
    ASSERT_NE(p.j, nullptr);
    EXPECT_EQ(p.dot_k, nullptr) << by_rows;
    EXPECT_EQ(int64_t{p.vectors} * p.lanes, panel) << by_rows;
    std::vector<HostBuf> bufs{HostBuf::zeros<float>(m * n), HostBuf::of(av), HostBuf::of(packed)};
    Compiled c = compile(ast, t);
    run(c, bufs);
    EXPECT_EQ(bufs[0].as<float>(), want) << by_rows;
    int vector_loads = 0;
    for (const pg_instruction& in : c.kernel.instructions)
      vector_loads += in.op == PG_OP_LOAD && in.vcount == p.lanes;
    EXPECT_GE(vector_loads, p.vectors) << c.source;
  }
}

// With 16 vector registers (32-byte vectors: 6-row blocks of 2 vectors), k sliced and 256 or
// more columns, once b is in column panels a goes into panels of its 6-row blocks, and the k
// slices grow from what keeps the panel's slice in L1 (128) to what keeps the row block's slice
// of a in half an L1 (512). Not with 32 registers. Values against plain C++ for 67 rows (a
// last, partial panel).
TEST(Matmul, SixteenRegistersReadTheRowOperandFromPanelsOfRowBlocks) {
  using polygrad::codegen::PanelPacking;
  polygrad::codegen::Target t = cpu_target();
  t.caps.vector_width_bytes = 32;
  t.caps.compute_units = 2;
  const int64_t m = 67, n = 256, kk = 1024;
  const UOpRef plain = matmul_ast(m, n, kk);
  std::optional<PanelPacking> pb = polygrad::codegen::panel_packing(plain, t, m);
  ASSERT_TRUE(pb.has_value());
  ASSERT_FALSE(pb->by_rows);
  const UOpRef b_packed = polygrad::codegen::read_from_panels(plain, kk, *pb);
  EXPECT_EQ(polygrad::codegen::choose_upcast(b_packed, t).k_tile, 128);
  std::optional<PanelPacking> pa = polygrad::codegen::panel_packing(b_packed, t, m);
  ASSERT_TRUE(pa.has_value());
  EXPECT_TRUE(pa->row_operand && pa->by_rows);
  EXPECT_EQ(pa->slot, 1);
  EXPECT_EQ(pa->row, kk);
  EXPECT_EQ(pa->panel, 6);
  const UOpRef ast = polygrad::codegen::read_from_panels(b_packed, m, *pa);
  const polygrad::codegen::UpcastPlan plan = polygrad::codegen::choose_upcast(ast, t);
  EXPECT_EQ(plan.rows, 6);
  EXPECT_EQ(plan.k_tile, 512);
  EXPECT_EQ(plan.col_blocks, 4);  // 16 blocks of 16 columns: two groups per compute unit
  polygrad::codegen::Target wide = t;
  wide.caps.vector_width_bytes = 64;
  std::optional<PanelPacking> none = polygrad::codegen::panel_packing(
      polygrad::codegen::read_from_panels(plain, kk, PanelPacking{2, n, 32, false}), wide, m);
  EXPECT_TRUE(!none || !none->row_operand);
  // Fewer than 256 columns: a copy of a costs more than the kernel gains.
  const UOpRef narrow = matmul_ast(m, 128, kk);
  std::optional<PanelPacking> nb = polygrad::codegen::panel_packing(narrow, t, m);
  ASSERT_TRUE(nb.has_value());
  std::optional<PanelPacking> na =
      polygrad::codegen::panel_packing(polygrad::codegen::read_from_panels(narrow, kk, *nb), t, m);
  EXPECT_TRUE(!na || !na->row_operand);

  expect_packed_matmul(ast, t, m, kk, n);
}

// With a in panels of its row blocks (16 registers), a column group takes up to 16 column
// blocks (256 columns), their k slices of b the whole L2: a's slice of all rows then streams
// from L3 once per 256 columns, not per 64. The wide-grouped kernel's values against plain
// C++.
TEST(Matmul, SixteenRegistersGroupUpTo256ColumnsWhenAIsInPanels) {
  using polygrad::codegen::PanelPacking;
  const polygrad::codegen::Target t = avx2_target();
  const int64_t m = 67, n = 2048, kk = 1024;
  const UOpRef plain = matmul_ast(m, n, kk);
  std::optional<PanelPacking> pb = polygrad::codegen::panel_packing(plain, t, m);
  ASSERT_TRUE(pb.has_value());
  const UOpRef b_packed = polygrad::codegen::read_from_panels(plain, kk, *pb);
  EXPECT_EQ(polygrad::codegen::choose_upcast(b_packed, t).col_blocks, 8);  // a read in rows
  std::optional<PanelPacking> pa = polygrad::codegen::panel_packing(b_packed, t, m);
  ASSERT_TRUE(pa.has_value() && pa->row_operand);
  const UOpRef ast = polygrad::codegen::read_from_panels(b_packed, m, *pa);
  const polygrad::codegen::UpcastPlan plan = polygrad::codegen::choose_upcast(ast, t);
  EXPECT_EQ(plan.k_tile, 512);
  EXPECT_EQ(plan.col_blocks, 16);

  expect_packed_matmul(ast, t, m, kk, n);
}

// A tail plan (8 lanes do not divide n) reads b from column panels, the last one partial, when
// its moved-back last vector lies within one panel (777: columns 769..776 in 768..783; 1023:
// 1015..1022 in 1008..1023); else, when b's rows are within a cache line of 4 KiB apart
// (1025 floats: 1017..1024 would cross two panels), from padded rows, the smallest multiple of
// the column block whose rows are not (1040). 1000 columns take a tail plan on AVX2 too (8
// lanes divide them, pairs of vectors do not: see choose_upcast); 1024 takes the column panels
// of the plain plan. Values of the packed 777 kernel against plain C++.
TEST(Matmul, TailPlansReadBFromPartialPanelsOrPaddedRows) {
  using polygrad::codegen::PanelPacking;
  const polygrad::codegen::Target t = avx2_target();
  const int64_t m = 70, kk = 300;
  for (const auto& [n, cols] :
       {std::pair<int64_t, int64_t>{777, 16}, {1000, 16}, {1023, 16}, {1025, 1040}}) {
    const UOpRef plain = matmul_ast(m, n, kk);
    ASSERT_TRUE(polygrad::codegen::choose_upcast(plain, t).tail) << n;
    std::optional<PanelPacking> p = polygrad::codegen::panel_packing(plain, t, m);
    ASSERT_TRUE(p.has_value()) << n;
    EXPECT_TRUE(p->padded) << n;
    EXPECT_EQ(p->row, n);
    EXPECT_EQ(p->panel, cols) << n;
  }
  {
    std::optional<PanelPacking> p = polygrad::codegen::panel_packing(matmul_ast(m, 1024, kk), t, m);
    EXPECT_TRUE(!p || !p->padded);
  }
  // Panels of 16 under 1025 columns: the moved-back vector would straddle two, so the vector
  // form's tail plan is refused for that layout.
  const PanelPacking straddle{.slot = 2, .row = 1025, .panel = 16, .padded = true};
  EXPECT_FALSE(polygrad::codegen::choose_upcast(
                   polygrad::codegen::read_from_panels(matmul_ast(m, 1025, kk), kk, straddle), t)
                   .tail);

  const int64_t n = 777;
  const UOpRef plain = matmul_ast(m, n, kk);
  const PanelPacking p = *polygrad::codegen::panel_packing(plain, t, m);
  const UOpRef ast = polygrad::codegen::read_from_panels(plain, kk, p);
  EXPECT_TRUE(polygrad::codegen::choose_upcast(ast, t).tail);
  std::vector<float> av = exact_ints(m * kk, 3), bv = exact_ints(kk * n, 8);
  // The last panel's columns past n are NaN: the kernel must not read them.
  std::vector<HostBuf> bufs{
      HostBuf::zeros<float>(m * n), HostBuf::of(av),
      HostBuf::of(column_panels(bv, kk, n, std::numeric_limits<float>::quiet_NaN()))};
  run(compile(ast, t), bufs);
  EXPECT_EQ(bufs[0].as<float>(), plain_matmul(av, bv, m, kk, n));
}

// A weight gradient out[i, j] = sum over the batch k of a[k, i] * b[k, j], the batch a launch
// variable: with 32-byte and with 64-byte vectors (16 and 32 registers), panel_packing puts b
// in panels of the column block and then a in panels of the row block, both laid out with the
// variable; one compiled kernel reads host-packed copies for two batch sizes exactly.
TEST(Matmul, WeightGradientOverTheBatchReadsBothOperandsFromPanels) {
  using polygrad::codegen::PanelPacking;
  const int64_t m = 300, n = 256;
  for (const uint32_t width : {32u, 64u}) {
    polygrad::codegen::Target t = cpu_target();
    t.caps.vector_width_bytes = width;
    t.caps.compute_units = 2;
    UOpRef nb = polygrad::define_var("n1", 1, 1 << 20);
    UOpRef i = range(idx(m), 0), j = range(idx(n), 1), k = range(nb, 2);
    UOpRef o = global(0, dtypes::float32), a = global(1, dtypes::float32);
    UOpRef b = global(2, dtypes::float32);
    UOpRef ast =
        sink({store(o, i * n + j, reduce(Op::ADD, load(a, k * m + i) * load(b, k * n + j), {k}))});
    std::optional<PanelPacking> pb = polygrad::codegen::panel_packing(ast, t, m, 300);
    ASSERT_TRUE(pb.has_value()) << width;
    EXPECT_EQ(pb->slot, 2);
    EXPECT_EQ(pb->rows_var, nb.get());
    ast = polygrad::codegen::read_from_panels(ast, 0, *pb);
    std::optional<PanelPacking> pa = polygrad::codegen::panel_packing(ast, t, m, 300);
    ASSERT_TRUE(pa.has_value()) << width;
    EXPECT_EQ(pa->slot, 1);
    EXPECT_EQ(pa->rows_var, nb.get());
    ast = polygrad::codegen::read_from_panels(ast, 0, *pa);
    const polygrad::codegen::UpcastPlan plan = polygrad::codegen::choose_upcast(ast, t);
    EXPECT_EQ(plan.rows, pa->panel) << width;
    EXPECT_EQ(int64_t{plan.vectors} * plan.lanes, pb->panel) << width;
    const Compiled c = compile(ast, t);
    const int64_t pr = pa->panel, pc = pb->panel;
    for (const int64_t batch : {300, 517}) {
      std::vector<float> av = exact_ints(batch * m, 5), bv = exact_ints(batch * n, 6);
      std::vector<float> ap(static_cast<size_t>((m + pr - 1) / pr * pr * batch)), bp(bv.size());
      for (int64_t e = 0; e < batch; ++e) {
        for (int64_t r = 0; r < m; ++r) ap[r / pr * batch * pr + e * pr + r % pr] = av[e * m + r];
        for (int64_t q = 0; q < n; ++q) bp[q / pc * batch * pc + e * pc + q % pc] = bv[e * n + q];
      }
      std::vector<float> want(static_cast<size_t>(m * n), 0.0f);
      for (int64_t e = 0; e < batch; ++e)
        for (int64_t r = 0; r < m; ++r)
          for (int64_t q = 0; q < n; ++q) want[r * n + q] += av[e * m + r] * bv[e * n + q];
      std::vector<HostBuf> bufs{HostBuf::zeros<float>(m * n), HostBuf::of(ap), HostBuf::of(bp)};
      run(c, bufs, {{"n1", batch}});
      EXPECT_EQ(bufs[0].as<float>(), want) << width << " batch " << batch;
    }
  }
}

// A copy of `rows` rows into panels in row blocks (codegen::copy_in_row_blocks), for a launch
// variable's row counts below, at and past a block of 8. Panels of columns: one that divides
// the row and two that do not (a second kernel writes the partial panel); panels of 6 rows
// (the last one partial). Every element at the offset the panel layout gives it, and a partial
// panel's slots past the row left unwritten. In the lowered block kernel, a panel of a
// multiple of 4 columns is stored in vectors, one per row and step; a narrower panel's P stores
// come after their loads, one after the other.
TEST(Matmul, PanelCopiesInRowBlocksWriteEveryElementAtItsPanelOffset) {
  using polygrad::codegen::PanelPacking;
  const float unwritten = -1.0f;
  struct Case {
    int64_t row, P;
    bool by_rows;
  };
  for (const Case& cs :
       {Case{96, 16, false}, Case{100, 6, false}, Case{20, 6, false}, Case{40, 6, true}}) {
    const int64_t row = cs.row, P = cs.P;
    UOpRef rows = polygrad::define_var("n0", 1, 1 << 20);
    UOpRef r = range(rows, 0), c = range(idx(row), 1);
    UOpRef o = global(0, dtypes::float32), in = global(1, dtypes::float32);
    UOpRef copy = sink({store(o, r * row + c, load(in, r * row + c))});
    const PanelPacking p{.slot = 1, .row = row, .panel = P, .by_rows = cs.by_rows};
    const std::vector<UOpRef> kernels = polygrad::codegen::copy_in_row_blocks(copy, rows, p);
    ASSERT_EQ(kernels.size(), cs.by_rows || row % P == 0 ? 1u : 2u) << row << " " << P;
    std::vector<Compiled> compiled;
    for (const UOpRef& k : kernels) compiled.push_back(compile(k));
    const std::vector<pg_instruction>& insts = compiled[0].kernel.instructions;
    auto is_store = [](const pg_instruction& in) { return in.op == PG_OP_STORE; };
    if (!cs.by_rows && P % 4 == 0) {
      EXPECT_EQ(std::count_if(insts.begin(), insts.end(), is_store), 4) << row << " " << P;
      for (const pg_instruction& in : insts)
        EXPECT_TRUE(!is_store(in) || in.vcount > 1) << row << " " << P;
    } else {
      auto first_store = std::find_if(insts.begin(), insts.end(), is_store);
      ASSERT_LE(first_store + P, insts.end());
      EXPECT_TRUE(std::all_of(first_store, first_store + P, is_store)) << row << " " << P;
    }
    for (const int64_t n : {1, 5, 8, 13}) {
      std::vector<float> src = exact_ints(n * row, 7 + n);
      for (size_t e = 0; e < src.size(); ++e) src[e] += static_cast<float>(e) * 16.0f;
      const int64_t size = cs.by_rows ? (n + P - 1) / P * P * row : (row + P - 1) / P * P * n;
      std::vector<float> want(static_cast<size_t>(size), unwritten);
      // Panels of rows: a last partial panel's rows past n hold copies of the last row.
      const int64_t rows_written = cs.by_rows ? (n + P - 1) / P * P : n;
      for (int64_t i = 0; i < rows_written; ++i)
        for (int64_t j = 0; j < row; ++j)
          want[cs.by_rows ? (i / P) * row * P + j * P + i % P : (j / P) * n * P + i * P + j % P] =
              src[std::min(i, n - 1) * row + j];
      std::vector<HostBuf> bufs{HostBuf::of(std::vector<float>(want.size(), unwritten)),
                                HostBuf::of(src)};
      for (const Compiled& k : compiled) run(k, bufs, {{"n0", n}});
      EXPECT_EQ(bufs[0].as<float>(), want) << row << " " << P << " rows " << n;
    }
  }
  // Panels wider than 32 elements, and rows shorter than a panel of columns, keep the copy
  // row by row.
  UOpRef rows = polygrad::define_var("n0", 1, 1 << 20);
  UOpRef r = range(rows, 0), c = range(idx(64), 1);
  UOpRef o = global(0, dtypes::float32), in = global(1, dtypes::float32);
  UOpRef copy = sink({store(o, r * 64 + c, load(in, r * 64 + c))});
  EXPECT_TRUE(polygrad::codegen::copy_in_row_blocks(copy, rows, {.slot = 1, .row = 64, .panel = 64})
                  .empty());
  EXPECT_TRUE(polygrad::codegen::copy_in_row_blocks(copy, rows, {.slot = 1, .row = 64, .panel = 80})
                  .empty());
}

}  // namespace
}  // namespace polygrad_test
