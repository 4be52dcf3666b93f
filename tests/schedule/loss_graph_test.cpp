// The graphs the losses build: what their gradients read, and their values against a double
// reference.
#include "ir/graph.hpp"
#include "tensor/lazy.hpp"
#include "tensor/tensor_impl.hpp"

#include <polygrad/tensor.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

namespace polygrad {
namespace {

// cross_entropy over class targets: the gradient is softmax(x) - one_hot, so its graph reduces
// over the classes only for the softmax (the max and the sum of exponentials). Written as a
// sum of one-hot products, its gradient also summed the one-hot terms over every class to find
// the one it holds: a third pass over each row. Values against double, one position ignored.
TEST(LossGraphs, ACrossEntropyGradientReducesOverTheClassesOnlyForItsSoftmax) {
  constexpr int64_t n = 6, c = 50, ignore = -100;
  std::vector<float> xv(n * c);
  for (size_t i = 0; i < xv.size(); ++i) xv[i] = std::sin(0.37f * static_cast<float>(i)) * 3.0f;
  const std::vector<int32_t> yv{3, 0, 49, static_cast<int32_t>(ignore), 17, 3};
  Tensor x(xv, {n, c});
  Tensor loss = x.cross_entropy(Tensor(yv, {n}), -1, 0.0, Reduction::mean, ignore);
  Tensor grad = Tensor::gradient(loss, {x}).at(0);
  const std::vector<const UOp*> order = toposort(grad.impl()->uop);
  lazy::ShapeOf shape;
  EXPECT_EQ(std::count_if(
                order.begin(), order.end(),
                [&](const UOp* u) {
                  return u->op() == Op::REDUCE_AXIS && shape(u->src(0).get()) == lazy::Shape{n, c};
                }),
            2);
  const std::vector<float> got = grad.to_vector<float>();
  const double kept = 5.0;
  for (int64_t r = 0; r < n; ++r) {
    double m = -INFINITY, sum = 0.0;
    for (int64_t j = 0; j < c; ++j) m = std::max(m, double{xv[r * c + j]});
    for (int64_t j = 0; j < c; ++j) sum += std::exp(double{xv[r * c + j]} - m);
    for (int64_t j = 0; j < c; ++j) {
      const double p = std::exp(double{xv[r * c + j]} - m) / sum;
      const double want = yv[r] == ignore ? 0.0 : (p - (j == yv[r] ? 1.0 : 0.0)) / kept;
      ASSERT_NEAR(got[r * c + j], want, 1e-6) << r << " " << j;
    }
  }
}

}  // namespace
}  // namespace polygrad
