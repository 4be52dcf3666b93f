// Matmul operands read from copies in panels (codegen::panel_packing, Scheduler::pack_panels):
// which copies a schedule makes, and values against plain C++ in double.
#include "cpu_fixture.hpp"
#include "graphs.hpp"
#include "random_values.hpp"
#include "runtime/buffers.hpp"
#include "runtime/runtime.hpp"
#include "runtime/schedule_cache.hpp"
#include "schedule/schedule.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <tuple>

namespace polygrad {
namespace {

using testgraph::random_floats;

class PanelsTest : public CpuDeviceTest {
 protected:
  pg_capabilities caps_ = runtime::device_handle(dev_).properties().caps;
  /// Float lanes of the device's vectors.
  int64_t lanes() const {
    return std::min<int64_t>(caps_.vector_width_bytes / 4, int64_t{caps_.max_vector_lanes});
  }
  /// Whether the device declares AVX2's vectors: 8 float lanes in 32 bytes (16 registers).
  bool avx2_vectors() const { return lanes() == 8 && caps_.vector_width_bytes == 32; }
  /// The schedule of `roots` made for the device's capabilities with AVX2's vectors and caches
  /// (32 KiB L1, 512 KiB L2), whatever this host declares: the layouts of 8-lane plans,
  /// checked on every host (their values run on the device where it declares those vectors).
  schedule::Schedule avx2_schedule(const std::vector<UOpRef>& roots) {
    schedule::Context ctx;
    ctx.device = dev_;
    ctx.new_buffer = [this](const std::string&, DType t, int64_t n) {
      return lazy::buffer(t, n, next_id_++);
    };
    ctx.buffer_device = [this](const UOp*) { return dev_; };
    ctx.target = [this](const std::string&) {
      codegen::Target t;
      t.caps = caps_;
      t.caps.vector_width_bytes = 32;
      t.caps.l1_cache_bytes = 32 << 10;
      t.caps.l2_cache_bytes = 512 << 10;
      return t;
    };
    return schedule::make_schedule(roots, ctx);
  }
  /// A float32 tensor of shape `s` the scheduler takes as realised (no memory, no values).
  UOpRef placeholder(const lazy::Shape& s) {
    return lazy::reshape(lazy::buffer(dtypes::float32, lazy::numel(s), next_id_++), s);
  }

 private:
  int64_t next_id_ = int64_t{1} << 40;  // clear of the runtime's buffer ids
};

std::vector<double> plain_matmul(const std::vector<float>& a, const std::vector<float>& b,
                                 int64_t m, int64_t k, int64_t n) {
  std::vector<double> c(static_cast<size_t>(m * n), 0.0);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t x = 0; x < k; ++x)
      for (int64_t j = 0; j < n; ++j) c[i * n + j] += double{a[i * k + x]} * b[x * n + j];
  return c;
}

/// How far a float32 sum of k products of values in [-1, 1] may be from the exact sum: its
/// partial sums grow to about sqrt(k) and each step rounds; 1e-6 per term bounds that with
/// room (k comes from the L2 size, 2112 on a 2 MiB L2: errors up to 1.1e-4 seen there).
double sum_tolerance(int64_t k) {
  return 1e-6 * static_cast<double>(k);
}

/// The (cols, rows) transpose of a row-major (rows, cols) matrix.
std::vector<float> transposed(const std::vector<float>& v, int64_t rows, int64_t cols) {
  std::vector<float> t(static_cast<size_t>(rows * cols));
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) t[c * rows + r] = v[r * cols + c];
  return t;
}

