// Movement, reduction and identity-like rules against central finite differences.
#include "harness.hpp"

#include "autograd/gradient.hpp"

#include <gtest/gtest.h>

namespace polygrad::gradtest {
namespace {

UOpRef square(const UOpRef& x) {
  return lazy::elementwise(Op::MUL, {x, x});
}

/// f(x * x) for a (2, 3, 4) input, so the gradient depends on x.
GradCase of_square(std::function<UOpRef(const UOpRef&)> f, Shape shape = {2, 3, 4}) {
  GradCase c;
  c.inputs = {std::move(shape)};
  c.build = [f](const std::vector<UOpRef>& x) { return f(square(x[0])); };
  return c;
}

TEST(MovementGrad, Reshape) {
  check_gradients(of_square([](const UOpRef& x) { return lazy::reshape(x, {4, 6}); }));
}
TEST(MovementGrad, Permute) {
  check_gradients(of_square([](const UOpRef& x) { return lazy::permute(x, {2, 0, 1}); }));
}
TEST(MovementGrad, Expand) {
  check_gradients(of_square([](const UOpRef& x) { return lazy::expand(x, {2, 3, 5}); }, {2, 1, 5}));
}
TEST(MovementGrad, Pad) {
  check_gradients(of_square([](const UOpRef& x) {
    return lazy::pad(x, {{1, 0}, {0, 2}, {1, 1}});
  }));
}
TEST(MovementGrad, Shrink) {
  check_gradients(of_square([](const UOpRef& x) {
    return lazy::shrink(x, {{0, 2}, {1, 3}, {1, 4}});
  }));
}
TEST(MovementGrad, Flip) {
  check_gradients(of_square([](const UOpRef& x) { return lazy::flip(x, {0, 2}); }));
}
TEST(MovementGrad, Contiguous) {
  check_gradients(of_square([](const UOpRef& x) { return lazy::contiguous(x); }));
}
TEST(MovementGrad, CopyToSameDevice) {
  check_gradients(of_square([](const UOpRef& x) { return lazy::copy_to(x, device()); }));
}
TEST(ReduceGrad, Sum) {
  check_gradients(of_square([](const UOpRef& x) { return lazy::reduce(x, Op::ADD, {0, 2}); }));
}
TEST(ReduceGrad, MaxDistinct) {
  GradCase c;
  c.inputs = {{3, 4}};
  c.build = [](const std::vector<UOpRef>& x) { return lazy::reduce(x[0], Op::MAX, {1}); };
  check_gradients(c, 5);
}
TEST(ReduceGrad, Prod) {
  GradCase c;
  c.inputs = {{3, 4}};
  c.build = [](const std::vector<UOpRef>& x) { return lazy::reduce(x[0], Op::MUL, {1}); };
  check_gradients(c);
}
TEST(ReduceGrad, ProdWithZeros) {
  // Row 0 has no zero, row 1 one zero, row 2 two: prod is linear in each element, so the
  // central difference is exact even at 0.
  GradCase c;
  c.inputs = {{3, 4}};
  c.values = {{1.5, -2, 0.5, 3, 2, 0, -1, 4, 0, 3, 0, 2}};
  c.build = [](const std::vector<UOpRef>& x) { return lazy::reduce(x[0], Op::MUL, {1}); };
  check_gradients(c);
}

TEST(ReduceGrad, MaxTiesSplitAmongMaxima) {
  // Row 0's max 3 appears twice, row 1's 7 three times: each maximum gets g / count.
  UOpRef x = input({1, 3, 3, 2, 7, 7, 0, 7}, {2, 4});
  UOpRef out = lazy::reduce(x, Op::MAX, {1});
  UOpRef g = input({2, 6}, {2, 1});
  auto v = values(autograd::gradient(out, g, {x}));
  EXPECT_EQ(v[0], (std::vector<double>{0, 1, 1, 0, 2, 2, 0, 2}));
}

TEST(ReduceGrad, DetachStopsGradient) {
  // d/dx sum(x * detach(x)) = detach(x) = x, not 2x.
  std::vector<double> xv{1, -2, 3};
  UOpRef x = input(xv, {3});
  UOpRef out = lazy::reduce(lazy::elementwise(Op::MUL, {x, lazy::detach(x)}), Op::ADD, {0});
  auto v = values(autograd::gradient(out, like(out, 1), {x}));
  EXPECT_EQ(v[0], xv);
}

}  // namespace
}  // namespace polygrad::gradtest
