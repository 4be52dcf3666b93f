// Capture and replay (polygrad/capture.hpp): a captured SGD step over host memory replays with
// new data and matches the same steps computed in plain C++; nothing runs while capturing;
// random tensors are drawn again on each run; errors leave no capture open.
#include "runtime/runtime.hpp"

#include <polygrad/capture.hpp>
#include <polygrad/error.hpp>
#include <polygrad/tensor.hpp>

#include <gtest/gtest.h>

#include <cstdlib>
#include <memory>
#include <random>

namespace polygrad {
namespace {

struct AlignedFloats {
  explicit AlignedFloats(size_t n)
      : p(static_cast<float*>(std::aligned_alloc(64, (n * sizeof(float) + 63) / 64 * 64))), n(n) {}
  ~AlignedFloats() { std::free(p); }
  float* p;
  size_t n;
};

void fill(AlignedFloats& a, std::mt19937& gen) {
  std::uniform_real_distribution<float> d(-1, 1);
  for (size_t i = 0; i < a.n; ++i) a.p[i] = d(gen);
}

// One SGD step of mean((x @ w - y)^2) in double: returns the loss, updates w.
double sgd_step(const AlignedFloats& x, const AlignedFloats& y, std::vector<double>& w, int rows,
                int k, int cols, double lr) {
  std::vector<double> grad(w.size(), 0.0);
  double loss = 0;
  const double n = rows * cols;
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) {
      double pred = 0;
      for (int i = 0; i < k; ++i) pred += x.p[r * k + i] * w[static_cast<size_t>(i * cols + c)];
      const double err = pred - y.p[r * cols + c];
      loss += err * err / n;
      for (int i = 0; i < k; ++i)
        grad[static_cast<size_t>(i * cols + c)] += 2 * err / n * x.p[r * k + i];
    }
  for (size_t i = 0; i < w.size(); ++i) w[i] -= lr * grad[i];
  return loss;
}

TEST(Capture, SgdStepReplaysOverNewDataInHostMemory) {
  constexpr int rows = 19, k = 7, cols = 3;
  constexpr double lr = 0.1;
  AlignedFloats xm(rows * k), ym(rows * cols);
  std::mt19937 gen(5);
  fill(xm, gen);
  fill(ym, gen);
  bool shared_x = false, shared_y = false;
  Tensor x = Tensor::from_host_memory(
      xm.p, PG_DTYPE_FLOAT32, {rows, k}, [] {}, "cpu", &shared_x);
  Tensor y = Tensor::from_host_memory(
      ym.p, PG_DTYPE_FLOAT32, {rows, cols}, [] {}, "cpu", &shared_y);
  ASSERT_TRUE(shared_x && shared_y);  // the cpu device uses aligned host memory in place
  std::vector<float> w0(k * cols);
  for (size_t i = 0; i < w0.size(); ++i) w0[i] = 0.1f * static_cast<float>(i % 5) - 0.2f;
  Tensor w(w0, {k, cols});
  w.realize().requires_grad(true);

  Tensor loss;
  Captured step = capture([&] {
    loss = (x.matmul(w) - y).square().mean();
    loss.backward();
    w.assign(w.detach() - *w.grad() * lr);
    std::vector<Tensor> out{loss, w};
    Tensor::realize_all(out);
    w.set_grad(std::nullopt);
  });
  EXPECT_GE(step.kernel_count(), 2u);
  EXPECT_EQ(w.to_vector<float>(), w0) << "capturing must not run the step";

  std::vector<double> ref(w0.begin(), w0.end());
  const size_t compiled = runtime::compiled_kernel_count();
  for (int it = 0; it < 4; ++it) {
    if (it > 0) {  // new data, written where the captured kernels read it
      fill(xm, gen);
      fill(ym, gen);
    }
    step.run();
    const double want = sgd_step(xm, ym, ref, rows, k, cols, lr);
    EXPECT_NEAR(loss.item<float>(), want, 1e-5 * (1 + want)) << "run " << it;
    std::vector<float> got = w.to_vector<float>();
    for (size_t i = 0; i < ref.size(); ++i) EXPECT_NEAR(got[i], ref[i], 1e-5) << "run " << it;
  }
  EXPECT_EQ(runtime::compiled_kernel_count(), compiled) << "a run compiles nothing";
}

TEST(Capture, RandomTensorsAreDrawnAgainOnEachRun) {
  // Eager reference: the 2nd and 3rd draws of 8 after seeding 7.
  Tensor::manual_seed(7);
  (void)Tensor::rand({8});
  std::vector<float> second = Tensor::rand({8}).to_vector<float>();
  std::vector<float> third = Tensor::rand({8}).to_vector<float>();

  Tensor::manual_seed(7);
  Tensor out;
  Captured c = capture([&] { out = (Tensor::rand({8}) * 2.0).realize(); });
  c.run();  // draws again: the generator's 2nd draw
  std::vector<float> got = out.to_vector<float>();
  for (size_t i = 0; i < 8; ++i) EXPECT_FLOAT_EQ(got[i], 2 * second[i]);
  c.run();
  got = out.to_vector<float>();
  for (size_t i = 0; i < 8; ++i) EXPECT_FLOAT_EQ(got[i], 2 * third[i]);
}

TEST(Capture, ReadingValuesWhileCapturingIsAnErrorAndClosesTheCapture) {
  Tensor a(std::vector<float>{1, 2, 3});
  try {
    (void)capture([&] { (void)(a * 2).to_vector<float>(); });
    FAIL() << "item inside a capture must throw";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("while capturing"), std::string::npos) << e.what();
  }
  // The failed capture is closed: a new one opens, and nesting is refused.
  Tensor out;
  Captured c = capture([&] {
    out = (a * 3).realize();
    EXPECT_THROW((void)capture([] {}), Error);
  });
  c.run();
  EXPECT_EQ(out.to_vector<float>(), (std::vector<float>{3, 6, 9}));
  EXPECT_EQ(c.kernel_count(), 1u);
  EXPECT_THROW(Captured().run(), Error);
}