// A realised b larger than half an L2, with rows a multiple of 512 bytes apart or column
// blocks of one or two cache lines: the matmul reads it from a copy in column panels, the
// schedule's first kernel (a may follow in panels of rows, see below).
TEST_F(PanelsTest, MatmulReadsALargeOperandFromAPackedCopy) {
  const int64_t w = lanes();
  if (w < 2) GTEST_SKIP() << "the device has no vector lanes";
  // 128 columns (512-byte rows), and 34 column blocks of 2W (rows no multiple of 512 bytes
  // apart); k rows past half of whatever L2 this machine declares.
  for (const int64_t n : {int64_t{128}, 34 * 2 * w}) {
    const int64_t m = 64,
                  k = std::max<int64_t>(640, int64_t(caps_.l2_cache_bytes / 2 / (4 * n)) + 64);
    std::vector<float> av = random_floats(m * k, 11, -1, 1), bv = random_floats(k * n, 12, -1, 1);
    UOpRef mm = testgraph::matmul(input(av, {m, k}), input(bv, {k, n}), m, k, n);
    schedule::Schedule s = runtime::cached_schedule({mm}, dev_);
    ASSERT_GE(s.items.size(), 2u) << n;  // the packed copy of b, ..., the matmul reading it
    EXPECT_EQ(lazy::buffer_count(s.items[0].buffers[0].get()), k * n);
    EXPECT_EQ(s.items.back().buffers[2], s.items[0].buffers[0]);
    std::vector<float> got = values(mm);
    std::vector<double> want = plain_matmul(av, bv, m, k, n);
    for (int64_t i = 0; i < m * n; ++i)
      ASSERT_NEAR(got[i], want[i], sum_tolerance(k)) << n << ": " << i;
  }
  // a @ b.T with b (n, k) larger than half an L2: b is read from panels of rows (or, with n
  // no multiple of the width, from b transposed whole), values as plain C++ computes them.
  for (const int64_t n : {4 * 2 * w, 4 * 2 * w + 3}) {
    const int64_t m = 96, k = int64_t(caps_.l2_cache_bytes / 2 / (4 * n)) + 64;
    std::vector<float> av = random_floats(m * k, 13, -1, 1), bv = random_floats(n * k, 14, -1, 1);
    UOpRef bt = lazy::permute(input(bv, {n, k}), {1, 0});
    UOpRef mm = testgraph::matmul(input(av, {m, k}), bt, m, k, n);
    schedule::Schedule s = runtime::cached_schedule({mm}, dev_);
    ASSERT_GE(s.items.size(), 2u);
    EXPECT_EQ(s.items.back().buffers[2], s.items[0].buffers[0]);
    std::vector<float> bkn(static_cast<size_t>(k * n));
    for (int64_t x = 0; x < k; ++x)
      for (int64_t j = 0; j < n; ++j) bkn[x * n + j] = bv[j * k + x];
    std::vector<float> got = values(mm);
    std::vector<double> want = plain_matmul(av, bkn, m, k, n);
    for (int64_t i = 0; i < m * n; ++i)
      ASSERT_NEAR(got[i], want[i], sum_tolerance(k)) << "a @ b.T, n " << n << ": " << i;
  }
  // a.T @ b with a (k, m) larger than an L2: k walks the outer axis of both, as the batch of a
  // weight gradient does, so it stays a launch variable and a is read from panels of the row
  // blocks (per k step a row block reads a row of a apart); values as plain C++.
  {
    const int64_t m = 256, n = 34 * 2 * w + 5, k = int64_t(caps_.l2_cache_bytes / (4 * m)) + 64;
    std::vector<float> av = random_floats(k * m, 15, -1, 1), bv = random_floats(k * n, 16, -1, 1);
    UOpRef at = lazy::permute(input(av, {k, m}), {1, 0});
    UOpRef mm = testgraph::matmul(at, input(bv, {k, n}), m, k, n);
    schedule::Schedule s = runtime::cached_schedule({mm}, dev_);
    ASSERT_GE(s.items.size(), 2u);
    EXPECT_EQ(s.items.back().buffers[1], s.items[0].buffers[0]);  // a's copy
    std::vector<float> amk(static_cast<size_t>(m * k));
    for (int64_t x = 0; x < k; ++x)
      for (int64_t i = 0; i < m; ++i) amk[i * k + x] = av[x * m + i];
    std::vector<float> got = values(mm);
    std::vector<double> want = plain_matmul(amk, bv, m, k, n);
    for (int64_t i = 0; i < m * n; ++i)
      ASSERT_NEAR(got[i], want[i], sum_tolerance(k)) << "a.T @ b: " << i;
  }
  // Few rows of a: no copy.
  UOpRef few =
      testgraph::matmul(input(random_floats(32 * 1024, 1), {32, 1024}),
                        input(random_floats(1024 * 1024, 2), {1024, 1024}), 32, 1024, 1024);
  EXPECT_EQ(runtime::cached_schedule({few}, dev_).items.size(), 1u);
}

