// Explicit symbolic sizes (polygrad/symbolic.hpp): a graph over a bound variable compiles once
// and runs at every value. Values against plain C++ in double; compiles counted through
// runtime::compiled_kernel_count.
#include "random_values.hpp"
#include "runtime/runtime.hpp"
#include "runtime/schedule_cache.hpp"

#include <polygrad/error.hpp>
#include <polygrad/symbolic.hpp>
#include <polygrad/tensor.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

namespace polygrad {
namespace {

std::vector<float> uniform(size_t n, unsigned seed) {
  return testgraph::random_floats(n, seed, -1, 1);
}

/// softmax(q k^T * scale) v for q (m, d), k and v (n, d) given as their first n rows of
/// row-major (rows, d) arrays; (m, d) in double.
std::vector<double> attention_ref(const std::vector<float>& q, const std::vector<float>& k,
                                  const std::vector<float>& v, int64_t m, int64_t n, int64_t d,
                                  double scale) {
  std::vector<double> out(static_cast<size_t>(m * d), 0.0);
  for (int64_t i = 0; i < m; ++i) {
    std::vector<double> s(static_cast<size_t>(n));
    double mx = -1e300, sum = 0;
    for (int64_t j = 0; j < n; ++j) {
      double dot = 0;
      for (int64_t c = 0; c < d; ++c) dot += double{q[size_t(i * d + c)]} * k[size_t(j * d + c)];
      s[size_t(j)] = dot * scale;
      mx = std::max(mx, s[size_t(j)]);
    }
    for (double& x : s) sum += (x = std::exp(x - mx));
    for (int64_t j = 0; j < n; ++j)
      for (int64_t c = 0; c < d; ++c)
        out[size_t(i * d + c)] += s[size_t(j)] / sum * v[size_t(j * d + c)];
  }
  return out;
}

void expect_near(const std::vector<float>& got, const std::vector<double>& want, double tol,
                 const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) ASSERT_NEAR(got[i], want[i], tol) << what << " at " << i;
}

// The decoding pattern: a realised (max_len, d) cache sliced to the first n rows, n bound per
// step; one query row attends to them. One set of kernels serves every position.
TEST(SymbolicDims, KvCacheAttentionCompilesOnce) {
  constexpr int64_t kMax = 64, kD = 16;
  const std::vector<float> kc = uniform(kMax * kD, 1), vc = uniform(kMax * kD, 2),
                           qv = uniform(kD, 3);
  const Tensor K(kc, {kMax, kD}), V(vc, {kMax, kD}), q(qv, {1, kD});
  const Variable start("start_pos", 1, kMax);
  size_t after_first = 0;
  bool first = true;
  for (int64_t pos : {5, 6, 7, 12, 1, 33, 64, 40, 2}) {
    const Dim n = start.bind(pos);
    const Tensor k = shrink(K, {{0, n}, {0, kD}}), v = shrink(V, {{0, n}, {0, kD}});
    EXPECT_EQ(k.shape(), (Tensor::Shape{pos, kD}));
    const Tensor out = (q.matmul(k.T()) * 0.25).softmax(-1).matmul(v);
    expect_near(out.to_vector<float>(), attention_ref(qv, kc, vc, 1, pos, kD, 0.25), 1e-5,
                "pos " + std::to_string(pos));
    if (first) after_first = runtime::compiled_kernel_count();
    first = false;
  }
  EXPECT_EQ(runtime::compiled_kernel_count(), after_first) << "a new position compiled a kernel";
}

// Self-attention of n rows at 7 sequence lengths, the rows sliced from (max, d) inputs.
TEST(SymbolicDims, AttentionAtSevenLengthsCompilesOnce) {
  constexpr int64_t kMax = 48, kD = 8;
  const std::vector<float> qa = uniform(kMax * kD, 4), ka = uniform(kMax * kD, 5),
                           va = uniform(kMax * kD, 6);
  const Tensor Q(qa, {kMax, kD}), K(ka, {kMax, kD}), V(va, {kMax, kD});
  const Variable seq("seq", 1, kMax);
  const double scale = 1.0 / std::sqrt(double(kD));
  size_t after_first = 0;
  bool first = true;
  for (int64_t len : {9, 5, 12, 3, 30, 17, 48}) {
    const Dim n = seq.bind(len);
    const Tensor q = shrink(Q, {{0, n}, {0, kD}}), k = shrink(K, {{0, n}, {0, kD}}),
                 v = shrink(V, {{0, n}, {0, kD}});
    const Tensor out = (q.matmul(k.T()) * scale).softmax(-1).matmul(v);
    EXPECT_EQ(out.shape(), (Tensor::Shape{len, kD}));
    expect_near(out.to_vector<float>(), attention_ref(qa, ka, va, len, len, kD, scale), 1e-5,
                "len " + std::to_string(len));
    if (first) after_first = runtime::compiled_kernel_count();
    first = false;
  }
  EXPECT_EQ(runtime::compiled_kernel_count(), after_first) << "a new length compiled a kernel";
}

// A two-layer perceptron's output and mean at 5 batch sizes (the rows of a (max, in) input).
TEST(SymbolicDims, MlpAtFiveBatchSizesCompilesOnce) {
  constexpr int64_t kMax = 40, kIn = 12, kHidden = 10, kOut = 3;
  const std::vector<float> xa = uniform(kMax * kIn, 7), w1 = uniform(kHidden * kIn, 8),
                           b1 = uniform(kHidden, 9), w2 = uniform(kOut * kHidden, 10),
                           b2 = uniform(kOut, 11);
  const Tensor X(xa, {kMax, kIn}), W1(w1, {kHidden, kIn}), B1(b1, {kHidden}),
      W2(w2, {kOut, kHidden}), B2(b2, {kOut});
  const Variable batch("batch", 1, kMax);
  size_t after_first = 0, entries = 0;
  bool first = true;
  for (int64_t bs : {7, 2, 19, 33, 11}) {
    const Tensor x = shrink(X, {{0, batch.bind(bs)}, {0, kIn}});
    const Tensor y = x.linear(W1, B1).relu().linear(W2, B2);
    const Tensor m = y.mean();
    std::vector<double> want(static_cast<size_t>(bs * kOut));
    double total = 0;
    for (int64_t r = 0; r < bs; ++r) {
      std::vector<double> h(static_cast<size_t>(kHidden));
      for (int64_t j = 0; j < kHidden; ++j) {
        double a = b1[size_t(j)];
        for (int64_t c = 0; c < kIn; ++c)
          a += double{xa[size_t(r * kIn + c)]} * w1[size_t(j * kIn + c)];
        h[size_t(j)] = std::max(a, 0.0);
      }
      for (int64_t o = 0; o < kOut; ++o) {
        double a = b2[size_t(o)];
        for (int64_t j = 0; j < kHidden; ++j) a += h[size_t(j)] * w2[size_t(o * kHidden + j)];
        want[size_t(r * kOut + o)] = a;
        total += a;
      }
    }
    expect_near(y.to_vector<float>(), want, 1e-5, "batch " + std::to_string(bs));
    EXPECT_NEAR(m.item<float>(), total / double(bs * kOut), 1e-5) << "batch " << bs;
    if (first) {
      after_first = runtime::compiled_kernel_count();
      entries = runtime::schedule_cache_stats().entries;
    }
    first = false;
  }
  EXPECT_EQ(runtime::compiled_kernel_count(), after_first) << "a new batch compiled a kernel";
  // (The inferred batch variable alone compiles nothing new either; one schedule serving every
  // batch is what the bound variable adds.)
  EXPECT_EQ(runtime::schedule_cache_stats().entries, entries) << "a new batch was scheduled";
}

// One SGD step of the same perceptron on mean(y^2) at 5 batch sizes: the gradients reduce over
// the variable's rows, the loss divides by its count. Each size starts from the same weights.
TEST(SymbolicDims, MlpTrainingStepAtFiveBatchSizesCompilesOnce) {
  constexpr int64_t kMax = 40, kIn = 6, kHidden = 5, kOut = 2;
  constexpr double kLr = 0.1;
  const std::vector<float> xa = uniform(kMax * kIn, 12), w1 = uniform(kHidden * kIn, 13),
                           w2 = uniform(kOut * kHidden, 14);
  const Tensor X(xa, {kMax, kIn});
  const Variable batch("batch", 1, kMax);
  size_t after_first = 0;
  bool first = true;
  for (int64_t bs : {7, 2, 19, 33, 11}) {
    Tensor W1(w1, {kHidden, kIn}), W2(w2, {kOut, kHidden});
    W1.realize().requires_grad(true);
    W2.realize().requires_grad(true);
    const Tensor x = shrink(X, {{0, batch.bind(bs)}, {0, kIn}});
    const Tensor y = x.matmul(W1.T()).relu().matmul(W2.T());
    Tensor loss = (y * y).mean();
    loss.backward();
    std::vector<Tensor> outs{loss};
    for (Tensor* p : {&W1, &W2}) {
      outs.push_back(p->assign(p->detach() - *p->grad() * kLr));
      p->set_grad(std::nullopt);
    }
    Tensor::realize_all(outs);
    // The reference step in double.
    const auto n = static_cast<size_t>(bs);
    std::vector<double> pre(n * kHidden), h(n * kHidden), out(n * kOut), g1(w1.size()),
        g2(w2.size());
    double l = 0;
    for (size_t r = 0; r < n; ++r) {
      for (size_t j = 0; j < kHidden; ++j) {
        double a = 0;
        for (size_t c = 0; c < kIn; ++c) a += double{xa[r * kIn + c]} * w1[j * kIn + c];
        pre[r * kHidden + j] = a;
        h[r * kHidden + j] = std::max(a, 0.0);
      }
      for (size_t o = 0; o < kOut; ++o) {
        double a = 0;
        for (size_t j = 0; j < kHidden; ++j) a += h[r * kHidden + j] * w2[o * kHidden + j];
        out[r * kOut + o] = a;
        l += a * a;
      }
    }
    l /= double(n * kOut);
    for (size_t r = 0; r < n; ++r)
      for (size_t o = 0; o < kOut; ++o) {
        const double dy = 2 * out[r * kOut + o] / double(n * kOut);
        for (size_t j = 0; j < kHidden; ++j) {
          g2[o * kHidden + j] += dy * h[r * kHidden + j];
          if (pre[r * kHidden + j] > 0)
            for (size_t c = 0; c < kIn; ++c)
              g1[j * kIn + c] += dy * w2[o * kHidden + j] * xa[r * kIn + c];
        }
      }
    std::vector<double> want1(w1.size()), want2(w2.size());
    for (size_t i = 0; i < w1.size(); ++i) want1[i] = w1[i] - kLr * g1[i];
    for (size_t i = 0; i < w2.size(); ++i) want2[i] = w2[i] - kLr * g2[i];
    EXPECT_NEAR(loss.item<float>(), l, 1e-5) << "batch " << bs;
    expect_near(W1.to_vector<float>(), want1, 1e-5, "w1 at batch " + std::to_string(bs));
    expect_near(W2.to_vector<float>(), want2, 1e-5, "w2 at batch " + std::to_string(bs));
    if (first) after_first = runtime::compiled_kernel_count();
    first = false;
  }
  EXPECT_EQ(runtime::compiled_kernel_count(), after_first) << "a new batch compiled a kernel";
}

// Decoding as a model does it, per head: each step writes the new key and value rows into
// (heads, max_len, d) caches at the position (a mask against a position tensor: data, not
// structure), then one query row per head attends to the first n rows, n bound. After the first
// step (n = 1, whose axis has no loop: it runs the kernels generalised from other values) no
// kernel is compiled, neither for the writes nor for the attention.
TEST(SymbolicDims, MultiHeadDecodingWritesAndReadsTheCacheCompilingOnce) {
  constexpr int64_t kHeads = 3, kMax = 24, kD = 8;
  std::vector<float> kc(kHeads * kMax * kD, 0.0f), vc(kHeads * kMax * kD, 0.0f);
  Tensor K(kc, {kHeads, kMax, kD}), V(vc, {kHeads, kMax, kD});
  K.realize();
  V.realize();
  const Variable len("len", 1, kMax);
  size_t after_first = 0;
  for (int64_t pos = 0; pos < 14; ++pos) {
    const std::vector<float> kr = uniform(kHeads * kD, 100 + unsigned(pos)),
                             vr = uniform(kHeads * kD, 200 + unsigned(pos)),
                             qr = uniform(kHeads * kD, 300 + unsigned(pos));
    for (int64_t h = 0; h < kHeads; ++h)
      for (int64_t c = 0; c < kD; ++c) {
        kc[size_t((h * kMax + pos) * kD + c)] = kr[size_t(h * kD + c)];
        vc[size_t((h * kMax + pos) * kD + c)] = vr[size_t(h * kD + c)];
      }
    const Tensor at = Tensor::arange_int(0, kMax).reshape({1, kMax, 1}) ==
                      Tensor(std::vector<int32_t>{int32_t(pos)}, {1, 1, 1});
    std::vector<Tensor> writes{K.assign(at.where(Tensor(kr, {kHeads, 1, kD}), K)),
                               V.assign(at.where(Tensor(vr, {kHeads, 1, kD}), V))};
    Tensor::realize_all(writes);
    const Dim n = len.bind(pos + 1);
    const Tensor k = shrink(K, {{0, kHeads}, {0, n}, {0, kD}}),
                 v = shrink(V, {{0, kHeads}, {0, n}, {0, kD}});
    const Tensor q(qr, {kHeads, 1, kD});
    const Tensor out = (q.matmul(k.transpose(-1, -2)) * 0.5).softmax(-1).matmul(v);
    const std::vector<float> got = out.to_vector<float>();
    for (int64_t h = 0; h < kHeads; ++h) {
      const auto off = [&](const std::vector<float>& a, int64_t rows) {
        return std::vector<float>(a.begin() + h * rows * kD, a.begin() + (h + 1) * rows * kD);
      };
      const std::vector<double> want =
          attention_ref(off(qr, 1), off(kc, kMax), off(vc, kMax), 1, pos + 1, kD, 0.5);
      for (int64_t c = 0; c < kD; ++c)
        ASSERT_NEAR(got[size_t(h * kD + c)], want[size_t(c)], 1e-5)
            << "pos " << pos << " head " << h << " column " << c;
    }
    if (pos == 0) after_first = runtime::compiled_kernel_count();
  }
  EXPECT_EQ(runtime::compiled_kernel_count(), after_first) << "a new position compiled a kernel";
}

// The cache written through a pad by a bound position and read through an expression of it:
// row p is added as row.pad((p, max - 1 - p)), the attention reads the first p + 1 rows.
TEST(SymbolicDims, CacheWrittenAndReadThroughSizeExpressions) {
  constexpr int64_t kMax = 20, kD = 8;
  std::vector<float> kc(kMax * kD, 0.0f), vc(kMax * kD, 0.0f);
  Tensor K(kc, {kMax, kD}), V(vc, {kMax, kD});
  K.realize();
  V.realize();
  const Variable position("pos", 0, kMax - 1);
  size_t after_first_step = 0;
  for (int64_t p = 0; p < 12; ++p) {
    const std::vector<float> kr = uniform(kD, 400 + unsigned(p)),
                             vr = uniform(kD, 500 + unsigned(p)),
                             qr = uniform(kD, 600 + unsigned(p));
    std::copy(kr.begin(), kr.end(), kc.begin() + p * kD);
    std::copy(vr.begin(), vr.end(), vc.begin() + p * kD);
    const Dim pos = position.bind(p);
    const std::vector<std::pair<Dim, Dim>> at{{pos, Dim(kMax - 1) - pos}, {0, 0}};
    std::vector<Tensor> writes{K.assign(K + pad(Tensor(kr, {1, kD}), at)),
                               V.assign(V + pad(Tensor(vr, {1, kD}), at))};
    Tensor::realize_all(writes);
    const Dim n = pos + 1;
    EXPECT_EQ(n.value(), p + 1);
    const Tensor k = shrink(K, {{0, n}, {0, kD}}), v = shrink(V, {{0, n}, {0, kD}});
    const Tensor out = (Tensor(qr, {1, kD}).matmul(k.T()) * 0.5).softmax(-1).matmul(v);
    expect_near(out.to_vector<float>(), attention_ref(qr, kc, vc, 1, p + 1, kD, 0.5), 1e-5,
                "position " + std::to_string(p));
    if (p == 0) after_first_step = runtime::compiled_kernel_count();
  }
  EXPECT_EQ(runtime::compiled_kernel_count(), after_first_step)
      << "a new position compiled a kernel";
}

// Inputs of each length as their own (n, d) tensors, viewed as (n bound, d): the buffers' sizes
// follow the variable, and no length after the first compiles a kernel.
TEST(SymbolicDims, AttentionOverInputsOfEachLengthCompilesOnce) {
  constexpr int64_t kD = 8;
  const Variable seq("seq", 1, 64);
  size_t after_first = 0;
  bool first = true;
  for (int64_t len : {9, 5, 12, 3, 30, 17, 64}) {
    const auto n = static_cast<size_t>(len * kD);
    const std::vector<float> qa = uniform(n, 40 + unsigned(len)), ka = uniform(n, 41),
                             va = uniform(n, 42 + unsigned(len));
    const Dim s = seq.bind(len);
    const Tensor q = reshape(Tensor(qa, {len, kD}), {s, kD}),
                 k = reshape(Tensor(ka, {len, kD}), {s, kD}),
                 v = reshape(Tensor(va, {len, kD}), {s, kD});
    const Tensor out = (q.matmul(k.T()) * 0.25).softmax(-1).matmul(v);
    expect_near(out.to_vector<float>(), attention_ref(qa, ka, va, len, len, kD, 0.25), 1e-5,
                "len " + std::to_string(len));
    if (first) after_first = runtime::compiled_kernel_count();
    first = false;
  }
  EXPECT_EQ(runtime::compiled_kernel_count(), after_first) << "a new length compiled a kernel";
}

TEST(SymbolicDims, ValueOutsideTheBoundsNamesTheVariable) {
  const Variable n("start_pos", 1, 8);
  try {
    n.bind(9);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("start_pos"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("9"), std::string::npos) << e.what();
  }
  EXPECT_THROW(Variable("n", 5, 2), Error);
}

}  // namespace
}  // namespace polygrad
