// Tensor-level autograd (autograd::backward / autograd::gradient) through the public Tensor API,
// against hand-derived gradients on the cpu plugin.
#include "autograd/backward.hpp"

#include <polygrad/error.hpp>

#include <gtest/gtest.h>

namespace polygrad {
namespace {

TEST(TensorBackward, SumOfSquaresAccumulates) {
  Tensor x(std::vector<float>{1, -2, 3});
  x.requires_grad(true);
  Tensor loss = (x * x).sum();
  autograd::backward(loss);
  ASSERT_TRUE(x.grad());
  EXPECT_EQ(x.grad()->to_vector<float>(), (std::vector<float>{2, -4, 6}));
  autograd::backward(loss);
  EXPECT_EQ(x.grad()->to_vector<float>(), (std::vector<float>{4, -8, 12}));
}

TEST(TensorBackward, OnlyLeavesWithRequiresGradGetGrads) {
  Tensor w(std::vector<float>{2, 3}), c(std::vector<float>{5, 7});
  w.requires_grad(true);
  Tensor loss = (w * c).sum();
  autograd::backward(loss);
  EXPECT_EQ(w.grad()->to_vector<float>(), (std::vector<float>{5, 7}));
  EXPECT_FALSE(c.grad());
}

TEST(TensorBackward, ExplicitRootGradient) {
  Tensor x(std::vector<float>{1, 2, 3});
  x.requires_grad(true);
  Tensor y = x * 3;
  autograd::backward(y, Tensor(std::vector<float>{1, 0, -1}));
  EXPECT_EQ(x.grad()->to_vector<float>(), (std::vector<float>{3, 0, -3}));
}

TEST(TensorBackward, GradientOfMatmulShapedProduct) {
  // sum(a @ w) written as a broadcast product: d/dw = a^T @ ones, dw[i][j] = a[0][i] + a[1][i].
  Tensor a(std::vector<float>{1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor w(std::vector<float>{1, -1, 2, 0, 0.5f, 3}, {3, 2});
  auto g = autograd::gradient((a.reshape({2, 3, 1}) * w.reshape({1, 3, 2})).sum(), {w});
  EXPECT_EQ(g[0].shape(), (Tensor::Shape{3, 2}));
  EXPECT_EQ(g[0].to_vector<float>(), (std::vector<float>{5, 5, 7, 7, 9, 9}));
}

TEST(TensorBackward, Errors) {
  Tensor x(std::vector<float>{1, 2});
  Tensor other(std::vector<float>{3, 4});
  auto message = [](auto f) -> std::string {
    try {
      f();
    } catch (const Error& e) {
      return e.what();
    }
    return "(no error)";
  };
  std::string non_scalar = message([&] { autograd::backward(x * 2); });
  EXPECT_NE(non_scalar.find("backward"), std::string::npos) << non_scalar;
  EXPECT_NE(non_scalar.find("(2,)"), std::string::npos) << non_scalar;
  std::string unrelated = message([&] { autograd::gradient((x * 2).sum(), {other}); });
  EXPECT_NE(unrelated.find("does not depend on target 0"), std::string::npos) << unrelated;
  // A root that reaches its leaf only through a comparison has no gradient path: torch raises
  // ("does not require grad and does not have a grad_fn"), and so does backward, leaving the
  // leaf's gradient unset.
  Tensor leaf(std::vector<float>{1, -2});
  leaf.requires_grad(true);
  std::string no_path =
      message([&] { autograd::backward((leaf > 0.0).cast(PG_DTYPE_FLOAT32).sum()); });
  EXPECT_NE(no_path.find("depends on no tensor that requires grad"), std::string::npos) << no_path;
  EXPECT_FALSE(leaf.grad());
  std::string null_root = message([&] { autograd::backward(Tensor()); });
  EXPECT_NE(null_root.find("backward"), std::string::npos) << null_root;
}

}  // namespace
}  // namespace polygrad
