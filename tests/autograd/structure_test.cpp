// Gradient graphs without a device: shapes, pruning of branches that lead to no target, and
// the user errors.
#include "autograd/gradient.hpp"
#include "ir/graph.hpp"
#include "tensor/lazy.hpp"

#include <polygrad/error.hpp>

#include <gtest/gtest.h>

#include <functional>

#include <algorithm>

namespace polygrad {
namespace {

using lazy::Shape;

UOpRef buf(const Shape& s, DType t = dtypes::float32) {
  static int64_t next_id = 1 << 30;  // far from the runtime's ids; never realised here
  return lazy::reshape(lazy::buffer(t, lazy::numel(s), next_id++), s);
}
UOpRef ew(Op op, std::initializer_list<UOpRef> srcs) {
  return lazy::elementwise(op, srcs);
}
UOpRef ones(const UOpRef& x) {
  return lazy::full(x->dtype(), 1, lazy::shape_of(x));
}
bool contains(const UOpRef& graph, const UOpRef& node) {
  auto order = toposort(graph);
  return std::find(order.begin(), order.end(), node.get()) != order.end();
}
bool contains_op(const UOpRef& graph, Op op) {
  auto order = toposort(graph);
  return std::any_of(order.begin(), order.end(), [op](const UOp* u) { return u->op() == op; });
}
std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(GradientStructure, ShapesFollowTargets) {
  UOpRef a = buf({3, 4}), b = buf({4}), c = buf({2, 3, 1});
  UOpRef bb = lazy::expand(lazy::reshape(b, {1, 4}), {3, 4});
  UOpRef ab = lazy::permute(ew(Op::MUL, {a, bb}), {1, 0});              // (4, 3)
  UOpRef cc = lazy::reshape(lazy::expand(c, {2, 3, 4}), {2, 3, 4});     // (2, 3, 4)
  UOpRef s = lazy::reduce(lazy::permute(cc, {0, 2, 1}), Op::ADD, {0});  // (1, 4, 3)
  UOpRef root = ew(Op::ADD, {lazy::reshape(s, {4, 3}), ab});
  auto g = autograd::gradient(root, ones(root), {a, b, c, ab});
  ASSERT_EQ(g.size(), 4u);
  EXPECT_EQ(lazy::shape_of(g[0]), (Shape{3, 4}));
  EXPECT_EQ(lazy::shape_of(g[1]), (Shape{4}));
  EXPECT_EQ(lazy::shape_of(g[2]), (Shape{2, 3, 1}));
  EXPECT_EQ(lazy::shape_of(g[3]), (Shape{4, 3}));
  EXPECT_EQ(g[3], ones(root)) << "d root / d ab is the incoming gradient itself";
  for (const UOpRef& x : g) EXPECT_NO_THROW(verify(x));
}

// d tanh(x) = g (1 - t^2) reads the TANH node itself, d sigmoid(x) = g s (1 - s) the SIGMOID: no
// decomposition at the tensor level, so a gradient of it is as small as its value (and a second
// gradient differentiates TANH again).
TEST(GradientStructure, TanhsAndSigmoidsGradientsReadTheirValue) {
  UOpRef x = buf({4});
  UOpRef t = ew(Op::TANH, {x});
  UOpRef g = autograd::gradient(t, ones(t), {x})[0];
  EXPECT_TRUE(contains(g, t));
  EXPECT_LE(toposort(g).size(), 12u) << to_string(g);
  UOpRef g2 = autograd::gradient(g, ones(g), {x})[0];
  EXPECT_TRUE(contains(g2, t));
  EXPECT_FALSE(contains_op(g2, Op::EXP2));
  // Likewise sigmoid's, g s (1 - s).
  UOpRef s = ew(Op::SIGMOID, {x});
  UOpRef gs = autograd::gradient(s, ones(s), {x})[0];
  EXPECT_TRUE(contains(gs, s));
  EXPECT_FALSE(contains_op(gs, Op::WHERE));
  EXPECT_LE(toposort(gs).size(), 12u) << to_string(gs);
}

TEST(GradientStructure, RootIsTarget) {
  UOpRef x = buf({2});
  UOpRef g = lazy::full(dtypes::float32, 3, {2});
  EXPECT_EQ(autograd::gradient(x, g, {x})[0], g);
}

TEST(GradientStructure, UnrelatedTargetIsNull) {
  UOpRef x = buf({2}), unrelated = buf({2});
  UOpRef root = ew(Op::SIN, {x});
  auto g = autograd::gradient(root, ones(root), {unrelated, x});
  EXPECT_FALSE(g[0]);
  EXPECT_TRUE(g[1]);
}

TEST(GradientStructure, BranchesOffThePathGetNoWork) {
  // root = x * a + sin(z) * c: d/dx is g * a; the sin branch and c are never touched.
  UOpRef x = buf({5}), a = buf({5}), z = buf({5}), c = buf({5});
  UOpRef root = ew(Op::ADD, {ew(Op::MUL, {x, a}), ew(Op::MUL, {ew(Op::SIN, {z}), c})});
  UOpRef gx = autograd::gradient(root, ones(root), {x})[0];
  EXPECT_EQ(gx, ew(Op::MUL, {ones(root), a}));
  EXPECT_FALSE(contains(gx, c));
  EXPECT_FALSE(contains_op(gx, Op::SIN));
}

TEST(GradientStructure, MultiplePathsAccumulateWithAdd) {
  UOpRef x = buf({3});
  UOpRef root = ew(Op::ADD, {x, x});
  UOpRef g = ones(root);
  EXPECT_EQ(autograd::gradient(root, g, {x})[0], ew(Op::ADD, {g, g}));
}

TEST(GradientStructure, NestedTargets) {
  UOpRef x = buf({3});
  UOpRef sq = ew(Op::MUL, {x, x});
  UOpRef root = ew(Op::NEG, {sq});
  UOpRef g = ones(root);
  auto grads = autograd::gradient(root, g, {sq, x});
  EXPECT_EQ(grads[0], ew(Op::NEG, {g}));
  EXPECT_TRUE(grads[1]);
  EXPECT_TRUE(contains(grads[1], grads[0])) << "d/dx goes through d/d(x*x)";
}

TEST(GradientStructure, NoGradientThroughDetachAssignOrIntegers) {
  UOpRef x = buf({4}), target = buf({4});
  UOpRef through_int = lazy::cast(lazy::cast(x, dtypes::int32), dtypes::float32);
  for (const UOpRef& root : {lazy::detach(x), lazy::assign(target, x), through_int})
    EXPECT_FALSE(autograd::gradient(root, ones(root), {x})[0]) << node_to_string(*root);
}

TEST(GradientStructure, IntRootIsAnErrorNamingTheOp) {
  UOpRef i = buf({3}, dtypes::int32);
  UOpRef root = ew(Op::ADD, {i, i});
  std::string msg = error_of([&] { autograd::gradient(root, ones(root), {i}); });
  EXPECT_NE(msg.find("gradient"), std::string::npos) << msg;
  EXPECT_NE(msg.find("ADD"), std::string::npos) << msg;
  EXPECT_NE(msg.find("int32"), std::string::npos) << msg;
}

TEST(GradientStructure, IntTargetIsAnError) {
  UOpRef i = buf({3}, dtypes::int32);
  UOpRef root = lazy::cast(i, dtypes::float32);
  std::string msg = error_of([&] { autograd::gradient(root, ones(root), {i}); });
  EXPECT_NE(msg.find("target 0"), std::string::npos) << msg;
  EXPECT_NE(msg.find("int32"), std::string::npos) << msg;
}

TEST(GradientStructure, RootGradMustMatchRoot) {
  UOpRef x = buf({2, 3});
  UOpRef root = ew(Op::EXP2, {x});
  std::string shape_msg = error_of([&] {
    autograd::gradient(root, lazy::full(dtypes::float32, 1, {3, 2}), {x});
  });
  EXPECT_NE(shape_msg.find("(3, 2)"), std::string::npos) << shape_msg;
  EXPECT_NE(shape_msg.find("EXP2"), std::string::npos) << shape_msg;
  std::string dtype_msg = error_of([&] {
    autograd::gradient(root, lazy::full(dtypes::float64, 1, {2, 3}), {x});
  });
  EXPECT_NE(dtype_msg.find("float64"), std::string::npos) << dtype_msg;
}

}  // namespace
}  // namespace polygrad
