// End to end through the cpu plugin: schedule -> codegen -> launch, values against plain C++.
#include "codegen/lower.hpp"
#include "cpu_fixture.hpp"
#include "graphs.hpp"
#include "random_values.hpp"
#include "runtime/buffers.hpp"
#include "runtime/runtime.hpp"
#include "runtime/schedule_cache.hpp"

#include <polygrad/error.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <thread>
#include <unordered_map>

namespace polygrad {
namespace {

using lazy::Shape;

using testgraph::random_floats;

using RealizeTest = CpuDeviceTest;

void expect_near(const std::vector<float>& got, const std::vector<double>& want, double tol) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i)
    ASSERT_NEAR(got[i], want[i], tol * (1 + std::abs(want[i]))) << "at " << i;
}

TEST_F(RealizeTest, ElementwiseWithBroadcast) {
  auto a = random_floats(6 * 7, 1), c = random_floats(7, 2);
  UOpRef cb = lazy::expand(lazy::reshape(input(c, {7}), {1, 7}), {6, 7});
  auto got = values(testgraph::ew(Op::MUL, input(a, {6, 7}), cb));
  std::vector<double> want;
  for (int i = 0; i < 6; ++i)
    for (int j = 0; j < 7; ++j) want.push_back(double(a[i * 7 + j]) * c[j]);
  expect_near(got, want, 1e-6);
}

TEST_F(RealizeTest, FilledTensorHoldsWhatEachPartWrote) {
  // runtime::from_host_fill: on the cpu one call writes the device's buffer itself; on the
  // emulator (no host pointer) calls of at most kFillPartBytes, each copied in. Two whole parts
  // and a rest: the calls cover every element once, in order, and the values arrive.
  const int64_t part = runtime::kFillPartBytes / 4;
  const int64_t n = 2 * part + 1000;
  std::vector<std::pair<int64_t, int64_t>> calls;
  UOpRef t = runtime::from_host_fill(dev_, dtypes::float32, {n},
                                     [&](void* out, int64_t first, int64_t count) {
                                       calls.emplace_back(first, count);
                                       auto* v = static_cast<float*>(out);
                                       for (int64_t i = 0; i < count; ++i)
                                         v[i] = static_cast<float>((first + i) % 1013) - 500.0f;
                                     });
  int64_t next = 0;
  for (auto [first, count] : calls) {
    EXPECT_EQ(first, next);
    if (calls.size() > 1) {
      EXPECT_LE(count, part);
    }
    next = first + count;
  }
  EXPECT_EQ(next, n);
  std::vector<float> got(static_cast<size_t>(n));
  runtime::to_host(t, got.data());
  for (int64_t i = 0; i < n; ++i)
    ASSERT_EQ(got[static_cast<size_t>(i)], static_cast<float>(i % 1013) - 500.0f) << i;
}

TEST_F(RealizeTest, SoftmaxRows) {
  const int n = 13, m = 37;
  auto x = random_floats(n * m, 3);
  auto got = values(testgraph::softmax(input(x, {n, m}), n, m));
  std::vector<double> want;
  for (int i = 0; i < n; ++i) {
    double mx = -INFINITY, sum = 0;
    for (int j = 0; j < m; ++j) mx = std::max(mx, double(x[i * m + j]));
    for (int j = 0; j < m; ++j) sum += std::exp(x[i * m + j] - mx);
    for (int j = 0; j < m; ++j) want.push_back(std::exp(x[i * m + j] - mx) / sum);
  }
  expect_near(got, want, 1e-5);
}

TEST_F(RealizeTest, LayernormRows) {
  const int n = 9, m = 50;
  auto x = random_floats(n * m, 4);
  auto got = values(testgraph::layernorm(input(x, {n, m}), n, m));
  std::vector<double> want;
  for (int i = 0; i < n; ++i) {
    double mean = 0, var = 0;
    for (int j = 0; j < m; ++j) mean += x[i * m + j];
    mean /= m;
    for (int j = 0; j < m; ++j) var += (x[i * m + j] - mean) * (x[i * m + j] - mean);
    var /= m;
    for (int j = 0; j < m; ++j) want.push_back((x[i * m + j] - mean) / std::sqrt(var + 1e-5));
  }
  expect_near(got, want, 1e-4);
}

// A single row (a batch of one) of softmax and layernorm takes one kernel, as a batch of rows
// does: its reduces no output range moves are fused and run once, before the outputs' loop, on
// one launch step (on the cpu; without a target they are realised first, see ScheduleTest).
TEST_F(RealizeTest, ASingleRowsSoftmaxAndLayernormTakeOneKernel) {
  const int m = 1000;
  auto x = random_floats(m, 21);
  double mx = -INFINITY, sum = 0, mean = 0, var = 0;
  for (float v : x) mx = std::max(mx, double(v)), mean += v / double(m);
  for (float v : x) sum += std::exp(v - mx), var += (v - mean) * (v - mean) / m;
  std::vector<double> soft, norm;
  for (float v : x) {
    soft.push_back(std::exp(v - mx) / sum);
    norm.push_back((v - mean) / std::sqrt(var + 1e-5));
  }
  for (UOpRef root :
       {testgraph::softmax(input(x, {1, m}), 1, m), testgraph::layernorm(input(x, {1, m}), 1, m)}) {
    const schedule::Schedule s = runtime::cached_schedule({root}, dev_);
    ASSERT_EQ(s.items.size(), 1u);
    codegen::Target target;
    target.caps = runtime::device_handle(dev_).properties().caps;
    const codegen::LoweredKernel k = codegen::lower(s.items[0].ast, target);
    std::unordered_map<std::string, int64_t> vars(s.items[0].vars.begin(), s.items[0].vars.end());
    EXPECT_EQ(k.launch_global(vars)[0], 1u) << "the outputs run as a loop after the reduces";
  }
  expect_near(values(testgraph::softmax(input(x, {1, m}), 1, m)), soft, 1e-5);
  expect_near(values(testgraph::layernorm(input(x, {1, m}), 1, m)), norm, 1e-4);
}