// With 16 vector registers (AVX2: 6-row blocks of 2 vectors) and k sliced (a column block's
// panel of b beyond an L1), the matmul reads a from panels of 6 rows, copied by a kernel over
// a's rows: the copy holds ceil(m / 6) panels, and the matmul and the copy take the row count
// at launch. The schedule of an m x k by k x 256 matmul:
void expect_row_operand_panels(const schedule::Schedule& s, int64_t m, int64_t k) {
  ASSERT_EQ(s.items.size(), 3u) << m;  // b in column panels, a in row panels, the matmul
  const schedule::Item& copy = s.items[1];
  EXPECT_EQ(lazy::buffer_count(copy.buffers[0].get()), (m + 5) / 6 * 6 * k) << m;
  EXPECT_EQ(s.items[2].buffers[1], copy.buffers[0]) << m;
  ASSERT_EQ(copy.vars.size(), 1u) << m;
  EXPECT_EQ(copy.vars[0].second, m);
}

TEST_F(PanelsTest, RowOperandInPanelsOfRowBlocksOnAvx2Vectors) {
  const int64_t n = 256, k = 2048;  // k as below for a 32 KiB L1
  const UOpRef b = placeholder({k, n});
  for (const int64_t m : {100, 64, 131, 67}) {
    UOpRef mm = testgraph::matmul(placeholder({m, k}), b, m, k, n);
    expect_row_operand_panels(avx2_schedule({mm}), m, k);
  }
}

// The same on the device, where it declares AVX2's vectors: row counts that 6 does not divide
// share both kernels, and values are exact.
TEST_F(PanelsTest, RowOperandInPanelsOfRowBlocksServesEveryRowCount) {
  if (!avx2_vectors())
    GTEST_SKIP() << "the row panels are the plan of 8-lane vectors in 16 registers";
  const int64_t n = 256;
  const int64_t k = std::max<int64_t>(1024, 4 * static_cast<int64_t>(caps_.l1_cache_bytes) / 64);
  std::vector<float> bv = random_floats(k * n, 21, -1, 1);
  const UOpRef b = input(bv, {k, n});
  size_t compiled = 0;
  for (const int64_t m : {100, 64, 131, 67}) {
    std::vector<float> av = random_floats(m * k, static_cast<unsigned>(m), -1, 1);
    UOpRef mm = testgraph::matmul(input(av, {m, k}), b, m, k, n);
    expect_row_operand_panels(runtime::cached_schedule({mm}, dev_), m, k);
    if (HasFatalFailure()) return;
    std::vector<float> got = values(mm);
    std::vector<double> want = plain_matmul(av, bv, m, k, n);
    for (int64_t i = 0; i < m * n; ++i) ASSERT_NEAR(got[i], want[i], 2e-4) << m << ": " << i;
    if (m == 100) compiled = runtime::compiled_kernel_count();
  }
  EXPECT_EQ(runtime::compiled_kernel_count(), compiled) << "a new row count compiled a kernel";
}