TEST(Capture, RunWithReplacementsReadsOtherInputsWithoutACopy) {
  Tensor x(std::vector<float>{1, 2, 3});
  Tensor w(std::vector<float>{10, 20, 30});
  x.realize();
  w.realize();
  Tensor y;
  Captured c = capture([&] { y = (x * 2.0 + w).realize(); });
  c.run();
  EXPECT_EQ(y.to_vector<float>(), (std::vector<float>{12, 24, 36}));
  Tensor x2 = Tensor(std::vector<float>{-1, 0, 5}) + 1.0;  // lazy: realised by run
  c.run({x}, {x2});
  EXPECT_TRUE(x2.is_realized());
  EXPECT_EQ(y.to_vector<float>(), (std::vector<float>{10, 22, 42}));
  EXPECT_EQ(x.to_vector<float>(), (std::vector<float>{1, 2, 3})) << "the input is untouched";
  c.run();  // without replacements: the captured input again
  EXPECT_EQ(y.to_vector<float>(), (std::vector<float>{12, 24, 36}));
  try {
    c.run({x}, {Tensor(std::vector<float>{1, 2})});
    FAIL() << "a replacement of another shape must be refused";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("shape (2,)"), std::string::npos) << e.what();
  }
  EXPECT_THROW(c.run({x}, {Tensor(std::vector<double>{1, 2, 3})}), Error);  // dtype
  EXPECT_THROW(c.run({x, w}, {x2}), Error);                                 // counts
}

// A reshape of a realised input is a view of its buffer (no kernel); realised while capturing it
// is copied into a buffer of its own, so a run with the input replaced holds the replacement.
TEST(Capture, AReshapedInputFollowsItsReplacement) {
  Tensor x(std::vector<float>{1, 2, 3, 4, 5, 6});
  x.realize();
  Tensor y;
  Captured c = capture([&] { y = x.reshape({3, 2}).realize(); });
  EXPECT_EQ(c.kernel_count(), 0u);
  c.run();
  EXPECT_EQ(y.to_vector<float>(), (std::vector<float>{1, 2, 3, 4, 5, 6}));
  Tensor x2(std::vector<float>{6, 5, 4, 3, 2, 1});
  c.run({x}, {x2});
  EXPECT_EQ(y.shape(), (Tensor::Shape{3, 2}));
  EXPECT_EQ(y.to_vector<float>(), (std::vector<float>{6, 5, 4, 3, 2, 1}));
  EXPECT_EQ(x.to_vector<float>(), (std::vector<float>{1, 2, 3, 4, 5, 6}))
      << "the input is untouched";
}

TEST(Capture, BackwardRefusesToAddToAGradientFromBeforeTheCapture) {
  Tensor w(std::vector<float>{1, 2});
  w.realize().requires_grad(true);
  (w * w).sum().backward();  // w.grad = 2w, from before the capture
  try {
    (void)capture([&] { (w * 3.0).sum().backward(); });
    FAIL() << "backward must refuse to add to a gradient that predates the capture";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("before the capture began"), std::string::npos)
        << e.what();
  }
  // Cleared inside the capture (as a step that calls zero_grad first does): each run gives 3.
  Tensor g;
  Captured c = capture([&] {
    w.set_grad(std::nullopt);
    (w * 3.0).sum().backward();
    g = w.grad()->realize();
  });
  c.run();
  EXPECT_EQ(g.to_vector<float>(), (std::vector<float>{3, 3}));
  c.run();
  EXPECT_EQ(g.to_vector<float>(), (std::vector<float>{3, 3}));
}

}  // namespace
}  // namespace polygrad