// A reduce to one value beside a product (w @ v / sum(v), w (256, 256)) is realised on its
// own: fused, the product's kernel would run on one launch step.
TEST_F(RealizeTest, AFullSumBesideAMatrixVectorProductIsRealised) {
  const int n = 256;
  auto w = random_floats(n * n, 22), v = random_floats(n, 23);
  UOpRef prod = lazy::reshape(testgraph::matmul(input(w, {n, n}), input(v, {n, 1}), n, n, 1), {n});
  UOpRef total = lazy::expand(lazy::reshape(lazy::reduce(input(v, {n}), Op::ADD, {0}), {1}), {n});
  UOpRef root = testgraph::ew(Op::FDIV, prod, total);
  ASSERT_EQ(runtime::cached_schedule({root}, dev_).items.size(), 2u);
  double t = 0;
  for (float x : v) t += x;
  std::vector<double> want;
  for (int i = 0; i < n; ++i) {
    double d = 0;
    for (int k = 0; k < n; ++k) d += double(w[i * n + k]) * v[k];
    want.push_back(d / t);
  }
  expect_near(values(root), want, 1e-3);
}

TEST_F(RealizeTest, CrossEntropyScalar) {
  const int n = 5, m = 11;
  auto x = random_floats(n * m, 5);
  std::vector<float> onehot(n * m, 0);
  for (int i = 0; i < n; ++i) onehot[i * m + (i * 3) % m] = 1;
  auto got = values(testgraph::cross_entropy(input(x, {n, m}), input(onehot, {n, m}), n, m));
  double want = 0;
  for (int i = 0; i < n; ++i) {
    double mx = -INFINITY, sum = 0;
    for (int j = 0; j < m; ++j) mx = std::max(mx, double(x[i * m + j]));
    for (int j = 0; j < m; ++j) sum += std::exp(x[i * m + j] - mx);
    want -= x[i * m + (i * 3) % m] - mx - std::log(sum);
  }
  expect_near(got, {want / n}, 1e-5);
}

TEST_F(RealizeTest, ColumnNormalisation) {
  const int n = 8, m = 5;
  auto x = random_floats(n * m, 6, 0.5f, 2.0f);
  UOpRef xi = input(x, {n, m});
  UOpRef s = lazy::expand(lazy::reduce(xi, Op::ADD, {0}), {n, m});
  auto got = values(testgraph::ew(Op::FDIV, xi, s));
  std::vector<double> want;
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < m; ++j) {
      double col = 0;
      for (int k = 0; k < n; ++k) col += x[k * m + j];
      want.push_back(x[i * m + j] / col);
    }
  expect_near(got, want, 1e-6);
}

TEST_F(RealizeTest, SumOfAProductWithAFactorFreeOfTheReducedAxis) {
  // sum_k x[i, k] * c[i, j] * y[k, j]: c leaves the loop, x * y stays in it.
  const int n = 5, k = 7, m = 3;
  auto x = random_floats(n * k, 8), c = random_floats(n * m, 9), y = random_floats(k * m, 10);
  UOpRef xe = lazy::expand(lazy::reshape(input(x, {n, k}), {n, k, 1}), {n, k, m});
  UOpRef ce = lazy::expand(lazy::reshape(input(c, {n, m}), {n, 1, m}), {n, k, m});
  UOpRef ye = lazy::expand(lazy::reshape(input(y, {k, m}), {1, k, m}), {n, k, m});
  UOpRef prod = testgraph::ew(Op::MUL, testgraph::ew(Op::MUL, xe, ce), ye);
  auto got = values(lazy::reshape(lazy::reduce(prod, Op::ADD, {1}), {n, m}));
  std::vector<double> want;
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < m; ++j) {
      double sum = 0;
      for (int r = 0; r < k; ++r) sum += double(x[i * k + r]) * c[i * m + j] * y[r * m + j];
      want.push_back(sum);
    }
  expect_near(got, want, 1e-5);
}

