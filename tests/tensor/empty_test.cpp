// Tensors with an axis of length 0: reductions over it give torch's values (sum 0, prod 1,
// mean and var NaN, any false, all true), a max or min over it is a user error, and ops that
// keep it empty stay empty.
#include "harness.hpp"

#include <cmath>
#include <limits>

namespace {

using polygrad::Tensor;
using tensor_test::expect_user_error;
using tensor_test::expect_values;

const double kNaN = std::numeric_limits<double>::quiet_NaN();

TEST(Empty, ReductionsOverAnEmptyAxisGiveTheirIdentity) {
  const Tensor x = Tensor::zeros({0, 3});
  expect_values(x.sum(0), {3}, {0, 0, 0});
  expect_values(x.sum(), {}, {0});
  expect_values(Tensor::zeros({2, 0}).sum(1), {2}, {0, 0});
  expect_values(x.prod(0), {3}, {1, 1, 1});
  expect_values(x.mean(0), {3}, {kNaN, kNaN, kNaN});
  expect_values(x.var(0), {3}, {kNaN, kNaN, kNaN});
  expect_values(x.var(0, false, 0.0), {3}, {kNaN, kNaN, kNaN});
  expect_values(x.std(0), {3}, {kNaN, kNaN, kNaN});
  expect_values(x.any({0}).cast(PG_DTYPE_FLOAT32), {3}, {0, 0, 0});
  expect_values(x.all({0}).cast(PG_DTYPE_FLOAT32), {3}, {1, 1, 1});
  expect_values(Tensor::ones({4, 3}).shrink({{0, 4}, {1, 1}}).sum(1), {4}, {0, 0, 0, 0});
  // logsumexp over nothing: log 0.
  const double inf = std::numeric_limits<double>::infinity();
  expect_values(x.logsumexp(0), {3}, {-inf, -inf, -inf});
}

TEST(Empty, MatmulOverAnEmptyInnerAxisIsZeros) {
  expect_values(Tensor::ones({2, 0}).matmul(Tensor::ones({0, 3})), {2, 3}, {0, 0, 0, 0, 0, 0});
}

TEST(Empty, OpsThatKeepTheAxisStayEmpty) {
  const Tensor x = Tensor::zeros({0, 3});
  EXPECT_EQ(x.softmax(0).shape(), (Tensor::Shape{0, 3}));
  EXPECT_EQ(x.cumsum(0).shape(), (Tensor::Shape{0, 3}));
  EXPECT_EQ(x.softmax(0).to_vector<float>().size(), 0u);
  // A max over the other axis of an empty tensor is empty, not an error.
  EXPECT_EQ(x.max(1).shape(), (Tensor::Shape{0}));
}

TEST(Empty, SplitAndChunkOfAnEmptyAxis) {
  // torch (and tinygrad): split of an empty axis is one empty piece, chunk(n) n empty pieces.
  const Tensor x = Tensor::zeros({0, 3});
  std::vector<Tensor> s = x.split(int64_t{2}, 0);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].shape(), (Tensor::Shape{0, 3}));
  std::vector<Tensor> c = x.chunk(3, 0);
  ASSERT_EQ(c.size(), 3u);
  for (const Tensor& t : c) EXPECT_EQ(t.shape(), (Tensor::Shape{0, 3}));
  std::vector<Tensor> c1 = Tensor::zeros({3, 0}).chunk(2, -1);
  ASSERT_EQ(c1.size(), 2u);
  for (const Tensor& t : c1) EXPECT_EQ(t.shape(), (Tensor::Shape{3, 0}));
  // An axis that is not empty splits as before, its last piece shorter.
  std::vector<Tensor> s1 = x.split(int64_t{2}, 1);
  ASSERT_EQ(s1.size(), 2u);
  EXPECT_EQ(s1[1].shape(), (Tensor::Shape{0, 1}));
}

TEST(Empty, MaxMinArgmaxOverAnEmptyAxisAreUserErrors) {
  const Tensor x = Tensor::zeros({0, 3});
  expect_user_error([&] { x.max(0); }, {"max: cannot reduce over axis 0 of length 0", "(0, 3)"});
  expect_user_error([&] { x.min(); }, {"min: cannot reduce over axis 0 of length 0"});
  expect_user_error([&] { x.argmax(0); }, {"argmax", "axis 0 of length 0"});
  expect_user_error([&] { x.argmin(); }, {"argmin", "axis 0 of length 0"});
  // The process goes on.
  expect_values(x.sum(0), {3}, {0, 0, 0});
}

TEST(ZeroDim, AxisZeroOrMinusOneIsTheOneElement) {
  // torch and tinygrad take dim 0 or -1 of a 0-d tensor as an axis of one element.
  const Tensor x = Tensor::scalar(2.5);
  expect_values(x.sum(0), {}, {2.5});
  expect_values(x.max(-1), {}, {2.5});
  expect_values(x.mean(0), {}, {2.5});
  expect_values(x.var(0), {}, {kNaN});  // (n - 1 = 0)
  expect_values(x.softmax(0), {}, {1.0});
  expect_values(x.log_softmax(-1), {}, {0.0});
  expect_values(x.logsumexp(0), {}, {2.5});
  expect_values(x.argmax(0).cast(PG_DTYPE_FLOAT32), {}, {0.0});
  expect_values(x.cumsum(0), {}, {2.5});
  expect_values(x.sum(0, true), {}, {2.5});
}

}  // namespace
