// Whole graphs: matmul, softmax, layer-style chains, and gradients of gradients.
#include "harness.hpp"

#include "autograd/gradient.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace polygrad::gradtest {
namespace {

UOpRef ew(Op op, std::initializer_list<UOpRef> srcs) {
  return lazy::elementwise(op, srcs);
}

/// (n, k) @ (k, m) as the Tensor layer builds it: broadcast to (n, k, m), multiply, sum k.
UOpRef matmul(const UOpRef& a, const UOpRef& b, int64_t n, int64_t k, int64_t m) {
  UOpRef ab = lazy::expand(lazy::reshape(a, {n, k, 1}), {n, k, m});
  UOpRef bb = lazy::expand(lazy::reshape(b, {1, k, m}), {n, k, m});
  return lazy::reshape(lazy::reduce(ew(Op::MUL, {ab, bb}), Op::ADD, {1}), {n, m});
}

/// Softmax over the last axis of an (n, m) tensor, with exp(x) = 2^(x / ln2).
UOpRef softmax(const UOpRef& x, int64_t n, int64_t m) {
  Shape s{n, m};
  UOpRef mx = lazy::expand(lazy::reduce(x, Op::MAX, {1}), s);
  UOpRef shifted = ew(Op::SUB, {x, mx});
  UOpRef e = ew(Op::EXP2, {ew(Op::MUL, {shifted, like(shifted, 1 / std::log(2.0))})});
  UOpRef sum = lazy::expand(lazy::reduce(e, Op::ADD, {1}), s);
  return ew(Op::FDIV, {e, sum});
}

TEST(CompositeGrad, Matmul) {
  GradCase c;
  c.inputs = {{3, 4}, {4, 2}};
  c.build = [](const std::vector<UOpRef>& x) { return matmul(x[0], x[1], 3, 4, 2); };
  check_gradients(c);
}

TEST(CompositeGrad, TwoLayerMlp) {
  // relu(x @ w1) @ w2 with relu = max(h, 0).
  GradCase c;
  c.inputs = {{2, 3}, {3, 4}, {4, 2}};
  c.build = [](const std::vector<UOpRef>& x) {
    UOpRef h = matmul(x[0], x[1], 2, 3, 4);
    return matmul(ew(Op::MAX, {h, like(h, 0)}), x[2], 2, 4, 2);
  };
  check_gradients(c, 7);
}

TEST(CompositeGrad, Softmax) {
  GradCase c;
  c.inputs = {{3, 5}};
  c.build = [](const std::vector<UOpRef>& x) { return softmax(x[0], 3, 5); };
  check_gradients(c);
}

TEST(CompositeGrad, SecondOrderCube) {
  // y = sum(x^3); dy/dx = 3x^2; d/dx sum(3x^2) = 6x.
  std::vector<double> xv{-1.5, 0.25, 2, 3};
  UOpRef x = input(xv, {4});
  UOpRef y = lazy::reduce(ew(Op::MUL, {ew(Op::MUL, {x, x}), x}), Op::ADD, {0});
  UOpRef g1 = autograd::gradient(y, like(y, 1), {x})[0];
  UOpRef g2 = autograd::gradient(g1, like(g1, 1), {x})[0];
  auto v = values({g1, g2});
  for (size_t i = 0; i < xv.size(); ++i) {
    EXPECT_NEAR(v[0][i], 3 * xv[i] * xv[i], 1e-12) << i;
    EXPECT_NEAR(v[1][i], 6 * xv[i], 1e-12) << i;
  }
}

TEST(CompositeGrad, SecondOrderSin) {
  // d2/dx2 sin(x) = -sin(x): the sin rule's own gradient goes through SIN again.
  std::vector<double> xv{-2, -0.5, 0.3, 1.7};
  UOpRef x = input(xv, {4});
  UOpRef y = ew(Op::SIN, {x});
  UOpRef g1 = autograd::gradient(y, like(y, 1), {x})[0];
  UOpRef g2 = autograd::gradient(g1, like(g1, 1), {x})[0];
  auto v = values({g2});
  for (size_t i = 0; i < xv.size(); ++i) EXPECT_NEAR(v[0][i], -std::sin(xv[i]), 1e-9) << i;
}

TEST(CompositeGrad, SharedSubgraphAccumulates) {
  // z = x*y + x/y + y: x and y each reach z along several paths.
  GradCase c;
  c.inputs = {{6}, {6}};
  c.lo = 0.5;
  c.build = [](const std::vector<UOpRef>& x) {
    UOpRef a = ew(Op::MUL, {x[0], x[1]}), b = ew(Op::FDIV, {x[0], x[1]});
    return ew(Op::ADD, {ew(Op::ADD, {a, b}), x[1]});
  };
  check_gradients(c);
}

}  // namespace
}  // namespace polygrad::gradtest