TEST_F(RealizeTest, OneHotSumOverAnOutputAxisScattersIntoZeros) {
  // out[v, d] = sum over n of where(idx[n] == v, x[n, d], 0), run as a scatter-add: repeated
  // indices add up, indices outside 0..v-1 add nothing, untouched rows stay 0. 16 columns
  // (blocks of 8) and 5 (no blocks).
  // With `normalised`, x / x.sum(1): a computed value scattered (its row sums realised first).
  const std::vector<int32_t> idx{3, 0, 3, -1, 6, 3, 7, 0, 2, 100, 3, 6, 1, 3};
  const int n = static_cast<int>(idx.size()), v = 7;
  for (auto [d, normalised] : {std::pair{16, false}, {5, false}, {16, true}}) {
    auto x = random_floats(static_cast<size_t>(n * d), 11, 0.5f, 2.0f);
    UOpRef ix = runtime::from_host(dev_, dtypes::int32, {n}, idx.data());
    UOpRef xn = input(x, {n, d});
    if (normalised)
      xn = testgraph::ew(Op::FDIV, xn, lazy::expand(lazy::reduce(xn, Op::ADD, {1}), {n, d}));
    UOpRef xe = lazy::expand(lazy::reshape(xn, {n, 1, d}), {n, v, d});
    UOpRef hit = lazy::elementwise(
        Op::CMPEQ,
        {lazy::expand(lazy::reshape(ix, {n, 1, 1}), {n, v, d}),
         lazy::expand(lazy::reshape(lazy::iota(dtypes::int32, v), {1, v, 1}), {n, v, d})});
    UOpRef picked =
        lazy::elementwise(Op::WHERE, {hit, xe, lazy::full(dtypes::float32, 0.0, {n, v, d})});
    auto got = values(lazy::reshape(lazy::reduce(picked, Op::ADD, {0}), {v, d}));
    std::vector<double> want(static_cast<size_t>(v * d), 0.0);
    for (int i = 0; i < n; ++i) {
      double row = 0;
      for (int j = 0; j < d; ++j) row += x[i * d + j];
      if (idx[i] >= 0 && idx[i] < v)
        for (int j = 0; j < d; ++j) want[idx[i] * d + j] += x[i * d + j] / (normalised ? row : 1);
    }
    expect_near(got, want, 1e-6);
  }
}

TEST_F(RealizeTest, OneHotSumInsideAValueIsScatteredThenAdded) {
  // A tied embedding's gradient: the lookup's one-hot sum built as (d, v), transposed and added
  // to a (v, d) matmul.
  const std::vector<int32_t> idx{2, 0, 2, 5, 9, 2, 1, 0, 4, 2};
  const int n = static_cast<int>(idx.size()), v = 6, d = 16, k = 3;
  auto x = random_floats(static_cast<size_t>(n * d), 12), a = random_floats(v * k, 13),
       b = random_floats(k * d, 14);
  UOpRef ix = runtime::from_host(dev_, dtypes::int32, {n}, idx.data());
  UOpRef hit = lazy::elementwise(
      Op::CMPEQ, {lazy::expand(lazy::reshape(ix, {n, 1, 1}), {n, d, v}),
                  lazy::expand(lazy::reshape(lazy::iota(dtypes::int32, v), {1, 1, v}), {n, d, v})});
  UOpRef xe = lazy::expand(lazy::reshape(input(x, {n, d}), {n, d, 1}), {n, d, v});
  UOpRef picked =
      lazy::elementwise(Op::WHERE, {hit, xe, lazy::full(dtypes::float32, 0.0, {n, d, v})});
  UOpRef dv = lazy::reshape(lazy::reduce(picked, Op::ADD, {0}), {d, v});
  auto got = values(testgraph::ew(Op::ADD, lazy::permute(dv, {1, 0}),
                                  testgraph::matmul(input(a, {v, k}), input(b, {k, d}), v, k, d)));
  std::vector<double> want(static_cast<size_t>(v * d), 0.0);
  for (int r = 0; r < v; ++r)
    for (int c = 0; c < d; ++c)
      for (int j = 0; j < k; ++j) want[r * d + c] += double(a[r * k + j]) * b[j * d + c];
  for (int i = 0; i < n; ++i)
    if (idx[i] < v)
      for (int c = 0; c < d; ++c) want[idx[i] * d + c] += x[i * d + c];
  expect_near(got, want, 1e-5);
}

TEST_F(RealizeTest, MovementOps) {
  auto x = random_floats(3 * 4, 7);
  UOpRef xi = input(x, {3, 4});
  // pad (1, 2) on axis 1, flip axis 0, shrink rows 1..3, permute.
  UOpRef p = lazy::pad(xi, {{0, 0}, {1, 2}});
  UOpRef f = lazy::flip(p, {0});
  UOpRef s = lazy::shrink(f, {{1, 3}, {0, 7}});
  UOpRef t = lazy::permute(s, {1, 0});
  auto got = values(t);
  std::vector<double> want;
  for (int j = 0; j < 7; ++j)
    for (int i = 1; i < 3; ++i) {
      int row = 2 - i, col = j - 1;
      want.push_back(col >= 0 && col < 4 ? x[row * 4 + col] : 0.0);
    }
  expect_near(got, want, 0);
}

