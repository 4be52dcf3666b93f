// Kernel counts and ordering of schedules (no device needed: buffers are fake nodes).
#include "schedule/schedule.hpp"
#include "graphs.hpp"
#include "ir/graph.hpp"
#include "schedule/symbolic_sizes.hpp"

#include <polygrad/error.hpp>

#include <gtest/gtest.h>

#include <algorithm>

namespace polygrad {
namespace {

using lazy::Shape;

class ScheduleTest : public ::testing::Test {
 protected:
  ScheduleTest() {
    ctx_.device = "cpu:0";
    ctx_.new_buffer = [this](const std::string&, DType t, int64_t n) { return buffer(t, n); };
    ctx_.buffer_device = [](const UOp*) { return std::string("cpu:0"); };
  }
  UOpRef buffer(DType t, int64_t n) { return lazy::buffer(t, n, next_id_++); }
  UOpRef input(const Shape& s, DType t = dtypes::float32) {
    return lazy::reshape(buffer(t, lazy::numel(s)), s);
  }
  schedule::Schedule run(std::vector<UOpRef> roots) { return schedule::make_schedule(roots, ctx_); }
  size_t kernels(const UOpRef& root) { return run({root}).items.size(); }

  schedule::Context ctx_;
  int64_t next_id_ = 1000;
};

TEST_F(ScheduleTest, ElementwiseChainIsOneKernel) {
  UOpRef a = input({64, 32}), b = input({64, 32}), c = input({32});
  UOpRef cb = lazy::expand(lazy::reshape(c, {1, 32}), {64, 32});
  UOpRef y = testgraph::ew(Op::ADD, testgraph::ew(Op::MUL, a, b), cb);
  schedule::Schedule s = run({y});
  ASSERT_EQ(s.items.size(), 1u);
  EXPECT_EQ(s.items[0].buffers.size(), 4u);  // out, a, b, c
  EXPECT_EQ(s.outputs[0]->op(), Op::RESHAPE);
  EXPECT_EQ(lazy::shape_of(s.outputs[0]), (Shape{64, 32}));
}

// TANH and SIGMOID are single lazy nodes; the scheduler expands them into their elementwise ops
// (EXP2 among them) before building kernels, which never see them.
TEST_F(ScheduleTest, TanhAndSigmoidAreExpandedBeforeScheduling) {
  UOpRef x = input({8, 5});
  UOpRef y =
      testgraph::ew(Op::ADD, lazy::elementwise(Op::TANH, {x}), lazy::elementwise(Op::SIGMOID, {x}));
  schedule::Schedule s = run({y});
  ASSERT_EQ(s.items.size(), 1u);
  size_t exps = 0;
  for (const UOp* u : toposort(s.items[0].ast)) {
    EXPECT_NE(u->op(), Op::TANH);
    EXPECT_NE(u->op(), Op::SIGMOID);
    exps += u->op() == Op::EXP2;
  }
  EXPECT_EQ(exps, 2u);
}

// A long product (256 terms per element) times an exp of another value runs as a matmul kernel
// and an elementwise one: fused, the exps ran scalar in the matmul's tile (an LSTM's cell-state
// gradient). An exp of the product itself (softmax over scores), or a short product, stays
// fused.
TEST_F(ScheduleTest, ALongProductBesideTranscendentalsIsRealised) {
  auto exp = [](const UOpRef& x) { return lazy::elementwise(Op::EXP2, {x}); };
  UOpRef a = input({16, 256}), b = input({256, 64}), z = input({16, 64});
  UOpRef p = testgraph::matmul(a, b, 16, 256, 64);
  EXPECT_EQ(kernels(testgraph::ew(Op::MUL, p, exp(z))), 2u);
  EXPECT_EQ(kernels(exp(p)), 1u);
  UOpRef c = input({16, 32}), d = input({32, 64});
  EXPECT_EQ(kernels(testgraph::ew(Op::MUL, testgraph::matmul(c, d, 16, 32, 64), exp(z))), 1u);
}

TEST_F(ScheduleTest, RowReductionsFuseIntoOneKernel) {
  UOpRef x = input({16, 33});
  EXPECT_EQ(kernels(testgraph::softmax(x, 16, 33)), 1u);
  EXPECT_EQ(kernels(testgraph::log_softmax(x, 16, 33)), 1u);
  EXPECT_EQ(kernels(testgraph::layernorm(x, 16, 33)), 1u);
  EXPECT_EQ(kernels(testgraph::var_b(x, 16, 33)), 1u);
  UOpRef onehot = input({16, 33});
  EXPECT_LE(kernels(testgraph::cross_entropy(x, onehot, 16, 33)), 2u);
}

TEST_F(ScheduleTest, ColumnReductionUsedPerRowIsItsOwnKernel) {
  // x / x.sum(0): the sum depends on the inner output range, so inlining it would recompute
  // it for every row.
  UOpRef x = input({8, 5});
  UOpRef s = lazy::expand(lazy::reduce(x, Op::ADD, {0}), {8, 5});
  schedule::Schedule sch = run({testgraph::ew(Op::FDIV, x, s)});
  ASSERT_EQ(sch.items.size(), 2u);
  EXPECT_EQ(sch.intermediates.size(), 1u);
}

// (Without a target, as here, or on one with work groups: on a CPU target a kernel this small
// fuses the sum and runs serially, RealizeTest.ASingleRowsSoftmaxAndLayernormTakeOneKernel.)
TEST_F(ScheduleTest, FullReductionUsedElementwiseIsItsOwnKernel) {
  UOpRef x = input({100});
  UOpRef s = lazy::expand(lazy::reshape(lazy::reduce(x, Op::ADD, {0}), {1}), {100});
  EXPECT_EQ(kernels(testgraph::ew(Op::FDIV, x, s)), 2u);
}

TEST_F(ScheduleTest, MatmulIsOneReduceKernel) {
  UOpRef a = input({8, 6}), b = input({6, 4});
  UOpRef ae = lazy::expand(lazy::reshape(a, {8, 1, 6}), {8, 4, 6});
  UOpRef be = lazy::expand(lazy::reshape(lazy::permute(b, {1, 0}), {1, 4, 6}), {8, 4, 6});
  UOpRef mm = lazy::reshape(lazy::reduce(testgraph::ew(Op::MUL, ae, be), Op::ADD, {2}), {8, 4});
  schedule::Schedule s = run({mm});
  ASSERT_EQ(s.items.size(), 1u);
  int reduces = 0;
  for (const UOp* u : toposort(s.items[0].ast)) reduces += u->op() == Op::REDUCE;
  EXPECT_EQ(reduces, 1);
}

/// REDUCE nodes in item `i`'s AST.
int reduces_in(const schedule::Schedule& s, size_t i) {
  int n = 0;
  for (const UOp* u : toposort(s.items[i].ast)) n += u->op() == Op::REDUCE;
  return n;
}

TEST_F(ScheduleTest, CostlyBroadcastOperandIsRealisedOnce) {
  // softmax(x) @ w: inlined, the softmax (3 reduces) would be recomputed for every output
  // column; it is realised by its own kernel and the matmul reads it.
  UOpRef x = input({16, 12}), w = input({12, 8});
  schedule::Schedule s = run({testgraph::matmul(testgraph::softmax(x, 16, 12), w, 16, 12, 8)});
  ASSERT_EQ(s.items.size(), 2u);
  EXPECT_EQ(reduces_in(s, 1), 1);
  // A cheap operand (a scaled input) stays inlined: one kernel.
  UOpRef scaled = testgraph::ew(Op::MUL, x, testgraph::scalar_like(x, 2.0, {16, 12}));
  EXPECT_EQ(kernels(testgraph::matmul(scaled, w, 16, 12, 8)), 1u);
}

TEST_F(ScheduleTest, ContractionOfTwoViewsOfOneBufferIsRealisedOnce) {
  // Attention's softmax(q @ k.T) with q and k two column slices of one projection's output:
  // the scores are a contraction though both operands read one buffer, so they are realised
  // by a matmul kernel and the softmax reads them (inlined, every pass of the softmax would
  // recompute each score as a scalar dot product).
  UOpRef qk = input({16, 24});
  UOpRef q = lazy::shrink(qk, {{0, 16}, {0, 12}}), k = lazy::shrink(qk, {{0, 16}, {12, 24}});
  UOpRef scores = testgraph::matmul(q, lazy::permute(k, {1, 0}), 16, 12, 16);
  schedule::Schedule s = run({testgraph::softmax(scores, 16, 16)});
  ASSERT_EQ(s.items.size(), 2u);
  EXPECT_EQ(reduces_in(s, 0), 1);  // the scores
  // x * x summed (one element per step) is no contraction: a row's sum of squares stays fused.
  UOpRef x = input({16, 12});
  UOpRef sq = lazy::reshape(lazy::reduce(testgraph::ew(Op::MUL, x, x), Op::ADD, {1}), {16, 1});
  EXPECT_EQ(kernels(testgraph::ew(Op::MUL, x, lazy::expand(sq, {16, 12}))), 1u);
}

TEST_F(ScheduleTest, BatchedTransposedOperandOfAContractionIsCopiedContiguous) {
  // A token-mixing layer's weight gradient: y (b * c, h) transposed times g, where g is a
  // (b, p, c) buffer read as (b * c, p). Read in place, g is strided along the output columns
  // p (the codegen's vector axis): the kernel would fall back to scalar dot products. The
  // permuted view is copied contiguous first and the matmul reads the copy.
  const int64_t b = 4, c = 16, p = 8, h = 24;
  UOpRef y = input({b * c, h}), g = input({b, p, c});
  UOpRef gt = lazy::reshape(lazy::permute(g, {0, 2, 1}), {b * c, p});
  schedule::Schedule s = run({testgraph::matmul(lazy::permute(y, {1, 0}), gt, h, b * c, p)});
  ASSERT_EQ(s.items.size(), 2u);
  EXPECT_EQ(reduces_in(s, 0), 0);  // the copy
  const auto& reads = s.items[1].buffers;
  EXPECT_NE(std::find(reads.begin(), reads.end(), s.items[0].buffers[0]), reads.end());
  // A 2-d transpose (x @ w.T) is no batched view: one kernel (the codegen packs it).
  UOpRef x = input({16, 12}), w = input({8, 12});
  EXPECT_EQ(kernels(testgraph::matmul(x, lazy::permute(w, {1, 0}), 16, 12, 8)), 1u);
}

TEST_F(ScheduleTest, ArithmeticOperandOfALargeContractionIsRealisedOnce) {
  // relu(x) @ w with 8M multiply-adds: the ReLU is realised by a kernel of its own and the
  // matmul reads its buffer (fused, each broadcast value cost a load, a max and a register
  // broadcast). The same product of 16 x 12 x 8 keeps it fused (CostlyBroadcastOperand...).
  UOpRef x = input({256, 128}), w = input({128, 256});
  UOpRef relu = testgraph::ew(Op::MAX, x, testgraph::scalar_like(x, 0.0, {256, 128}));
  schedule::Schedule s = run({testgraph::matmul(relu, w, 256, 128, 256)});
  ASSERT_EQ(s.items.size(), 2u);
  EXPECT_EQ(reduces_in(s, 0), 0);
  const auto& reads = s.items[1].buffers;
  EXPECT_NE(std::find(reads.begin(), reads.end(), s.items[0].buffers[0]), reads.end());
  UOpRef small = input({16, 12}), ws = input({12, 8});
  UOpRef relu_small = testgraph::ew(Op::MAX, small, testgraph::scalar_like(small, 0.0, {16, 12}));
  EXPECT_EQ(kernels(testgraph::matmul(relu_small, ws, 16, 12, 8)), 1u);
}

TEST_F(ScheduleTest, LongArithmeticBroadcastOperandIsRealisedOnce) {
  // A chain of 20 multiply-adds (no reduce, no transcendental) as a matmul's broadcast operand
  // would be recomputed for every output column: realised once. 8 ops stay inlined.
  UOpRef x = input({16, 12}), w = input({12, 8});
  auto chain = [&](int n) {
    UOpRef v = x;
    for (int i = 0; i < n; ++i)
      v = testgraph::ew(Op::ADD, testgraph::ew(Op::MUL, v, x),
                        testgraph::scalar_like(x, 0.5, {16, 12}));
    return v;
  };
  EXPECT_EQ(kernels(testgraph::matmul(chain(10), w, 16, 12, 8)), 2u);
  EXPECT_EQ(kernels(testgraph::matmul(chain(4), w, 16, 12, 8)), 1u);
}

TEST_F(ScheduleTest, BroadcastOperandOfSeveralBuffersIsRealisedOnce) {
  // A sum of three inputs as a matmul's broadcast operand (a residual stream's gradient) would
  // read all three again for every output column: realised once. Two inputs stay inlined.
  UOpRef a = input({16, 12}), b = input({16, 12}), c = input({16, 12}), w = input({12, 8});
  UOpRef two = testgraph::ew(Op::ADD, a, b), three = testgraph::ew(Op::ADD, two, c);
  schedule::Schedule s = run({testgraph::matmul(three, w, 16, 12, 8)});
  ASSERT_EQ(s.items.size(), 2u);
  EXPECT_EQ(s.items[1].buffers.size(), 3u);  // out, the realised sum, w
  EXPECT_EQ(kernels(testgraph::matmul(two, w, 16, 12, 8)), 1u);
}

TEST_F(ScheduleTest, OneHotSumOverAnIotaIsOneIndexedLoad) {
  // gather's and an embedding lookup's form: sum over v of where(idx[i] == v, x[v, j], 0), v an
  // iota. It reads x[idx[i], j] once, an elementwise kernel: no reduce over the 5 rows.
  UOpRef x = input({5, 4}), idx = input({3}, dtypes::int32);
  UOpRef hit = lazy::elementwise(
      Op::CMPEQ, {lazy::expand(lazy::reshape(idx, {3, 1, 1}), {3, 5, 4}),
                  lazy::expand(lazy::reshape(lazy::iota(dtypes::int32, 5), {1, 5, 1}), {3, 5, 4})});
  UOpRef picked =
      lazy::elementwise(Op::WHERE, {hit, lazy::expand(lazy::reshape(x, {1, 5, 4}), {3, 5, 4}),
                                    lazy::full(dtypes::float32, 0.0, {3, 5, 4})});
  schedule::Schedule s = run({lazy::reshape(lazy::reduce(picked, Op::ADD, {1}), {3, 4})});
  ASSERT_EQ(s.items.size(), 1u);
  EXPECT_EQ(reduces_in(s, 0), 0);
  EXPECT_EQ(s.items[0].buffers.size(), 3u);  // out, idx, x
}

TEST_F(ScheduleTest, FactorFreeOfTheReducedRangeIsMultipliedAfterTheSum) {
  // out[i, j] = sum_k x[i, k] * c[i, j] (a mean's gradient, constant along k, times attention's
  // weights): c[i, j] is multiplied once after a sum of x alone, not inside the loop over k.
  UOpRef x = input({6, 5}), c = input({6, 4});
  UOpRef prod = testgraph::ew(Op::MUL, lazy::expand(lazy::reshape(x, {6, 5, 1}), {6, 5, 4}),
                              lazy::expand(lazy::reshape(c, {6, 1, 4}), {6, 5, 4}));
  schedule::Schedule s = run({lazy::reshape(lazy::reduce(prod, Op::ADD, {1}), {6, 4})});
  ASSERT_EQ(s.items.size(), 1u);
  int reduces = 0;
  for (const UOp* u : toposort(s.items[0].ast))
    if (u->op() == Op::REDUCE) {
      ++reduces;
      int loads = 0;
      for (const UOp* v : toposort(u->src(0))) loads += v->op() == Op::LOAD;
      EXPECT_EQ(loads, 1) << "only x is read in the loop";
    }
  EXPECT_EQ(reduces, 1);
}

// sum over n of where(idx[n] == v, x[n, d], 0) as a (v, d) output: an embedding's gradient.
UOpRef one_hot_sum_over_output_axis(const UOpRef& idx, const UOpRef& x, int64_t n, int64_t v,
                                    int64_t d) {
  UOpRef hit = lazy::elementwise(
      Op::CMPEQ, {lazy::expand(lazy::reshape(idx, {n, 1, 1}), {n, v, d}),
                  lazy::expand(lazy::reshape(lazy::iota(dtypes::int32, v), {1, v, 1}), {n, v, d})});
  UOpRef picked =
      lazy::elementwise(Op::WHERE, {hit, lazy::expand(lazy::reshape(x, {n, 1, d}), {n, v, d}),
                                    lazy::full(dtypes::float32, 0.0, {n, v, d})});
  return lazy::reshape(lazy::reduce(picked, Op::ADD, {0}), {v, d});
}

TEST_F(ScheduleTest, OneHotSumOverAnOutputAxisIsAScatterAdd) {
  // A zeroing kernel, then out[idx[n], d] += x[n, d]: 12 x 16 adds, not 7 x 12 x 16. Launched
  // over the column blocks (16 / 8), so every launch step owns its addresses.
  UOpRef idx = input({12}, dtypes::int32), x = input({12, 16});
  schedule::Schedule s = run({one_hot_sum_over_output_axis(idx, x, 12, 7, 16)});
  ASSERT_EQ(s.items.size(), 2u);
  EXPECT_EQ(s.items[0].buffers.size(), 1u);  // zeros
  EXPECT_EQ(s.items[1].buffers[0], s.items[0].buffers[0]);
  EXPECT_EQ(reduces_in(s, 1), 0);
  const UOp* store = s.items[1].ast->src(0).get();
  int indirect = 0;
  for (const UOp* u : toposort(store->src(0))) indirect += u->op() == Op::LOAD;
  EXPECT_EQ(indirect, 1) << "the store's address reads idx";
  codegen::Target plain;  // no vector lanes
  plain.caps.dtype_mask = ~uint64_t{0};
  plain.caps.max_global_dims[0] = 1u << 30;
  EXPECT_EQ(codegen::lower(s.items[1].ast, plain).launch_global({})[0], 2u);
  // 5 columns, no blocks: the codegen keeps the loops as built (moving the columns, the
  // loads' contiguous axis, innermost would launch over the tokens).
  UOpRef x5 = input({12, 5});
  schedule::Schedule s5 = run({one_hot_sum_over_output_axis(idx, x5, 12, 7, 5)});
  ASSERT_EQ(s5.items.size(), 2u);
  EXPECT_EQ(codegen::lower(s5.items[1].ast, plain).launch_global({})[0], 5u);
  codegen::Target simd = plain;  // 8 float lanes
  simd.caps.vector_width_bytes = 32;
  simd.caps.max_vector_lanes = 8;
  EXPECT_EQ(codegen::lower(s5.items[1].ast, simd).launch_global({})[0], 5u);
  EXPECT_EQ(codegen::lower(s.items[1].ast, simd).launch_global({})[0], 2u);
  // No other output axis to launch over: the one-hot sum stays.
  UOpRef x1 = input({12, 1});
  schedule::Schedule s1 = run({one_hot_sum_over_output_axis(idx, x1, 12, 7, 1)});
  ASSERT_EQ(s1.items.size(), 1u);
  EXPECT_EQ(reduces_in(s1, 0), 1);
}

TEST_F(ScheduleTest, OneHotSumInsideAValueIsScatteredInTheOrderItIsRead) {
  // A tied embedding's gradient: the lookup's one-hot sum, built as (d, v), read transposed
  // and added to the output projection's (v, d) weight gradient. It becomes a scatter of its
  // own, written as (v, d), so the matmul kernel reads it at the offsets it stores to.
  const int64_t n = 12, v = 7, d = 16, k = 5;
  UOpRef idx = input({n}, dtypes::int32), x = input({n, d}), a = input({v, k}), b = input({k, d});
  UOpRef hit = lazy::elementwise(
      Op::CMPEQ, {lazy::expand(lazy::reshape(idx, {n, 1, 1}), {n, d, v}),
                  lazy::expand(lazy::reshape(lazy::iota(dtypes::int32, v), {1, 1, v}), {n, d, v})});
  UOpRef picked =
      lazy::elementwise(Op::WHERE, {hit, lazy::expand(lazy::reshape(x, {n, d, 1}), {n, d, v}),
                                    lazy::full(dtypes::float32, 0.0, {n, d, v})});
  UOpRef dv = lazy::reshape(lazy::reduce(picked, Op::ADD, {0}), {d, v});
  schedule::Schedule s =
      run({testgraph::ew(Op::ADD, lazy::permute(dv, {1, 0}), testgraph::matmul(a, b, v, k, d))});
  ASSERT_EQ(s.items.size(), 3u);  // zeros, the scatter, the matmul
  EXPECT_EQ(reduces_in(s, 1), 0);
  const UOpRef& scattered = s.items[1].buffers[0];
  const UOp* store = s.items[2].ast->src(0).get();
  int reads = 0;
  for (const UOp* u : toposort(s.items[2].ast))
    if (u->op() == Op::INDEX && u->src(0)->op() == Op::DEFINE_GLOBAL &&
        s.items[2].buffers[static_cast<size_t>(u->src(0)->arg_int())] == scattered) {
      ++reads;
      EXPECT_EQ(u->src(1), store->src(0)->src(1)) << "read where the kernel stores";
    }
  EXPECT_EQ(reads, 1);
}

TEST_F(ScheduleTest, ScalarOverRowsOfReducesRealisesTheRowsFirst) {
  // A loss's mean over 512 rows of a reduce over 2048 classes each: the rows' values run in
  // parallel in a kernel of their own, then one kernel sums them. The kernels' shapes do not
  // depend on the row count (blocks of its divisors did: 256 blocks of 2 rows here, none for
  // 3 rows), so 3 rows make the same two kernels, as a batch at launch needs.
  for (const int64_t n : {int64_t{512}, int64_t{3}}) {
    UOpRef rows = lazy::reduce(input({n, 2048}), Op::MAX, {1});
    schedule::Schedule s = run({lazy::reduce(rows, Op::ADD, {0, 1})});
    ASSERT_EQ(s.items.size(), 2u) << n;
    EXPECT_EQ(lazy::buffer_count(s.items[0].buffers[0].get()), n);
  }
}

TEST_F(ScheduleTest, ReduceOverAMergedAxisSplitsItsRange) {
  // dW = x^T @ dy with the rows of x (batch * positions) read through a permuted view of a
  // (batch, k, positions) buffer: the reduce over the 4 * 9 rows runs as two ranges (4, 9),
  // with no division or remainder left in its index math.
  UOpRef cols = input({4, 6, 9}), dy = input({36, 5});
  UOpRef a = lazy::reshape(lazy::permute(cols, {0, 2, 1}), {36, 6});  // (rows, k)
  UOpRef mm = testgraph::matmul(lazy::permute(a, {1, 0}), dy, 6, 36, 5);
  schedule::Schedule s = run({mm});
  ASSERT_EQ(s.items.size(), 1u);
  int divmods = 0;
  for (const UOp* u : toposort(s.items[0].ast)) {
    if (u->op() == Op::REDUCE) {
      EXPECT_EQ(u->nsrcs(), 3u) << "two reduce ranges";
    }
    divmods += u->op() == Op::IDIV || u->op() == Op::MOD;
  }
  EXPECT_EQ(divmods, 0);
}

TEST_F(ScheduleTest, InnerAxesWalkedAsOneMerge) {
  // A convolution's weight gradient, dw (o, c, 3, 3) = dy^T @ x over the batch: its (c, 3, 3)
  // output axes are one axis of 54 columns to every index (the codegen can vectorise it), while
  // o stays apart (merged with them, dy would be read at row // 54).
  UOpRef dy = input({5, 4}), x = input({5, 6, 3, 3});
  UOpRef mm = testgraph::matmul(lazy::permute(dy, {1, 0}), lazy::reshape(x, {5, 54}), 4, 5, 54);
  schedule::Schedule s = run({lazy::reshape(mm, {4, 6, 3, 3})});
  ASSERT_EQ(s.items.size(), 1u);
  int ranges = 0, divmods = 0;
  for (const UOp* u : toposort(s.items[0].ast)) {
    ranges += u->op() == Op::RANGE;
    divmods += u->op() == Op::IDIV || u->op() == Op::MOD;
  }
  EXPECT_EQ(ranges, 3) << "o, the merged (c, 3, 3) and the batch";
  EXPECT_EQ(divmods, 0);
}

TEST_F(ScheduleTest, ReduceReadThroughTwoViewsIsRealised) {
  // r + flip(r) for a row sum r: inlined, each element would sum two rows. Realised once, then
  // read twice. r * r reads it one way: one kernel.
  UOpRef x = input({8, 5});
  UOpRef r = lazy::reshape(lazy::reduce(x, Op::ADD, {1}), {8});
  EXPECT_EQ(kernels(testgraph::ew(Op::ADD, r, lazy::flip(r, {0}))), 2u);
  EXPECT_EQ(kernels(testgraph::ew(Op::MUL, r, r)), 1u);
}

TEST_F(ScheduleTest, ReduceReadThroughADivisionIsRealised) {
  // A row sum broadcast over pairs of output positions (a pool's gradient over its window,
  // r[i // 2]): fused, each pair would sum the row twice. Realised once, then read.
  UOpRef x = input({8, 5}), z = input({16});
  UOpRef r = lazy::reshape(lazy::reduce(x, Op::ADD, {1}), {8, 1});
  UOpRef pairs = lazy::reshape(lazy::expand(r, {8, 2}), {16});
  schedule::Schedule s = run({testgraph::ew(Op::MUL, pairs, z)});
  ASSERT_EQ(s.items.size(), 2u);
  EXPECT_EQ(reduces_in(s, 0), 1);
  EXPECT_EQ(reduces_in(s, 1), 0);
}

TEST_F(ScheduleTest, CostlyValueSummedWholeIsComputedInTheBlockSums) {
  // A long full sum reads its value in blocks, through a reshape of the flat range (its row
  // and column are the block's offset divided by and modulo the row length). That division
  // splits a range, it sends no two positions to one element: exp(x) and relu(a @ b) are
  // computed in the block sums' kernel, not realised by a kernel of their own first.
  UOpRef x = input({512, 512});
  schedule::Schedule s = run({lazy::reduce(testgraph::exp(x, {512, 512}), Op::ADD, {0, 1})});
  ASSERT_EQ(s.items.size(), 2u);  // the block sums of exp(x), their sum
  EXPECT_EQ(reduces_in(s, 0), 1);
  UOpRef a = input({512, 512}), b = input({512, 512});
  UOpRef mm = testgraph::matmul(a, b, 512, 512, 512);
  UOpRef relu = testgraph::ew(Op::MAX, mm, testgraph::scalar_like(mm, 0.0, {512, 512}));
  s = run({lazy::reduce(relu, Op::ADD, {0, 1})});
  ASSERT_EQ(s.items.size(), 3u);  // the matmul, the block sums of its relu, their sum
  int maxes = 0;
  for (const UOp* u : toposort(s.items[1].ast)) maxes += u->op() == Op::MAX;
  EXPECT_EQ(maxes, 1);
}

TEST_F(ScheduleTest, PaddedViewIndexFoldsWhereItsGateHolds) {
  // A (6, 4) value read as (2, 3, 4) and padded by one row in front (a convolution's column
  // gradient summed back into its input): the flat index 12*b + 4*(i - 1) + j is negative
  // only where the pad's gate is false (i = 0), so knowing i >= 1 the row (flat // 4) and
  // column (flat % 4) fold to 3*b + i - 1 and j: no division or remainder.
  UOpRef x = input({6, 4}), sq = testgraph::ew(Op::MUL, x, x);  // (a value: indexed, not viewed)
  UOpRef v = lazy::pad(lazy::reshape(sq, {2, 3, 4}), {{0, 0}, {1, 0}, {0, 0}});
  schedule::Schedule s = run({testgraph::ew(Op::ADD, v, v)});
  ASSERT_EQ(s.items.size(), 1u);
  int divmods = 0, gated = 0;
  for (const UOp* u : toposort(s.items[0].ast)) {
    divmods += u->op() == Op::IDIV || u->op() == Op::MOD;
    gated += u->op() == Op::LOAD && u->nsrcs() == 3;
  }
  EXPECT_EQ(gated, 1);  // (x * x loads once)
  EXPECT_EQ(divmods, 0);
}

TEST_F(ScheduleTest, ReshapeIndexesEachAxisGroupOnItsOwn) {
  // A stride-2 view of a (6, 8) value, x.reshape(3, 2, 4, 2)[:, 0, :, 0], padded by one in
  // front on both axes (a strided convolution's window, as its gradient reads it). The
  // reshape splits each axis on its own: rows r - 1 and columns c - 1 are placed as
  // 2 * (r - 1) and 2 * (c - 1), with no division of one axis by the other's size.
  UOpRef x = input({6, 8}), sq = testgraph::ew(Op::MUL, x, x);  // (a value: indexed, not viewed)
  UOpRef st = lazy::shrink(lazy::reshape(sq, {3, 2, 4, 2}), {{0, 3}, {0, 1}, {0, 4}, {0, 1}});
  UOpRef v = lazy::pad(lazy::reshape(st, {3, 4}), {{1, 0}, {1, 0}});
  schedule::Schedule s = run({testgraph::ew(Op::ADD, v, v)});
  ASSERT_EQ(s.items.size(), 1u);
  int divmods = 0;
  for (const UOp* u : toposort(s.items[0].ast))
    divmods += u->op() == Op::IDIV || u->op() == Op::MOD;
  EXPECT_EQ(divmods, 0);
}

TEST_F(ScheduleTest, LongValueTwoReducesReadIsRealisedOnce) {
  // v, nine padded pieces summed (a convolution's input gradient), read by two reduces (a
  // batch norm's sums): each reduce kernel would recompute all of v. Realised once instead; a
  // short value (x * x) stays fused into both.
  UOpRef x = input({8, 9});
  UOpRef v;
  for (int64_t k = 0; k < 9; ++k) {
    UOpRef piece = lazy::pad(lazy::shrink(x, {{0, 8}, {k, k + 1}}), {{0, 0}, {k, 8 - k}});
    v = v ? testgraph::ew(Op::ADD, v, piece) : piece;
  }
  schedule::Schedule s = run({lazy::reduce(v, Op::ADD, {1}), lazy::reduce(v, Op::MAX, {1})});
  EXPECT_EQ(s.items.size(), 3u);
  UOpRef sq = testgraph::ew(Op::MUL, x, x);
  EXPECT_EQ(run({lazy::reduce(sq, Op::ADD, {1}), lazy::reduce(sq, Op::MAX, {1})}).items.size(), 2u);
  // Two outputs computed from v (no reduce): the first pass builds v into both kernels, the
  // second realises it once and both read it.
  UOpRef two = testgraph::scalar_like(v, 2.0, {8, 9});
  schedule::Schedule e = run({testgraph::ew(Op::MUL, v, two), testgraph::ew(Op::ADD, v, two)});
  ASSERT_EQ(e.items.size(), 3u);
  int building = 0;  // kernels that load v's pieces (gated loads)
  for (const schedule::Item& item : e.items) {
    bool gated = false;
    for (const UOp* u : toposort(item.ast))
      gated = gated || (u->op() == Op::LOAD && u->nsrcs() == 3);
    building += gated;
  }
  EXPECT_EQ(building, 1) << "the outputs read v, they do not rebuild its pieces";
}

TEST_F(ScheduleTest, LongReduceSeveralKernelsReadIsRealisedNotItsBody) {
  // g = sum over the batch of ten outer products (an RNN's weight gradient over its time
  // steps), read by two kernels (an optimizer's two moment updates): g is computed once, and
  // the (batch, 6, 6) sum inside it is never written out.
  const int64_t b = 4, h = 6;
  UOpRef big;
  for (int k = 0; k < 10; ++k) {
    UOpRef u = lazy::expand(lazy::reshape(input({b, h}), {b, h, 1}), {b, h, h});
    UOpRef v = lazy::expand(lazy::reshape(input({b, h}), {b, 1, h}), {b, h, h});
    UOpRef outer = testgraph::ew(Op::MUL, u, v);
    big = big ? testgraph::ew(Op::ADD, big, outer) : outer;
  }
  UOpRef g = lazy::reshape(lazy::reduce(big, Op::ADD, {0}), {h, h});
  schedule::Schedule s = run({testgraph::ew(Op::MUL, g, g), testgraph::ew(Op::ADD, g, g)});
  int body = 0;  // kernels that load the outer products' operands
  for (const schedule::Item& item : s.items) {
    EXPECT_NE(lazy::buffer_count(item.buffers[0].get()), b * h * h) << "the batch sum's body";
    body += item.buffers.size() > 10;
  }
  EXPECT_EQ(body, 1);
}

TEST_F(ScheduleTest, ContractionInsideAReduceIsRealised) {
  // (a @ b).sum(1): the matmul inside the row sum would be scalar dot products; it runs as a
  // matmul kernel of its own, then the sum reads it.
  UOpRef a = input({16, 12}), b = input({12, 8});
  schedule::Schedule s = run({lazy::reduce(testgraph::matmul(a, b, 16, 12, 8), Op::ADD, {1})});
  ASSERT_EQ(s.items.size(), 2u);
  EXPECT_EQ(reduces_in(s, 0), 1);
  EXPECT_EQ(reduces_in(s, 1), 1);
}

TEST_F(ScheduleTest, ReshapeOfAContiguousValueViewsItsBuffer) {
  // (x * x).contiguous().reshape(...) as a root: one kernel, its output viewed, not copied.
  UOpRef x = input({6, 4});
  UOpRef c = lazy::contiguous(testgraph::ew(Op::MUL, x, x));
  schedule::Schedule s = run({lazy::reshape(c, {3, 8})});
  ASSERT_EQ(s.items.size(), 1u);
  EXPECT_EQ(lazy::shape_of(s.outputs[0]), (Shape{3, 8}));
  EXPECT_EQ(lazy::realized_buffer(s.outputs[0].get()), s.items[0].buffers[0].get());
}

TEST_F(ScheduleTest, ContractionUsedTwiceIsRealised) {
  // softmax(a @ b): the logits feed the max, the sum and the output; fused, each would redo
  // the matmul. Realised: one matmul kernel, then the one-kernel softmax reading it.
  UOpRef a = input({16, 12}), b = input({12, 8});
  schedule::Schedule s = run({testgraph::softmax(testgraph::matmul(a, b, 16, 12, 8), 16, 8)});
  ASSERT_EQ(s.items.size(), 2u);
  EXPECT_EQ(reduces_in(s, 0), 1);  // the matmul
  EXPECT_EQ(reduces_in(s, 1), 2);  // max and sum over the realised logits
  schedule::Schedule plain = run({testgraph::softmax(input({16, 8}), 16, 8)});
  EXPECT_EQ(reduces_in(plain, 0), 2);  // the max is built once (memo keys stay alive)
  // A matmul used once (plus a bias) stays one kernel.
  UOpRef c = input({8});
  UOpRef biased = testgraph::ew(Op::ADD, testgraph::matmul(a, b, 16, 12, 8),
                                lazy::expand(lazy::reshape(c, {1, 8}), {16, 8}));
  EXPECT_EQ(kernels(biased), 1u);
}

TEST_F(ScheduleTest, ContiguousInTheMiddleRealisesOnce) {
  UOpRef x = input({10});
  UOpRef c = lazy::contiguous(testgraph::ew(Op::MUL, x, x));
  UOpRef y = testgraph::ew(Op::ADD, c, c);
  schedule::Schedule s = run({y});
  EXPECT_EQ(s.items.size(), 2u);
}

TEST_F(ScheduleTest, AssignRunsAfterTheReadsOfTheOldValue) {
  UOpRef a = input({10});
  UOpRef assign = lazy::assign(a, testgraph::ew(Op::ADD, a, lazy::full(dtypes::float32, 1, {10})));
  UOpRef reader = testgraph::ew(Op::MUL, a, a);  // reads the old a
  schedule::Schedule s = run({assign, reader});
  ASSERT_EQ(s.items.size(), 2u);
  // The reader's kernel writes a fresh buffer; the assign's writes a's buffer: reader first.
  const UOp* a_buf = a->src(0).get();
  EXPECT_NE(s.items[0].buffers[0].get(), a_buf);
  EXPECT_EQ(s.items[1].buffers[0].get(), a_buf);
  EXPECT_EQ(s.outputs[0], a);
}

TEST_F(ScheduleTest, ReadsOfTheAssignedValueRunAfterIt) {
  UOpRef a = input({10});
  UOpRef assign = lazy::assign(a, testgraph::ew(Op::ADD, a, lazy::full(dtypes::float32, 1, {10})));
  UOpRef reader = testgraph::ew(Op::MUL, assign, assign);
  schedule::Schedule s = run({reader});
  ASSERT_EQ(s.items.size(), 2u);
  EXPECT_EQ(s.items[0].buffers[0].get(), a->src(0).get());
}

TEST_F(ScheduleTest, SelfTransposeAssignGoesThroughATemporary) {
  UOpRef a = input({4, 4});
  schedule::Schedule s = run({lazy::assign(a, lazy::permute(a, {1, 0}))});
  ASSERT_EQ(s.items.size(), 2u);
  EXPECT_EQ(s.items[1].kind, schedule::Item::Kind::copy);
  EXPECT_EQ(s.items[1].buffers[0].get(), a->src(0).get());
}

TEST_F(ScheduleTest, AssignToALazyTensorIsAnError) {
  UOpRef a = input({4});
  UOpRef lazy_target = testgraph::ew(Op::ADD, a, a);
  try {
    run({lazy::assign(lazy_target, a)});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("assign: the target must be a realised tensor"),
              std::string::npos)
        << e.what();
  }
}

// A kernel's own variable (n0) runs to the most that keeps every buffer offset within half
// the int32 range: out[r * 4096 + c] reaches n * 4096 - 1, so n <= 2^30 / 4096 = 262144. An
// offset read from the data (a gather's) is left out: its bounds are the int32 dtype's.
TEST(Schedule, KernelVariablesRunToTheMostThatKeepsOffsets32Bit) {
  const DType f32 = dtypes::float32;
  const UOpRef out = UOp::make(Op::DEFINE_GLOBAL, f32.ptr(AddrSpace::global), {}, int64_t{0});
  const UOpRef idx =
      UOp::make(Op::DEFINE_GLOBAL, dtypes::int32.ptr(AddrSpace::global), {}, int64_t{1});
  const UOpRef r = range(const_int(dtypes::index, 8), 0);
  const UOpRef c = range(const_int(dtypes::index, 4096), 1);
  const UOpRef at = r * 4096 + c;
  const UOpRef id =
      UOp::make(Op::LOAD, dtypes::int32, {UOp::make(Op::INDEX, idx->dtype(), {idx, r})});
  const UOpRef gather = at + cast(id, dtypes::index);
  auto sink_of = [&](const UOpRef& offset) {
    const UOpRef v = UOp::make(Op::LOAD, f32, {UOp::make(Op::INDEX, out->dtype(), {out, offset})});
    return UOp::make(
        Op::SINK, dtypes::void_,
        {UOp::make(Op::STORE, dtypes::void_, {UOp::make(Op::INDEX, out->dtype(), {out, at}), v})});
  };
  EXPECT_EQ(schedule::int32_extent_limit(sink_of(at), r.get(), 8), 262144);
  EXPECT_EQ(schedule::int32_extent_limit(sink_of(gather), r.get(), 8), 262144);
  // The row's range as the variable: 7 * 4096 + n - 1 <= 2^30 - 1.
  EXPECT_EQ(schedule::int32_extent_limit(sink_of(c), c.get(), 4096), 1073741824 - 7 * 4096);
}

}  // namespace
}  // namespace polygrad
