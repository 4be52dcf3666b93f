// Tensor::backward and Tensor::gradient: torch autograd fixtures (fixtures/grad.txt) and
// hand-derived gradients.
#include "harness.hpp"

namespace {

using polygrad::Tensor;
using tensor_test::A;
using tensor_test::B;
using tensor_test::C;
using tensor_test::Case;
using tensor_test::expect_values;

Tensor mlp_grad(const Case& c, const std::string& key) {
  std::map<std::string, Tensor> in;
  for (const char* k : {"a", "b", "c", "d", "e"}) in[k] = c.in(k);
  Tensor h = in["a"].linear(in["b"], in["c"]).relu();
  Tensor loss = h.linear(in["d"]).cross_entropy(in["e"]);
  return Tensor::gradient(loss, {in[key]}).at(0);
}

Tensor grad_wrt(const Case& c, const std::function<Tensor(const Tensor&, const Tensor&)>& f,
                bool wrt_b) {
  Tensor a = A(c), b = B(c);
  return Tensor::gradient(f(a, b), {wrt_b ? b : a}).at(0);
}

Tensor softmax_dot(const Tensor& a, const Tensor& b) {
  return (a.softmax() * b).sum();
}
Tensor conv_sq(const Tensor& a, const Tensor& b) {
  return a.conv2d(b, std::nullopt, 1, 2, 1, 1).square().mean();
}
Tensor layernorm_dot(const Tensor& a, const Tensor& b) {
  return (a.layernorm() * b).sum();
}
Tensor pool_dot(const Tensor& a, const Tensor& b) {
  return (a.max_pool2d(2) * b).sum();
}
Tensor matmul_tanh(const Tensor& a, const Tensor& b) {
  return a.matmul(b).tanh().sum();
}

const tensor_test::OpTable& table() {
  using polygrad::Index;
  static const tensor_test::OpTable t = {
      {"mlp_da", [](const Case& c) { return mlp_grad(c, "a"); }},
      {"mlp_db", [](const Case& c) { return mlp_grad(c, "b"); }},
      {"mlp_dc", [](const Case& c) { return mlp_grad(c, "c"); }},
      {"mlp_dd", [](const Case& c) { return mlp_grad(c, "d"); }},
      {"softmax_dot_da", [](const Case& c) { return grad_wrt(c, softmax_dot, false); }},
      {"conv_da", [](const Case& c) { return grad_wrt(c, conv_sq, false); }},
      {"conv_db", [](const Case& c) { return grad_wrt(c, conv_sq, true); }},
      {"layernorm_da", [](const Case& c) { return grad_wrt(c, layernorm_dot, false); }},
      {"max_pool_da", [](const Case& c) { return grad_wrt(c, pool_dot, false); }},
      {"matmul_tanh_db", [](const Case& c) { return grad_wrt(c, matmul_tanh, true); }},
      {"slice_cat_da",
       [](const Case& c) {
         Tensor a = A(c);
         Tensor x = Tensor::cat(
             {a[{Index::slice(), Index::slice(1)}], a[{Index::slice(), Index::slice(0, 1)}] * 2},
             1);
         Tensor w = Tensor::arange(0, 5, 1, PG_DTYPE_FLOAT32);
         return Tensor::gradient((x.square() * w).sum(), {a}).at(0);
       }},
  };
  return t;
}

POLYGRAD_TORCH_FIXTURE_SUITE(Grad, "grad", table(), 1e-5, 1e-4)

TEST(Backward, AccumulatesIntoLeaves) {
  Tensor x(std::vector<float>{1, 2, 3});
  x.requires_grad(true);
  EXPECT_TRUE(x.requires_grad());
  EXPECT_FALSE(x.grad().has_value());
  (x * x).sum().backward();  // d/dx sum(x^2) = 2x
  ASSERT_TRUE(x.grad().has_value());
  expect_values(*x.grad(), {3}, {2, 4, 6});
  (x * 3.0).sum().backward();  // accumulates 3
  expect_values(*x.grad(), {3}, {5, 7, 9});
  x.set_grad(std::nullopt);
  EXPECT_FALSE(x.grad().has_value());
}

TEST(Backward, OnlyLeavesTheLossDependsOn) {
  Tensor w(std::vector<float>{2, -1}), unused(std::vector<float>{5});
  w.requires_grad(true);
  unused.requires_grad(true);
  Tensor x(std::vector<float>{3, 4});
  (w * x).sum().backward();  // d/dw = x
  expect_values(*w.grad(), {2}, {3, 4});
  EXPECT_FALSE(unused.grad().has_value());
}

TEST(Backward, WithoutAPathToALeafIsAnError) {
  // Reading a loss realises it in place: its graph, and so the path to w, is gone. torch
  // raises when nothing requires grad; a silent no-op would leave stale or no gradients.
  Tensor w(std::vector<float>{2, -1});
  w.requires_grad(true);
  Tensor loss = (w * w).sum();
  EXPECT_FLOAT_EQ(loss.item<float>(), 5.0f);
  try {
    loss.backward();
    FAIL() << "backward from a realised root must throw";
  } catch (const polygrad::Error& e) {
    EXPECT_NE(std::string(e.what()).find("call backward() before item()"), std::string::npos)
        << e.what();
  }
  try {
    Tensor(std::vector<float>{1, 2}).sum().backward();
    FAIL() << "backward with nothing requiring grad must throw";
  } catch (const polygrad::Error& e) {
    EXPECT_NE(std::string(e.what()).find("no tensor that requires grad"), std::string::npos)
        << e.what();
  }
  EXPECT_FALSE(w.grad().has_value());
}

TEST(Backward, ExplicitRootGradient) {
  Tensor x(std::vector<float>{1, 2});
  x.requires_grad(true);
  Tensor y = x * x;  // dy/dx = 2x, weighted by the given gradient
  y.backward(Tensor(std::vector<float>{10, 100}));
  expect_values(*x.grad(), {2}, {20, 400});
}

TEST(Backward, OptimizerStepWithAssign) {
  // one SGD step on f(w) = sum((w - 3)^2): w <- w - 0.25 * 2 (w - 3)
  Tensor w(std::vector<float>{1, 5});
  w.requires_grad(true);
  (w - 3).square().sum().backward();
  w.assign(w.detach() - *w.grad() * 0.25);
  std::vector<Tensor> all{w};
  Tensor::realize_all(all);
  expect_values(w, {2}, {2, 4});
}

TEST(Gradient, SecondOrder) {
  Tensor x(std::vector<float>{1, 2, 3});
  Tensor g = Tensor::gradient((x * x * x).sum(), {x}).at(0);  // 3x^2
  Tensor h = Tensor::gradient(g.sum(), {x}).at(0);            // 6x
  expect_values(g, {3}, {3, 12, 27});
  expect_values(h, {3}, {6, 12, 18});
}

}  // namespace

namespace {

// The example of docs/tensor-api.md: one SGD step lowers the loss.
TEST(Backward, DocExampleTrainingStep) {
  Tensor::manual_seed(42);
  Tensor x = Tensor::rand({8, 4});
  Tensor w = Tensor::randn({3, 4}).requires_grad(true);
  Tensor b = Tensor::zeros({3}).requires_grad(true);
  Tensor y(std::vector<int32_t>{0, 2, 1, 1, 0, 2, 2, 1});
  Tensor loss = x.linear(w, b).relu().cross_entropy(y);
  loss.backward();
  w.assign(w.detach() - *w.grad() * 0.1);
  b.assign(b.detach() - *b.grad() * 0.1);
  std::vector<Tensor> step{w, b, loss};
  Tensor::realize_all(step);
  const float before = loss.item();
  const float after = x.linear(w, b).relu().cross_entropy(y).item();
  EXPECT_LT(after, before);
}

}  // namespace