// Reshapes of a realised buffer (through further reshapes) are views of it: no kernel, the
// same memory; a permute of it is a kernel.
TEST_F(RealizeTest, AReshapeOfARealisedBufferIsAViewOfIt) {
  const std::vector<float> x = random_floats(24, 8);
  const UOpRef xi = input(x, {4, 6});
  const UOpRef r = lazy::reshape(lazy::reshape(xi, {2, 12}), {3, 2, 4});
  const schedule::Schedule s = runtime::cached_schedule({r}, dev_);
  EXPECT_EQ(s.items.size(), 0u);
  const UOpRef got = runtime::realize({r}, dev_)[0];
  EXPECT_EQ(lazy::realized_buffer(got.get()), lazy::realized_buffer(xi.get()));
  EXPECT_EQ(lazy::shape_of(got), (Shape{3, 2, 4}));
  EXPECT_EQ(values(r), x);
  EXPECT_EQ(runtime::cached_schedule({lazy::permute(xi, {1, 0})}, dev_).items.size(), 1u);
}

TEST_F(RealizeTest, MatmulAgainstLoops) {
  const int n = 17, k = 9, m = 6;
  auto a = random_floats(n * k, 8), b = random_floats(k * m, 9);
  UOpRef ae = lazy::expand(lazy::reshape(input(a, {n, k}), {n, 1, k}), {n, m, k});
  UOpRef bt = lazy::permute(input(b, {k, m}), {1, 0});
  UOpRef be = lazy::expand(lazy::reshape(bt, {1, m, k}), {n, m, k});
  UOpRef mm = lazy::reshape(lazy::reduce(testgraph::ew(Op::MUL, ae, be), Op::ADD, {2}), {n, m});
  auto got = values(mm);
  std::vector<double> want;
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < m; ++j) {
      double acc = 0;
      for (int q = 0; q < k; ++q) acc += double(a[i * k + q]) * b[q * m + j];
      want.push_back(acc);
    }
  expect_near(got, want, 1e-5);
}

TEST_F(RealizeTest, AssignOrderingAndSelfTranspose) {
  std::vector<float> a = {1, 2, 3, 4};
  UOpRef ai = input(a, {2, 2});
  UOpRef reader = testgraph::ew(Op::MUL, ai, ai);
  UOpRef asg = lazy::assign(ai, lazy::permute(ai, {1, 0}));
  auto outs = runtime::realize({asg, reader}, dev_);
  std::vector<float> got(4), old_sq(4);
  runtime::to_host(outs[0], got.data());
  runtime::to_host(outs[1], old_sq.data());
  EXPECT_EQ(got, (std::vector<float>{1, 3, 2, 4}));
  EXPECT_EQ(old_sq, (std::vector<float>{1, 4, 9, 16}));
}

TEST_F(RealizeTest, AssignsThatReadEachOthersTargetsSeeTheOldValues) {
  // An optimizer-step shape: a <- a + b and b <- b - a, both from the old a and b.
  std::vector<float> a = {1, 2, 3}, b = {10, 20, 30};
  UOpRef ai = input(a, {3}), bi = input(b, {3});
  auto outs = runtime::realize({lazy::assign(ai, testgraph::ew(Op::ADD, ai, bi)),
                                lazy::assign(bi, testgraph::ew(Op::SUB, bi, ai))},
                               dev_);
  std::vector<float> na(3), nb(3);
  runtime::to_host(outs[0], na.data());
  runtime::to_host(outs[1], nb.data());
  EXPECT_EQ(na, (std::vector<float>{11, 22, 33}));
  EXPECT_EQ(nb, (std::vector<float>{9, 18, 27}));
}

TEST_F(RealizeTest, BuffersAreReleasedWithTheirNodes) {
  size_t before = runtime::live_buffer_count();
  {
    auto x = random_floats(100, 10);
    UOpRef xi = input(x, {100});
    UOpRef s = lazy::expand(lazy::reshape(lazy::reduce(xi, Op::ADD, {0}), {1}), {100});
    values(testgraph::ew(Op::FDIV, xi, s));
  }
  EXPECT_EQ(runtime::live_buffer_count(), before);
}

TEST_F(RealizeTest, FreedLargeBuffersAreReusedForTheSameSize) {
  // 64K floats (256 KiB): pooled. The second buffer of the same size gets the first's memory,
  // with the values a kernel writes into it (not stale ones); another size gets fresh memory.
  const int64_t n = 64 * 1024;
  pg_buffer_t first = nullptr;
  {
    UOpRef b = runtime::new_buffer(dev_, dtypes::float32, n);
    first = runtime::buffer_memory(b.get())->handle();
  }
  {
    UOpRef again = runtime::new_buffer(dev_, dtypes::float32, n);
    EXPECT_EQ(runtime::buffer_memory(again.get())->handle(), first);
  }
  // `first` is back in the pool (not freed), so only a size-blind pool could hand it out here.
  UOpRef other = runtime::new_buffer(dev_, dtypes::float32, n + 16);
  EXPECT_NE(runtime::buffer_memory(other.get())->handle(), first);
  auto x = random_floats(static_cast<size_t>(n), 12);
  UOpRef xi = input(x, {n});
  std::vector<float> got = values(testgraph::ew(Op::ADD, xi, xi));
  for (size_t i = 0; i < x.size(); ++i) ASSERT_EQ(got[i], x[i] + x[i]) << i;
}

