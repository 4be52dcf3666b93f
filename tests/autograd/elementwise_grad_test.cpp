// Elementwise rules against central finite differences (float64 on the cpu plugin).
#include "harness.hpp"

#include "autograd/gradient.hpp"

#include <gtest/gtest.h>

namespace polygrad::gradtest {
namespace {

UOpRef ew(Op op, std::initializer_list<UOpRef> srcs) {
  return lazy::elementwise(op, srcs);
}

GradCase unary(Op op, double lo, double hi) {
  GradCase c;
  c.inputs = {{2, 3}};
  c.build = [op](const std::vector<UOpRef>& x) { return ew(op, {x[0]}); };
  c.lo = lo;
  c.hi = hi;
  return c;
}

GradCase binary(Op op, double lo = -2, double hi = 2) {
  GradCase c;
  c.inputs = {{2, 3}, {2, 3}};
  c.build = [op](const std::vector<UOpRef>& x) { return ew(op, {x[0], x[1]}); };
  c.lo = lo;
  c.hi = hi;
  return c;
}

TEST(ElementwiseGrad, Neg) {
  check_gradients(unary(Op::NEG, -2, 2));
}
TEST(ElementwiseGrad, Recip) {
  check_gradients(unary(Op::RECIP, 0.5, 2));
}
TEST(ElementwiseGrad, Sqrt) {
  check_gradients(unary(Op::SQRT, 0.5, 3));
}
TEST(ElementwiseGrad, Exp2) {
  check_gradients(unary(Op::EXP2, -2, 2));
}
TEST(ElementwiseGrad, Log2) {
  check_gradients(unary(Op::LOG2, 0.5, 3));
}
TEST(ElementwiseGrad, Sin) {
  check_gradients(unary(Op::SIN, -3, 3));
}
TEST(ElementwiseGrad, TruncIsZero) {
  check_gradients(unary(Op::TRUNC, 0.1, 0.9));
}
TEST(ElementwiseGrad, Add) {
  check_gradients(binary(Op::ADD));
}
TEST(ElementwiseGrad, Sub) {
  check_gradients(binary(Op::SUB));
}
TEST(ElementwiseGrad, Mul) {
  check_gradients(binary(Op::MUL));
}
TEST(ElementwiseGrad, Fdiv) {
  check_gradients(binary(Op::FDIV, 0.5, 2));
}
TEST(ElementwiseGrad, MaxDistinct) {
  check_gradients(binary(Op::MAX), 3);
}

TEST(ElementwiseGrad, MaxTiesSplitEvenly) {
  // max(x, y) with x == y at elements 0 and 2: each side gets half of the gradient there.
  std::vector<double> xv{1, 5, -2}, yv{1, 2, -2};
  UOpRef x = input(xv, {3}), y = input(yv, {3});
  auto g = autograd::gradient(ew(Op::MAX, {x, y}), like(x, 1), {x, y});
  auto v = values(g);
  EXPECT_EQ(v[0], (std::vector<double>{0.5, 1, 0.5}));
  EXPECT_EQ(v[1], (std::vector<double>{0.5, 0, 0.5}));
}

TEST(ElementwiseGrad, WhereOnComparison) {
  // where(x < y, x * x, y * 3): gradient flows through the taken branch only.
  GradCase c;
  c.inputs = {{2, 4}, {2, 4}};
  c.build = [](const std::vector<UOpRef>& x) {
    UOpRef c = ew(Op::CMPLT, {x[0], x[1]});
    return ew(Op::WHERE, {c, ew(Op::MUL, {x[0], x[0]}), ew(Op::MUL, {x[1], like(x[1], 3)})});
  };
  check_gradients(c, 4);
}

TEST(ElementwiseGrad, ComparisonsCarryNoGradient) {
  for (Op op : {Op::CMPLT, Op::CMPNE, Op::CMPEQ}) {
    UOpRef x = input({1, 2}, {2}), y = input({2, 2}, {2});
    UOpRef out = lazy::cast(ew(op, {x, y}), dtypes::float64);
    auto g = autograd::gradient(out, like(out, 1), {x, y});
    EXPECT_FALSE(g[0]) << op_name(op);
    EXPECT_FALSE(g[1]) << op_name(op);
  }
}

TEST(ElementwiseGrad, CastThroughFloat32) {
  GradCase c;
  c.inputs = {{5}};
  c.build = [](const std::vector<UOpRef>& x) {
    UOpRef f = lazy::cast(x[0], dtypes::float32);
    return lazy::cast(ew(Op::MUL, {f, f}), dtypes::float64);
  };
  c.step = 1e-2;  // float32 rounding would swamp a small step; x^2's difference is exact
  c.tol = 1e-5;
  check_gradients(c);
}

TEST(ElementwiseGrad, Mulacc) {
  GradCase c;
  c.inputs = {{3}, {3}, {3}};
  c.build = [](const std::vector<UOpRef>& x) { return ew(Op::MULACC, {x[0], x[1], x[2]}); };
  check_gradients(c);
}

}  // namespace
}  // namespace polygrad::gradtest