// A weight gradient dW = dy.T @ x reduces over the batch, which walks the outer axis of dy
// (batch, m) and x (batch, n): the batch stays a launch variable, and both operands are read
// from copies in panels (x in column blocks, dy in row blocks) written by kernels over the batch
// rows. Three batch sizes share every kernel; values against plain C++. Then the same with the
// SGD update fused in (w.assign(w - lr * dW)), an assign kernel.
TEST_F(PanelsTest, WeightGradientOperandsInPanelsKeepTheBatchAVariable) {
  const int64_t w = lanes();
  if (w < 4) GTEST_SKIP() << "the device has too few vector lanes";
  const int64_t m = 300, n = 32 * w;
  // Past half an L2 for both operands, whatever this machine declares.
  const int64_t least = int64_t(caps_.l2_cache_bytes / 2 / (4 * std::min(m, n))) + 16;
  size_t compiled = 0;
  for (const int64_t batch : {least + 37, least, least + 200}) {
    std::vector<float> dyv = random_floats(batch * m, 31, -1, 1),
                       xv = random_floats(batch * n, 32, -1, 1);
    UOpRef dyt = lazy::permute(input(dyv, {batch, m}), {1, 0});
    UOpRef mm = testgraph::matmul(dyt, input(xv, {batch, n}), m, batch, n);
    schedule::Schedule s = runtime::cached_schedule({mm}, dev_);
    ASSERT_EQ(s.items.size(), 3u) << batch;  // x's copy, dy's copy, the matmul
    for (size_t c = 0; c < 2; ++c) {
      ASSERT_EQ(s.items[c].vars.size(), 1u) << c;
      EXPECT_EQ(s.items[c].vars[0].second, batch) << c;
    }
    EXPECT_EQ(s.items[2].buffers[2], s.items[0].buffers[0]);
    EXPECT_EQ(s.items[2].buffers[1], s.items[1].buffers[0]);
    bool batch_var = false;
    for (const auto& [name, value] : s.items[2].vars) batch_var = batch_var || value == batch;
    EXPECT_TRUE(batch_var) << "the matmul takes the batch at launch";
    std::vector<float> got = values(mm);
    std::vector<double> want = plain_matmul(transposed(dyv, batch, m), xv, m, batch, n);
    for (int64_t i = 0; i < m * n; ++i) ASSERT_NEAR(got[i], want[i], 2e-4) << batch << ": " << i;
    if (compiled == 0) compiled = runtime::compiled_kernel_count();
  }
  EXPECT_EQ(runtime::compiled_kernel_count(), compiled) << "a new batch size compiled a kernel";

  // The SGD update fused in: an assign kernel packs its operands too.
  const int64_t batch = least + 5;
  std::vector<float> dyv = random_floats(batch * m, 41, -1, 1),
                     xv = random_floats(batch * n, 42, -1, 1);
  std::vector<float> wv = random_floats(m * n, 43, -1, 1);
  UOpRef weights = input(wv, {m, n});
  UOpRef mm = testgraph::matmul(lazy::permute(input(dyv, {batch, m}), {1, 0}),
                                input(xv, {batch, n}), m, batch, n);
  UOpRef update = lazy::assign(
      weights, testgraph::ew(Op::SUB, weights,
                             testgraph::ew(Op::MUL, mm, testgraph::scalar_like(mm, 0.5, {m, n}))));
  schedule::Schedule s = runtime::cached_schedule({update}, dev_);
  ASSERT_EQ(s.items.size(), 3u);
  runtime::realize({update}, dev_);
  std::vector<float> got(static_cast<size_t>(m * n));
  runtime::to_host(weights, got.data());
  std::vector<double> grad = plain_matmul(transposed(dyv, batch, m), xv, m, batch, n);
  for (int64_t i = 0; i < m * n; ++i)
    ASSERT_NEAR(got[i], wv[i] - 0.5 * grad[i], 2e-4) << "sgd: " << i;
}