TEST_F(RealizeTest, SameStructureOverOtherBuffersHitsTheScheduleCache) {
  auto run_once = [&](unsigned seed) {
    auto x = random_floats(6 * 10, seed);
    auto got = values(testgraph::softmax(input(x, {6, 10}), 6, 10));
    double row0 = 0;
    for (int j = 0; j < 10; ++j) row0 += got[j];
    EXPECT_NEAR(row0, 1.0, 1e-5);
    double mx = -INFINITY, sum = 0;
    for (int j = 0; j < 10; ++j) mx = std::max(mx, double(x[j]));
    for (int j = 0; j < 10; ++j) sum += std::exp(x[j] - mx);
    EXPECT_NEAR(got[3], std::exp(x[3] - mx) / sum, 1e-6);
  };
  run_once(11);
  runtime::ScheduleCacheStats before = runtime::schedule_cache_stats();
  run_once(12);
  runtime::ScheduleCacheStats after = runtime::schedule_cache_stats();
  EXPECT_EQ(after.hits, before.hits + 1);
  EXPECT_EQ(after.entries, before.entries);
}

// The cache compares structure, not identity: (x - y) * x and (x - y) * y have the same ops in
// the same order over two buffers of one size, but the product reads another source, so each is
// scheduled on its own; y - x reads its inputs in the other order than x - y and shares its
// schedule with the inputs swapped.
TEST_F(RealizeTest, TheScheduleCacheTellsSourcesApartAndMapsInputsByPosition) {
  std::vector<float> x = {1, 2, 3, 4}, y = {10, 20, 30, 40};
  auto ew = [](Op op, const UOpRef& a, const UOpRef& b) { return testgraph::ew(op, a, b); };
  UOpRef xi = input(x, {4}), yi = input(y, {4});
  EXPECT_EQ(values(ew(Op::MUL, ew(Op::SUB, xi, yi), xi))[1], -36.0f);
  runtime::ScheduleCacheStats before = runtime::schedule_cache_stats();
  EXPECT_EQ(values(ew(Op::MUL, ew(Op::SUB, xi, yi), yi))[1], -360.0f);
  EXPECT_EQ(values(ew(Op::SUB, xi, yi))[2], -27.0f);
  EXPECT_EQ(runtime::schedule_cache_stats().hits, before.hits);
  std::vector<float> got = values(ew(Op::SUB, yi, xi));
  EXPECT_EQ(runtime::schedule_cache_stats().hits, before.hits + 1);
  for (size_t i = 0; i < x.size(); ++i) EXPECT_EQ(got[i], y[i] - x[i]) << i;
  // A constant's value and a buffer's size are each a structure of their own.
  EXPECT_EQ(values(testgraph::ew(Op::ADD, xi, lazy::full(dtypes::float32, 7, {4})))[0], 8.0f);
  EXPECT_EQ(values(testgraph::ew(Op::ADD, xi, lazy::full(dtypes::float32, 9, {4})))[0], 10.0f);
  EXPECT_EQ(values(ew(Op::SUB, input({5, 6, 7}, {3}), input({10, 20, 30}, {3})))[2], -23.0f);
  EXPECT_EQ(runtime::schedule_cache_stats().hits, before.hits + 1);
}

// An empty value is realised without a kernel: one was built over its other axes and wrote
// them into the empty buffer (exp of a (0, 64) tensor: 64 floats, a corrupted heap).
TEST_F(RealizeTest, AnEmptyValueNeedsNoKernel) {
  std::vector<float> none, w(256 * 64, 1.0f);
  UOpRef z = input(none, {0, 64}), a = input(none, {0, 256}), b = input(w, {256, 64});
  auto exp = [](const UOpRef& x) { return lazy::elementwise(Op::EXP2, {x}); };
  for (const UOpRef& v :
       {exp(z), testgraph::ew(Op::MUL, testgraph::matmul(a, b, 0, 256, 64), exp(z))}) {
    const schedule::Schedule s = runtime::cached_schedule({v}, dev_);
    EXPECT_TRUE(s.items.empty());
    EXPECT_EQ(lazy::shape_of(runtime::realize({v}, dev_)[0]), (lazy::Shape{0, 64}));
  }
  // An empty product padded into a value beside an exp: the long-product rule divided by its
  // element count, 0, and the process died of SIGFPE.
  std::vector<float> ones(2 * 64, 1.0f);
  UOpRef padded = lazy::pad(testgraph::matmul(a, b, 0, 256, 64), {{1, 1}, {0, 0}});
  std::vector<float> got = values(testgraph::ew(Op::MUL, padded, exp(input(ones, {2, 64}))));
  EXPECT_EQ(got, std::vector<float>(2 * 64, 0.0f));
}

TEST_F(RealizeTest, LargeReductionsToOneValueAreSplitAndExact) {
  const int64_t n = int64_t{1} << 16;
  std::vector<float> x(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) x[static_cast<size_t>(i)] = static_cast<float>((i * 7919) % 1000);
  UOpRef xi = input(x, {n});
  EXPECT_EQ(runtime::cached_schedule({lazy::reduce(xi, Op::ADD, {0})}, dev_).items.size(), 2u);
  // sum: integers below 2^24 in every partial, so the float result is exact.
  auto sum = values(lazy::reduce(xi, Op::ADD, {0}));
  double want = 0, mx = -1;
  for (float v : x) {
    want += v;
    mx = std::max(mx, double(v));
  }
  expect_near(sum, {want}, 0);
  expect_near(values(lazy::reduce(xi, Op::MAX, {0})), {mx}, 0);
}

