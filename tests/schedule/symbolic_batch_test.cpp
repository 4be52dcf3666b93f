// Batch sizes as launch variables beyond the output rows: kernels that reduce over the batch
// (weight and bias gradients, a mean loss) and the constants 1/batch take the batch at launch,
// so a whole training step compiles once for every batch size; row-wise kernels over
// (batch, seq, d) take batch * seq. Values against plain C++.
#include "graphs.hpp"
#include "random_values.hpp"
#include "runtime/runtime.hpp"
#include "runtime/schedule_cache.hpp"

#include <polygrad/tensor.hpp>

#include <gtest/gtest.h>

#include <cmath>

namespace polygrad {
namespace {

std::vector<float> uniform(size_t n, unsigned seed, float lo = -1, float hi = 1) {
  return testgraph::random_floats(n, seed, lo, hi);
}

/// The mean of `count` values of `v` from `first`, `stride` apart, and their sum of squared
/// deviations from it, in double.
struct Moments {
  double mean, squares;
};
Moments moments(const std::vector<float>& v, int64_t first, int64_t stride, int64_t count) {
  auto at = [&](int64_t i) { return double{v[static_cast<size_t>(first + i * stride)]}; };
  double sum = 0, ss = 0;
  for (int64_t i = 0; i < count; ++i) sum += at(i);
  const double mean = sum / double(count);
  for (int64_t i = 0; i < count; ++i) ss += (at(i) - mean) * (at(i) - mean);
  return {mean, ss};
}

/// A two-layer perceptron (in -> hidden, relu, -> out) in double, trained by SGD on a mean
/// cross-entropy: the reference for the polygrad step below.
struct Mlp {
  int64_t in, hidden, out;
  std::vector<double> w1, b1, w2, b2;  // torch layout: w (out, in)