// dW = dy.T @ x with few columns (fewer than the 256 that pay for a row operand's copy
// otherwise) and dy's rows 4 KiB apart, in one L1 set: every batch step's line of dy would miss,
// so dy is read from a copy in panels of the row block all the same. Values against plain C++.
TEST_F(PanelsTest, TransposedRowOperandInFewSetsIsPackedForFewColumns) {
  const int64_t w = lanes();
  if (w < 4) GTEST_SKIP() << "the device has too few vector lanes";
  const int64_t m = 1024, n = 8 * w;
  const int64_t batch = int64_t(caps_.l2_cache_bytes / (4 * m)) + 40;  // dy past an L2
  std::vector<float> dyv = random_floats(batch * m, 51, -1, 1),
                     xv = random_floats(batch * n, 52, -1, 1);
  UOpRef dy = input(dyv, {batch, m});
  UOpRef mm = testgraph::matmul(lazy::permute(dy, {1, 0}), input(xv, {batch, n}), m, batch, n);
  schedule::Schedule s = runtime::cached_schedule({mm}, dev_);
  const UOp* dy_buffer = dy->op() == Op::BUFFER ? dy.get() : dy->src(0).get();
  bool dy_packed = false;
  for (size_t c = 0; c + 1 < s.items.size(); ++c) {
    const auto& bufs = s.items[c].buffers;
    const auto& reads = s.items.back().buffers;
    dy_packed =
        dy_packed || (std::find(bufs.begin() + 1, bufs.end(), dy_buffer->ref()) != bufs.end() &&
                      std::find(reads.begin(), reads.end(), bufs[0]) != reads.end());
  }
  EXPECT_TRUE(dy_packed) << "the matmul reads dy from a copy";
  std::vector<float> got = values(mm);
  std::vector<double> want = plain_matmul(transposed(dyv, batch, m), xv, m, batch, n);
  for (int64_t i = 0; i < m * n; ++i) ASSERT_NEAR(got[i], want[i], 2e-4) << i;
}

// A tail plan (the column block does not divide n): b is read from a copy written by a kernel
// over b's rows, in column panels with a partial last one when the plan's moved-back last
// vector lies within a panel (1023 columns), else in rows padded to 1040 when b's rows share a
// few L1 sets (1025, 4100 bytes apart). 1023 columns: 63 panels of 16 copied in blocks of rows,
// then the partial last one (two copy kernels); 1025: rows padded to one panel of 1040, copied
// row by row. (n, the columns b's copy holds per row, the schedule's items.)
const std::tuple<int64_t, int64_t, size_t> kTailLayouts[] = {{1023, 1024, 3}, {1025, 1040, 2}};

/// The schedule of a 70 x 300 by 300 x n matmul with b read from a copy of `packed` columns.
void expect_b_copy(const schedule::Schedule& s, int64_t n, int64_t packed, size_t items) {
  const int64_t k = 300;
  ASSERT_EQ(s.items.size(), items) << n;  // the copy of b, the matmul reading it
  EXPECT_EQ(lazy::buffer_count(s.items[0].buffers[0].get()), k * packed) << n;
  EXPECT_EQ(s.items.back().buffers[2], s.items[0].buffers[0]) << n;
}

TEST_F(PanelsTest, TailPlansReadBFromPartialPanelsOrPaddedRowsOnAvx2Vectors) {
  for (const auto& [n, packed, items] : kTailLayouts) {
    const int64_t m = 70, k = 300;
    UOpRef mm = testgraph::matmul(placeholder({m, k}), placeholder({k, n}), m, k, n);
    expect_b_copy(avx2_schedule({mm}), n, packed, items);
  }
}

// The same on the device, where it declares AVX2's vectors; values as plain C++.
TEST_F(PanelsTest, TailPlansReadBFromPartialPanelsOrPaddedRows) {
  if (!avx2_vectors()) GTEST_SKIP() << "the layouts checked are those of 8-lane column blocks";
  for (const auto& [n, packed, items] : kTailLayouts) {
    const int64_t m = 70, k = 300;
    std::vector<float> av = random_floats(m * k, 21, -1, 1), bv = random_floats(k * n, 22, -1, 1);
    UOpRef mm = testgraph::matmul(input(av, {m, k}), input(bv, {k, n}), m, k, n);
    expect_b_copy(runtime::cached_schedule({mm}, dev_), n, packed, items);
    if (HasFatalFailure()) return;
    std::vector<float> got = values(mm);
    std::vector<double> want = plain_matmul(av, bv, m, k, n);
    for (int64_t i = 0; i < m * n; ++i) ASSERT_NEAR(got[i], want[i], 1e-4) << n << ": " << i;
  }
}

}  // namespace
}  // namespace polygrad