// No block count divides 33 * 1031 elements: 32 blocks of 1063 and a rest of 7 reduced in the
// final kernel beside the partials. The largest element sits in the rest for one max and in a
// block for the other.
TEST_F(RealizeTest, LargeReductionsNoBlockCountDividesAreSplitWithARest) {
  const int64_t n = 33 * 1031;
  std::vector<float> x(static_cast<size_t>(n));
  // (integers whose sums stay below 2^24: exact in float)
  for (int64_t i = 0; i < n; ++i) x[static_cast<size_t>(i)] = static_cast<float>((i * 7919) % 100);
  for (int64_t top : {n - 3, int64_t{5}}) {
    std::vector<float> y = x;
    y[static_cast<size_t>(top)] = 5000;
    UOpRef yi = input(y, {33, 1031});
    EXPECT_EQ(runtime::cached_schedule({lazy::reduce(yi, Op::ADD, {0, 1})}, dev_).items.size(), 2u);
    double want = 0;
    for (float v : y) want += v;
    expect_near(values(lazy::reduce(yi, Op::ADD, {0, 1})), {want}, 0);
    expect_near(values(lazy::reduce(yi, Op::MAX, {0, 1})), {5000}, 0);
  }
}

TEST_F(RealizeTest, IntermediatesWithDisjointLifetimesShareMemory) {
  std::vector<float> x(64);
  for (int i = 0; i < 64; ++i) x[i] = static_cast<float>(i);
  UOpRef xi = input(x, {64});
  auto k = [](double v) { return lazy::full(dtypes::float32, v, {64}); };
  UOpRef c1 = lazy::contiguous(testgraph::ew(Op::MUL, xi, k(2)));
  UOpRef c2 = lazy::contiguous(testgraph::ew(Op::ADD, c1, k(1)));
  UOpRef c3 = lazy::contiguous(testgraph::ew(Op::MUL, c2, k(3)));
  UOpRef out = testgraph::ew(Op::ADD, c3, k(1));
  schedule::Schedule s = runtime::cached_schedule({out}, dev_);
  ASSERT_EQ(s.items.size(), 4u);
  auto got = values(out);
  for (int i = 0; i < 64; ++i) ASSERT_EQ(got[i], (2 * i + 1) * 3 + 1);
  // Run the planner on a fresh instance of the schedule and inspect the sharing: c1 (used by
  // kernels 0 and 1) is dead when c3 is written (kernel 2).
  runtime::plan_memory(s);
  const UOp* m1 = s.items[0].buffers[0].get();
  const UOp* m3 = s.items[2].buffers[0].get();
  EXPECT_EQ(runtime::buffer_memory(m1).get(), runtime::buffer_memory(m3).get());
  EXPECT_NE(runtime::buffer_memory(s.items[1].buffers[0].get()).get(),
            runtime::buffer_memory(m1).get());
}

// A schedule from the cache shares memory as plan_memory would, from the plan its entry worked
// out once over placeholders: c1 and c3 share, c2 has its own.
TEST_F(RealizeTest, ACachedScheduleSharesMemoryByItsEntrysPlan) {
  std::vector<float> x(64, 1.0f);
  auto k = [](double v) { return lazy::full(dtypes::float32, v, {64}); };
  auto chain = [&] {
    UOpRef c1 = lazy::contiguous(testgraph::ew(Op::MUL, input(x, {64}), k(2)));
    UOpRef c2 = lazy::contiguous(testgraph::ew(Op::ADD, c1, k(1)));
    UOpRef c3 = lazy::contiguous(testgraph::ew(Op::MUL, c2, k(3)));
    return testgraph::ew(Op::ADD, c3, k(1));
  };
  for (int run = 0; run < 2; ++run) {  // the first run makes the entry, the second hits it
    runtime::BoundSchedule bound = runtime::bind_schedule({chain()}, dev_);
    ASSERT_EQ(bound.size(), 4u);
    bound.share_memory();
    const schedule::Schedule s = bound.materialize();
    auto memory = [&](size_t item) {
      return runtime::buffer_memory(s.items[item].buffers[0].get());
    };
    EXPECT_EQ(memory(0).get(), memory(2).get());
    EXPECT_NE(memory(0).get(), memory(1).get());
    EXPECT_NE(memory(3).get(), memory(0).get());
  }
}

// A cached schedule keeps its kernels' launch arguments but only watches the kernels: one the
// program cache dropped is compiled again, and the values stay right.
TEST_F(RealizeTest, ACachedScheduleRecompilesAKernelTheProgramCacheDropped) {
  runtime::set_loaded_kernel_limit(1);
  std::vector<float> x = {1, 2, 3, 4};
  auto run = [&] {
    UOpRef twice = lazy::contiguous(testgraph::ew(Op::ADD, input(x, {4}), input(x, {4})));
    return values(lazy::reduce(twice, Op::ADD, {0}));
  };
  for (int i = 0; i < 3; ++i) {
    const size_t compiled = runtime::compiled_kernel_count();
    EXPECT_EQ(run(), std::vector<float>{20});
    EXPECT_EQ(runtime::compiled_kernel_count(), compiled + 2);  // both, one evicting the other
  }
  runtime::set_loaded_kernel_limit(4096);
}