  /// One step on x (batch, in) with labels y; returns the loss before the update.
  double step(const std::vector<float>& x, const std::vector<int32_t>& y, double lr) {
    const auto batch = static_cast<int64_t>(y.size());
    std::vector<double> gw1(w1.size()), gb1(b1.size()), gw2(w2.size()), gb2(b2.size());
    double loss = 0;
    for (int64_t r = 0; r < batch; ++r) {
      std::vector<double> h(static_cast<size_t>(hidden)), z(static_cast<size_t>(out));
      for (int64_t j = 0; j < hidden; ++j) {
        double s = b1[j];
        for (int64_t i = 0; i < in; ++i) s += w1[j * in + i] * x[r * in + i];
        h[j] = std::max(s, 0.0);
      }
      double mx = -1e300;
      for (int64_t o = 0; o < out; ++o) {
        double s = b2[o];
        for (int64_t j = 0; j < hidden; ++j) s += w2[o * hidden + j] * h[j];
        z[o] = s;
        mx = std::max(mx, s);
      }
      double den = 0;
      for (double v : z) den += std::exp(v - mx);
      loss += (std::log(den) + mx - z[y[r]]) / batch;
      std::vector<double> dh(static_cast<size_t>(hidden));
      for (int64_t o = 0; o < out; ++o) {
        const double dz = (std::exp(z[o] - mx) / den - (o == y[r] ? 1 : 0)) / batch;
        gb2[o] += dz;
        for (int64_t j = 0; j < hidden; ++j) {
          gw2[o * hidden + j] += dz * h[j];
          dh[j] += dz * w2[o * hidden + j];
        }
      }
      for (int64_t j = 0; j < hidden; ++j) {
        if (h[j] <= 0) continue;
        gb1[j] += dh[j];
        for (int64_t i = 0; i < in; ++i) gw1[j * in + i] += dh[j] * x[r * in + i];
      }
    }
    auto update = [lr](std::vector<double>& p, const std::vector<double>& g) {
      for (size_t i = 0; i < p.size(); ++i) p[i] -= lr * g[i];
    };
    update(w1, gw1), update(b1, gb1), update(w2, gw2), update(b2, gb2);
    return loss;
  }
};

Tensor parameter(const std::vector<double>& v, Tensor::Shape shape) {
  Tensor t(std::vector<float>(v.begin(), v.end()), std::move(shape));
  t.realize().requires_grad(true);
  return t;
}

void expect_close(const Tensor& t, const std::vector<double>& want, const char* what,
                  int64_t batch) {
  const std::vector<float> got = t.to_vector<float>();
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i)
    ASSERT_NEAR(got[i], want[i], 1e-5 * (1 + std::abs(want[i])))
        << what << "[" << i << "], batch " << batch;
}

/// SGD steps of an in -> hidden -> out perceptron at each batch size of `batches`: every
/// updated parameter against the double reference; returns the kernels compiled after the first.
size_t compiles_after_first(int64_t in, int64_t hidden, int64_t out,
                            const std::vector<int64_t>& batches) {
  Mlp ref{in, hidden, out, {}, {}, {}, {}};
  auto init = [](size_t n, unsigned seed) {
    std::vector<float> f = uniform(n, seed, -0.3f, 0.3f);
    return std::vector<double>(f.begin(), f.end());
  };
  const auto h = static_cast<size_t>(hidden), o = static_cast<size_t>(out);
  ref.w1 = init(h * static_cast<size_t>(in), 1), ref.b1 = init(h, 2);
  ref.w2 = init(o * h, 3), ref.b2 = init(o, 4);
  Tensor w1 = parameter(ref.w1, {hidden, in}), b1 = parameter(ref.b1, {hidden});
  Tensor w2 = parameter(ref.w2, {out, hidden}), b2 = parameter(ref.b2, {out});
  constexpr double lr = 0.5;  // 1/batch at batch 2: a float constant is never read as a size
  size_t compiled = 0;
  for (int64_t batch : batches) {
    const auto bs = static_cast<unsigned>(batch);
    const std::vector<float> xv = uniform(static_cast<size_t>(batch * in), bs);
    std::vector<int32_t> yv(static_cast<size_t>(batch));
    for (size_t r = 0; r < yv.size(); ++r)
      yv[r] = static_cast<int32_t>((r * 7 + bs) % static_cast<size_t>(out));
    Tensor x(xv, {batch, in}), y(yv, {batch});
    Tensor loss = x.linear(w1, b1).relu().linear(w2, b2).cross_entropy(y);
    loss.backward();
    std::vector<Tensor> params{w1, b1, w2, b2};
    std::vector<Tensor> outs{loss};
    for (Tensor& p : params) {
      outs.push_back(p.assign(p.detach() - *p.grad() * lr));
      p.set_grad(std::nullopt);
    }
    Tensor::realize_all(outs);
    const double want = ref.step(xv, yv, lr);
    EXPECT_NEAR(loss.item<float>(), want, 1e-5 * (1 + want)) << "batch " << batch;
    expect_close(w1, ref.w1, "w1", batch);
    expect_close(b1, ref.b1, "b1", batch);
    expect_close(w2, ref.w2, "w2", batch);
    expect_close(b2, ref.b2, "b2", batch);
    if (batch == batches.front()) compiled = runtime::compiled_kernel_count();
  }
  return runtime::compiled_kernel_count() - compiled;
}

// Weight gradients reduce over the batch; the mean loss scales by 1/batch, and its gradient
// by the same constant. After the first batch size, four more (one of them larger than the
// first, none a multiple of another) compile nothing, and every updated parameter matches.
// 96 inputs: the first weight gradient has 6 column blocks of 16, enough to reorder its loops
// around the batch-sized k (codegen/optimize.hpp).
TEST(SymbolicBatch, TrainingStepsOfFiveBatchSizesShareTheirKernels) {
  EXPECT_EQ(compiles_after_first(96, 24, 10, {21, 2, 8, 45, 300}), 0u)
      << "a new batch size compiled a kernel";
}

// A batch equal to another extent of a kernel (the hidden units, the outputs, the inputs) is
// still its own launch variable: at batch 24 the first weight gradient's output rows (24) and
// its reduce over the batch were one variable, a kernel of its own.
TEST(SymbolicBatch, ABatchEqualToALayerWidthSharesTheKernels) {
  EXPECT_EQ(compiles_after_first(96, 24, 10, {21, 24, 10, 96, 7}), 0u)
      << "a batch equal to a layer width compiled a kernel";
}

// The mean loss over more rows than one thread should sum (the rows' cross-entropies realised
// first, then summed) makes the same kernels at every such batch size: blocks chosen by the
// divisors of the row count made new ones at 1500 and 1366 beside 2048.
TEST(SymbolicBatch, LongMeanLossesShareTheirKernels) {
  EXPECT_EQ(compiles_after_first(96, 24, 10, {2048, 1500, 1366, 3000, 9}), 0u)
      << "a new batch size compiled a kernel";
}

// A (batch, seq, d) tensor's row-wise kernels run over batch * seq rows when every index walks
// them as one (KernelBuilder::merge_leading_ranges), so the sequence length is a launch
// variable too: linear -> layernorm -> gelu -> linear -> softmax over five sequence lengths
// and two batch sizes compiles once. Values against double.
TEST(SymbolicBatch, SequenceLengthsShareRowWiseKernels) {
  constexpr int64_t d = 24, h = 40;
  const std::vector<float> w1v = uniform(h * d, 21, -0.4f, 0.4f), b1v = uniform(h, 22);
  const std::vector<float> w2v = uniform(d * h, 23, -0.4f, 0.4f), b2v = uniform(d, 24);
  const Tensor w1(w1v, {h, d}), b1(b1v, {h}), w2(w2v, {d, h}), b2(b2v, {d});
  size_t compiled = 0;
  for (auto [batch, seq] : std::vector<std::pair<int64_t, int64_t>>{
           {3, 16}, {3, 9}, {2, 23}, {3, 40}, {2, 5}, {3, 7}}) {
    const int64_t rows = batch * seq;
    const std::vector<float> xv = uniform(static_cast<size_t>(rows * d), unsigned(rows));
    const Tensor x(xv, {batch, seq, d});
    const std::vector<float> got =
        x.linear(w1, b1).layernorm().gelu().linear(w2, b2).softmax(-1).to_vector<float>();
    ASSERT_EQ(got.size(), static_cast<size_t>(rows * d));
    for (int64_t r = 0; r < rows; ++r) {
      std::vector<double> a(h), z(d);
      double mean = 0, var = 0;
      for (int64_t j = 0; j < h; ++j) {
        a[j] = b1v[j];
        for (int64_t i = 0; i < d; ++i) a[j] += double(w1v[j * d + i]) * xv[r * d + i];
        mean += a[j] / h;
      }
      for (int64_t j = 0; j < h; ++j) var += (a[j] - mean) * (a[j] - mean) / h;
      for (int64_t j = 0; j < h; ++j) {
        const double n = (a[j] - mean) / std::sqrt(var + 1e-5);
        a[j] = 0.5 * n * (1 + std::tanh(0.7978845608028654 * (n + 0.044715 * n * n * n)));
      }
      double mx = -1e300, den = 0;
      for (int64_t i = 0; i < d; ++i) {
        z[i] = b2v[i];
        for (int64_t j = 0; j < h; ++j) z[i] += double(w2v[i * h + j]) * a[j];
        mx = std::max(mx, z[i]);
      }
      for (int64_t i = 0; i < d; ++i) den += std::exp(z[i] - mx);
      for (int64_t i = 0; i < d; ++i)
        ASSERT_NEAR(got[r * d + i], std::exp(z[i] - mx) / den, 2e-5)
            << "batch " << batch << " seq " << seq << " row " << r << " column " << i;
    }
    if (seq == 16) compiled = runtime::compiled_kernel_count();
  }
  EXPECT_EQ(runtime::compiled_kernel_count(), compiled) << "a new sequence length compiled";
}

// Attention's seq x seq kernels keep the sequence length as a stride and an inner extent,
// which no launch variable of the scheduler's covers: the first two lengths compile them, and
// every later length runs the general kernels learnt from those two (runtime/size_templates).
// Causal attention over seven lengths, values against double.
TEST(SymbolicBatch, SequenceLengthsShareAttentionKernels) {
  constexpr int64_t b = 2, h = 3, d = 8;
  size_t compiled = 0;
  for (int64_t t : {6, 7, 9, 12, 10, 17, 3}) {
    const size_t n = static_cast<size_t>(b * h * t * d);
    const std::vector<float> qv = uniform(n, unsigned(t)), kv = uniform(n, unsigned(t + 100)),
                             vv = uniform(n, unsigned(t + 200));
    const Tensor q(qv, {b, h, t, d}), k(kv, {b, h, t, d}), v(vv, {b, h, t, d});
    const std::vector<float> got =
        q.scaled_dot_product_attention(k, v, std::nullopt, true).to_vector<float>();
    ASSERT_EQ(got.size(), n);
    for (int64_t r = 0; r < b * h; ++r)
      for (int64_t i = 0; i < t; ++i) {
        std::vector<double> w(static_cast<size_t>(i + 1));
        double mx = -1e300, den = 0;
        for (int64_t j = 0; j <= i; ++j) {
          double s = 0;
          for (int64_t c = 0; c < d; ++c)
            s += double(qv[(r * t + i) * d + c]) * kv[(r * t + j) * d + c];
          w[j] = s / std::sqrt(double(d));
          mx = std::max(mx, w[j]);
        }
        for (double& x : w) den += (x = std::exp(x - mx));
        for (int64_t c = 0; c < d; ++c) {
          double want = 0;
          for (int64_t j = 0; j <= i; ++j) want += w[j] / den * vv[(r * t + j) * d + c];
          ASSERT_NEAR(got[(r * t + i) * d + c], want, 2e-6)
              << "seq " << t << " row " << r << " position " << i << " column " << c;
        }
      }
    if (t == 7) compiled = runtime::compiled_kernel_count();
  }
  EXPECT_EQ(runtime::compiled_kernel_count(), compiled) << "a new sequence length compiled";
}

std::string dev() {
  return runtime::canonical_device("cpu");
}

UOpRef input(int64_t rows, int64_t cols, unsigned seed) {
  const std::vector<float> v = uniform(static_cast<size_t>(rows * cols), seed);
  return runtime::from_host(dev(), dtypes::float32, {rows, cols}, v.data());
}

/// The launch variables of the last kernel of the schedule that realises `root`.
std::vector<std::pair<std::string, int64_t>> vars_of(const UOpRef& root) {
  const schedule::Schedule s = runtime::cached_schedule({root}, dev());
  return s.items.back().vars;
}

// Which reduce ranges become variables: those that walk the outermost axis of every buffer
// they read (a batch), not a reduction along rows.
TEST(SymbolicBatch, OnlyReducesOverTheOutermostAxisTakeTheBatchAtLaunch) {
  using Vars = std::vector<std::pair<std::string, int64_t>>;
  const UOpRef x = input(37, 40, 1), dy = input(37, 24, 2);
  // x.T @ dy, a weight gradient: the reduce over 37 rows of both.
  EXPECT_EQ(vars_of(testgraph::matmul(lazy::permute(x, {1, 0}), dy, 40, 37, 24)),
            (Vars{{"n0", 40}, {"n1", 37}}));
  // x @ w: k walks x's rows (contiguous), so it keeps its extent; n0 is x's 37 rows.
  const UOpRef w = input(40, 24, 3);
  EXPECT_EQ(vars_of(testgraph::matmul(x, w, 37, 40, 24)), (Vars{{"n0", 37}}));
  // A column sum (bias gradient): vectorised along its 24 outputs, which stay constant.
  EXPECT_EQ(vars_of(lazy::reduce(dy, Op::ADD, {0})), (Vars{{"n0", 37}}));
  // A row sum: the reduce is along contiguous rows.
  EXPECT_EQ(vars_of(lazy::reduce(dy, Op::ADD, {1})), (Vars{{"n0", 37}}));
  // The sum of a batch of per-sample values (a mean loss of (batch,) or (batch, 1) outputs):
  // the codegen still splits it into vector lanes, with a tail over the variable.
  const std::vector<float> per_sample = uniform(37, 4);
  const UOpRef v = runtime::from_host(dev(), dtypes::float32, {37}, per_sample.data());
  EXPECT_EQ(vars_of(lazy::reduce(v, Op::ADD, {0})), (Vars{{"n0", 37}}));
  // x - x.mean(0): the output's rows and the reduce are the same batch, one variable.
  const UOpRef centred =
      testgraph::ew(Op::SUB, x,
                    lazy::expand(testgraph::ew(Op::MUL, lazy::reduce(x, Op::ADD, {0}),
                                               lazy::full(dtypes::float32, 1.0 / 37, {1, 40})),
                                 {37, 40}));
  EXPECT_EQ(vars_of(centred), (Vars{{"n0", 37}}));
  const std::vector<float> got = [&] {
    UOpRef r = runtime::realize({centred}, dev())[0];
    std::vector<float> out(37 * 40);
    runtime::to_host(r, out.data());
    return out;
  }();
  const std::vector<float> xv = uniform(37 * 40, 1);
  for (int64_t c = 0; c < 40; ++c) {
    double mean = 0;
    for (int64_t r = 0; r < 37; ++r) mean += xv[r * 40 + c] / 37.0;
    for (int64_t r = 0; r < 37; ++r)
      ASSERT_NEAR(got[r * 40 + c], xv[r * 40 + c] - mean, 1e-5) << r << ", " << c;
  }
}

// The count a mean divides by is taken from the batch variable: cross-entropy, and the mean of
// a (batch,) vector, over 5 batch sizes compile once, with values against double.
TEST(SymbolicBatch, MeanLossScalesByTheBatchAtLaunch) {
  size_t compiled = 0;
  for (int64_t n : {7, 2, 33, 5, 130}) {
    const std::vector<float> xv = uniform(static_cast<size_t>(n * 6), static_cast<unsigned>(n));
    std::vector<float> hot(xv.size(), 0.0f);
    for (int64_t r = 0; r < n; ++r) hot[static_cast<size_t>(r * 6 + (r % 6))] = 1.0f;
    const UOpRef xi = runtime::from_host(dev(), dtypes::float32, {n, 6}, xv.data());
    const UOpRef hi = runtime::from_host(dev(), dtypes::float32, {n, 6}, hot.data());
    UOpRef r = runtime::realize({testgraph::cross_entropy(xi, hi, n, 6)}, dev())[0];
    float got = 0;
    runtime::to_host(r, &got);
    double want = 0;
    for (int64_t i = 0; i < n; ++i) {
      double mx = -1e300, den = 0;
      for (int64_t c = 0; c < 6; ++c) mx = std::max(mx, double(xv[i * 6 + c]));
      for (int64_t c = 0; c < 6; ++c) den += std::exp(xv[i * 6 + c] - mx);
      want += (std::log(den) + mx - xv[i * 6 + i % 6]) / static_cast<double>(n);
    }
    EXPECT_NEAR(got, want, 1e-5 * (1 + want)) << "batch " << n;
    // The mean of a (batch,) vector: lanes of 8 and a tail over the variable.
    const UOpRef col = runtime::from_host(dev(), dtypes::float32, {n}, xv.data());
    const UOpRef mean = testgraph::ew(Op::MUL, lazy::reduce(col, Op::ADD, {0}),
                                      testgraph::inverse_count(n, dtypes::float32, {1}));
    runtime::to_host(runtime::realize({mean}, dev())[0], &got);
    double sum = 0;
    for (int64_t i = 0; i < n; ++i) sum += xv[static_cast<size_t>(i)];
    EXPECT_NEAR(got, sum / double(n), 1e-6) << "batch " << n;
    if (n == 7) compiled = runtime::compiled_kernel_count();
  }
  EXPECT_EQ(runtime::compiled_kernel_count(), compiled);
}

// cross_entropy over class targets picks each row's class logit, a load at r * classes +
// label[r]: the reduce over the rows still walks the logits' rows (the loaded label is no
// stride), so it takes the batch at launch from the first size on. Values against double.
TEST(SymbolicBatch, ALossPickingEachRowsClassLogitTakesTheBatchAtLaunch) {
  constexpr int64_t classes = 10;
  size_t compiled = 0;
  for (int64_t n : {21, 2, 8, 45}) {
    const std::vector<float> xv = uniform(static_cast<size_t>(n * classes), 50 + n);
    std::vector<int32_t> yv(static_cast<size_t>(n));
    for (int64_t r = 0; r < n; ++r)
      yv[static_cast<size_t>(r)] = static_cast<int32_t>((r * 3 + 1) % classes);
    const float got = Tensor(xv, {n, classes}).cross_entropy(Tensor(yv, {n})).item<float>();
    double want = 0;
    for (int64_t i = 0; i < n; ++i) {
      double mx = -1e300, den = 0;
      for (int64_t c = 0; c < classes; ++c) mx = std::max(mx, double(xv[i * classes + c]));
      for (int64_t c = 0; c < classes; ++c) den += std::exp(xv[i * classes + c] - mx);
      want += (std::log(den) + mx - xv[i * classes + yv[i]]) / static_cast<double>(n);
    }
    EXPECT_NEAR(got, want, 1e-5 * (1 + want)) << "batch " << n;
    if (n == 21) compiled = runtime::compiled_kernel_count();
  }
  EXPECT_EQ(runtime::compiled_kernel_count(), compiled) << "a new batch size compiled a kernel";
}

// A flat elementwise kernel's variable counts blocks of 256, not a size: its constants are
// never read as 1/size (x * 0.5 over 512 elements, 2 blocks, would otherwise become x / n0
// and 768 elements would compile again).
TEST(SymbolicBatch, FlatBlockCountsAreNoSizes) {
  size_t compiled = 0;
  for (int64_t n : {512, 768, 1024, 256 * 10}) {
    const std::vector<float> xv = uniform(static_cast<size_t>(n), unsigned(n));
    const UOpRef x = runtime::from_host(dev(), dtypes::float32, {n}, xv.data());
    const UOpRef y = testgraph::ew(Op::MUL, x, lazy::full(dtypes::float32, 0.5, {n}));
    std::vector<float> got(static_cast<size_t>(n));
    runtime::to_host(runtime::realize({y}, dev())[0], got.data());
    for (size_t i = 0; i < got.size(); ++i) ASSERT_EQ(got[i], xv[i] * 0.5f) << n << " " << i;
    if (n == 512) compiled = runtime::compiled_kernel_count();
  }
  EXPECT_EQ(runtime::compiled_kernel_count(), compiled);
}

// Batch-norm statistics: the mean and the variances over the batch divide by n and by n - 1
// (Tensor::var's max(0, n - correction)), integer counts taken from the batch at launch, so
// five batch sizes compile once. Values against double.
// A row's layernorm and variance over 32 features divide by 32, a sum's size over a constant
// range: at batch 32 that count stayed a constant instead of becoming the batch's variable,
// which made other kernels at that batch size only. Values against double.
TEST(SymbolicBatch, ARowCountEqualToTheBatchStaysTheRowsSize) {
  constexpr int64_t c = 32;
  size_t compiled = 0;
  for (int64_t n : {5, 32, 7, 64}) {
    const std::vector<float> xv = uniform(static_cast<size_t>(n * c), static_cast<unsigned>(n));
    Tensor x(xv, {n, c});
    Tensor norm = x.layernorm(), var = x.var(1);
    std::vector<Tensor> outs{norm, var};
    Tensor::realize_all(outs);
    const std::vector<float> z = norm.to_vector<float>(), v = var.to_vector<float>();
    for (int64_t i = 0; i < n; ++i) {
      const auto [mu, ss] = moments(xv, i * c, 1, c);  // row i
      EXPECT_NEAR(v[static_cast<size_t>(i)], ss / double(c - 1), 1e-5) << "batch " << n;
      for (int64_t j = 0; j < c; ++j) {
        const auto k = static_cast<size_t>(i * c + j);
        EXPECT_NEAR(z[k], (xv[k] - mu) / std::sqrt(ss / double(c) + 1e-5), 1e-4)
            << "batch " << n << " element " << k;
      }
    }
    if (n == 5) compiled = runtime::compiled_kernel_count();
  }
  EXPECT_EQ(runtime::compiled_kernel_count(), compiled) << "a batch of 32 compiled a kernel";
}

TEST(SymbolicBatch, BatchStatisticsTakeTheirCountsAtLaunch) {
  constexpr int64_t c = 12;
  size_t compiled = 0;
  for (int64_t n : {9, 3, 16, 40, 2}) {
    const std::vector<float> xv = uniform(static_cast<size_t>(n * c), static_cast<unsigned>(n));
    Tensor x(xv, {n, c});
    Tensor mean = x.mean(0), var = x.var(0), std0 = x.std(0, false, 0.0);
    Tensor norm = (x - x.mean(0, true)) * (x.var(0, true, 0.0) + 1e-5).rsqrt();
    std::vector<Tensor> outs{mean, var, std0, norm};
    Tensor::realize_all(outs);
    const std::vector<float> m = mean.to_vector<float>(), v = var.to_vector<float>();
    const std::vector<float> s = std0.to_vector<float>(), z = norm.to_vector<float>();
    for (int64_t j = 0; j < c; ++j) {
      const auto [mu, ss] = moments(xv, j, c, n);  // column j
      const auto jj = static_cast<size_t>(j);
      EXPECT_NEAR(m[jj], mu, 1e-6) << "batch " << n << " column " << j;
      EXPECT_NEAR(v[jj], ss / double(n - 1), 1e-5) << "batch " << n << " column " << j;
      EXPECT_NEAR(s[jj], std::sqrt(ss / double(n)), 1e-5) << "batch " << n << " column " << j;
      for (int64_t i = 0; i < n; ++i) {
        const auto k = static_cast<size_t>(i * c + j);
        EXPECT_NEAR(z[k], (xv[k] - mu) / std::sqrt(ss / double(n) + 1e-5), 1e-4)
            << "batch " << n << " element " << k;
      }
    }
    if (n == 9) compiled = runtime::compiled_kernel_count();
  }
  EXPECT_EQ(runtime::compiled_kernel_count(), compiled) << "a new batch size compiled a kernel";
}

}  // namespace
}  // namespace polygrad