// realize is thread-safe: threads realising graphs of the same structures at once share the
// schedule cache's entries (their memory plans and prepared launches) and the compiled kernels,
// and each gets its own values: a softmax over rows, and a chain of three intermediates whose
// memory the plan shares.
TEST_F(RealizeTest, ThreadsRealisingTheSameStructuresGetTheirOwnValues) {
  constexpr int kThreads = 4, kRuns = 30, n = 6, m = 33;
  auto k = [](double v) { return lazy::full(dtypes::float32, v, {n, m}); };
  std::vector<std::string> failures(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int r = 0; r < kRuns && failures[t].empty(); ++r) {
        std::vector<float> x(n * m);
        for (int i = 0; i < n * m; ++i)
          x[i] = static_cast<float>((i * 7 + t * 13 + r) % 23) * 0.25f - 2.0f;
        UOpRef xi = input(x, {n, m});
        UOpRef c1 = lazy::contiguous(testgraph::ew(Op::MUL, xi, k(2)));
        UOpRef c2 = lazy::contiguous(testgraph::ew(Op::ADD, c1, k(1)));
        UOpRef c3 = lazy::contiguous(testgraph::ew(Op::MUL, c2, k(3)));
        const std::vector<float> chain = values(testgraph::ew(Op::ADD, c3, k(1)));
        const std::vector<float> soft = values(testgraph::softmax(xi, n, m));
        for (int i = 0; i < n && failures[t].empty(); ++i) {
          double mx = -INFINITY, sum = 0;
          for (int j = 0; j < m; ++j) mx = std::max(mx, double(x[i * m + j]));
          for (int j = 0; j < m; ++j) sum += std::exp(x[i * m + j] - mx);
          for (int j = 0; j < m; ++j) {
            const float v = x[i * m + j];
            if (chain[i * m + j] != (2 * v + 1) * 3 + 1 ||
                std::abs(soft[i * m + j] - std::exp(v - mx) / sum) > 1e-5)
              failures[t] = "run " + std::to_string(r) + " element " + std::to_string(i * m + j);
          }
        }
      }
    });
  for (std::thread& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(failures[t], "") << "thread " << t;
}

// The compiled-kernel cache keeps at most its limit, dropping the least recently used: a
// kernel per new constant (x * c for ten c) leaves four loaded; the first one, used again, is
// compiled again and still right.
TEST_F(RealizeTest, CompiledKernelsBeyondTheLimitAreDropped) {
  runtime::set_loaded_kernel_limit(4);
  std::vector<float> x = {1, 2, 3, 4};
  auto times = [&](double c) {
    return values(testgraph::ew(Op::MUL, input(x, {4}), lazy::full(dtypes::float32, c, {4})));
  };
  for (int i = 0; i < 10; ++i) {
    const double c = 1.5 + 0.25 * i;
    std::vector<float> got = times(c);
    for (size_t e = 0; e < x.size(); ++e) ASSERT_EQ(got[e], static_cast<float>(x[e] * c));
    EXPECT_LE(runtime::loaded_kernel_count(), 4u);
  }
  const size_t compiled = runtime::compiled_kernel_count();
  EXPECT_EQ(times(1.5)[3], 6.0f);
  EXPECT_EQ(runtime::compiled_kernel_count(), compiled + 1);
  runtime::set_loaded_kernel_limit(4096);
}

// The schedule cache likewise keeps at most its limit: ten graphs leave three entries, and a
// dropped graph, scheduled again, gives the right values.
TEST_F(RealizeTest, SchedulesBeyondTheCacheLimitAreDropped) {
  runtime::set_schedule_cache_limit(3);
  std::vector<float> x = {1, 2, 3, 4};
  auto plus = [&](double c) {
    return values(testgraph::ew(Op::ADD, input(x, {4}), lazy::full(dtypes::float32, c, {4})));
  };
  for (int i = 0; i < 10; ++i) {
    EXPECT_EQ(plus(0.5 * i)[1], static_cast<float>(2 + 0.5 * i));
    EXPECT_LE(runtime::schedule_cache_stats().entries, 3u);
  }
  EXPECT_EQ(plus(0.0)[3], 4.0f);
  runtime::set_schedule_cache_limit(2048);
}

TEST_F(RealizeTest, FiveBatchSizesRunThroughOneCompiledKernel) {
  size_t before = 0;
  for (int64_t batch : {2, 3, 8, 19, 300}) {
    std::vector<float> x(static_cast<size_t>(batch * 7));
    for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i % 13) - 6;
    UOpRef xi = input(x, {batch, 7});
    // relu(x * 3 + 1) over a (batch, 7) tensor.
    UOpRef y = testgraph::ew(
        Op::MAX,
        testgraph::ew(Op::ADD,
                      testgraph::ew(Op::MUL, xi, lazy::full(dtypes::float32, 3, {batch, 7})),
                      lazy::full(dtypes::float32, 1, {batch, 7})),
        lazy::full(dtypes::float32, 0, {batch, 7}));
    auto got = values(y);
    for (size_t i = 0; i < x.size(); ++i) ASSERT_EQ(got[i], std::max(x[i] * 3 + 1, 0.0f));
    if (batch == 2) before = runtime::compiled_kernel_count();
  }
  EXPECT_EQ(runtime::compiled_kernel_count(), before);
}

// Reduce kernels take the batch size as a launch variable too: a matmul (rows register-tiled,
// the last partial block gated), a row sum, a softmax and a layernorm over the last axis each
// compile once for five batch sizes, none of them a multiple of the others.
TEST_F(RealizeTest, FiveBatchSizesShareReduceKernels) {
  const int64_t k = 24, n = 32;
  const auto w = random_floats(static_cast<size_t>(k * n), 11);
  size_t before = 0;
  for (int64_t batch : {2, 3, 8, 19, 300}) {
    const auto x = random_floats(static_cast<size_t>(batch * k), static_cast<unsigned>(batch));
    const UOpRef xi = input(x, {batch, k});
    std::vector<double> mm, rows, soft, norm;
    for (int64_t i = 0; i < batch; ++i) {
      const float* r = &x[static_cast<size_t>(i * k)];
      for (int64_t j = 0; j < n; ++j) {
        double s = 0;
        for (int64_t q = 0; q < k; ++q) s += double(r[q]) * w[static_cast<size_t>(q * n + j)];
        mm.push_back(s);
      }
      double sum = 0, mx = r[0], sq = 0, den = 0;
      for (int64_t q = 0; q < k; ++q) sum += r[q], mx = std::max(mx, double(r[q]));
      rows.push_back(sum);
      for (int64_t q = 0; q < k; ++q) den += std::exp(r[q] - mx);
      for (int64_t q = 0; q < k; ++q) soft.push_back(std::exp(r[q] - mx) / den);
      const double mean = sum / static_cast<double>(k);
      for (int64_t q = 0; q < k; ++q) sq += (r[q] - mean) * (r[q] - mean);
      const double inv = 1 / std::sqrt(sq / static_cast<double>(k) + 1e-5);
      for (int64_t q = 0; q < k; ++q) norm.push_back((r[q] - mean) * inv);
    }
    expect_near(values(testgraph::matmul(xi, input(w, {k, n}), batch, k, n)), mm, 1e-5);
    expect_near(values(lazy::reduce(xi, Op::ADD, {1})), rows, 1e-5);
    expect_near(values(testgraph::softmax(xi, batch, k)), soft, 1e-5);
    expect_near(values(testgraph::layernorm(xi, batch, k)), norm, 1e-4);
    if (batch == 2) before = runtime::compiled_kernel_count();
  }
  EXPECT_EQ(runtime::compiled_kernel_count(), before);
}

// A flat elementwise kernel whose length is a multiple of 256 runs as n0 blocks of 256 (a
// constant range the codegen can vectorise): one kernel for every such length, the variable
// bound to the block count. Other lengths, and flipped (reversed) reads, keep their values.
TEST_F(RealizeTest, FlatElementwiseLengthsShareOneBlockedKernel) {
  auto mul_add = [&](int64_t n, bool flip) {
    std::vector<float> a(static_cast<size_t>(n)), b(a.size());
    for (size_t i = 0; i < a.size(); ++i) {
      a[i] = static_cast<float>(i % 13) - 6;
      b[i] = static_cast<float>(i % 5);
    }
    UOpRef ai = input(a, {n}), bi = input(b, {n});
    UOpRef y = testgraph::ew(Op::ADD, testgraph::ew(Op::MUL, flip ? lazy::flip(ai, {0}) : ai, bi),
                             lazy::full(dtypes::float32, 1, {n}));
    schedule::Schedule s = runtime::cached_schedule({y}, dev_);
    auto got = values(y);
    for (size_t i = 0; i < a.size(); ++i)
      EXPECT_EQ(got[i], (flip ? a[a.size() - 1 - i] : a[i]) * b[i] + 1)
          << "length " << n << (flip ? " flipped" : "") << " element " << i;
    return s;
  };
  size_t before = 0;
  for (int64_t n : {512, 768, 4096, 256 * 37}) {
    schedule::Schedule s = mul_add(n, false);
    ASSERT_EQ(s.items.size(), 1u);
    ASSERT_EQ(s.items[0].vars.size(), 1u);
    EXPECT_EQ(s.items[0].vars[0].second, n / 256) << "length " << n;
    if (n == 512) before = runtime::compiled_kernel_count();
  }
  EXPECT_EQ(runtime::compiled_kernel_count(), before);
  for (int64_t n : {1000, 256, 1024}) {
    schedule::Schedule s = mul_add(n, n == 1024);
    ASSERT_EQ(s.items[0].vars.size(), 1u);
    EXPECT_EQ(s.items[0].vars[0].second, n == 1024 ? 4 : n) << "length " << n;
  }
  // 16 MiB of output: compiled for its length (no variable), so its stores can stream.
  EXPECT_TRUE(mul_add(int64_t{4} << 20, false).items[0].vars.empty());
  EXPECT_EQ(mul_add(int64_t{2} << 20, false).items[0].vars.size(), 1u);
}

TEST_F(RealizeTest, UsingATensorOnAnUnknownDeviceIsAnError) {
  try {
    runtime::canonical_device("tpu:7");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("tpu"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace polygrad
