// Linear algebra, nn functions, einsum and rearrange against torch (fixtures/nn.txt), and conv
// and pooling (fixtures/conv.txt).
#include "harness.hpp"

#include <cmath>

namespace {

using polygrad::Reduction;
using polygrad::Tensor;
using tensor_test::A;
using tensor_test::B;
using tensor_test::C;
using tensor_test::Case;

const tensor_test::OpTable& nn_table() {
  static const tensor_test::OpTable t = {
      {"matmul_2d", [](const Case& c) { return A(c).matmul(B(c)); }},
      {"matmul_batched", [](const Case& c) { return A(c).matmul(B(c)); }},
      {"matmul_vec_mat", [](const Case& c) { return A(c).matmul(B(c)); }},
      {"matmul_mat_vec", [](const Case& c) { return A(c).matmul(B(c)); }},
      {"dot_vec", [](const Case& c) { return A(c).dot(B(c)); }},
      {"matmul_rhs_unit_batch", [](const Case& c) { return A(c).matmul(B(c)); }},
      {"matmul_3d_vec", [](const Case& c) { return A(c).matmul(B(c)); }},
      {"linear", [](const Case& c) { return A(c).linear(B(c), C(c)); }},
      {"softmax_last", [](const Case& c) { return A(c).softmax(); }},
      {"softmax_axis0", [](const Case& c) { return A(c).softmax(0); }},
      {"log_softmax", [](const Case& c) { return A(c).log_softmax(); }},
      {"logsumexp", [](const Case& c) { return A(c).logsumexp(1); }},
      {"layernorm", [](const Case& c) { return A(c).layernorm(); }},
      {"cross_entropy_classes", [](const Case& c) { return A(c).cross_entropy(B(c)); }},
      {"cross_entropy_probs", [](const Case& c) { return A(c).cross_entropy(B(c)); }},
      {"cross_entropy_smooth", [](const Case& c) { return A(c).cross_entropy(B(c), -1, 0.1); }},
      {"binary_crossentropy", [](const Case& c) { return A(c).binary_crossentropy(B(c)); }},
      {"binary_crossentropy_logits",
       [](const Case& c) { return A(c).binary_crossentropy_logits(B(c)); }},
      {"cross_entropy_ignore", [](const Case& c) { return A(c).cross_entropy(B(c)); }},
      {"cross_entropy_ignore_smooth_sum",
       [](const Case& c) { return A(c).cross_entropy(B(c), -1, 0.2, Reduction::sum); }},
      {"cross_entropy_ignore0_none",
       [](const Case& c) { return A(c).cross_entropy(B(c), -1, 0.2, Reduction::none, 0); }},
      {"cross_entropy_axis1_ignore", [](const Case& c) { return A(c).cross_entropy(B(c), 1); }},
      {"binary_crossentropy_sum",
       [](const Case& c) { return A(c).binary_crossentropy(B(c), Reduction::sum); }},
      {"binary_crossentropy_logits_none",
       [](const Case& c) { return A(c).binary_crossentropy_logits(B(c), Reduction::none); }},
      {"binary_crossentropy_logits_pos_weight",
       [](const Case& c) { return A(c).binary_crossentropy_logits(B(c), Reduction::mean, C(c)); }},
      {"einsum_matmul",
       [](const Case& c) {
         return Tensor::einsum("ij,jk->ik", {A(c), B(c)});
       }},
      {"einsum_batch_transpose", [](const Case& c) { return Tensor::einsum("bij->bji", {A(c)}); }},
      {"einsum_bmm",
       [](const Case& c) {
         return Tensor::einsum("bij, bjk -> bik", {A(c), B(c)});
       }},
      {"einsum_outer",
       [](const Case& c) {
         return Tensor::einsum("i,j->ij", {A(c), B(c)});
       }},
      {"einsum_diagonal", [](const Case& c) { return Tensor::einsum("ii->i", {A(c)}); }},
      {"einsum_trace", [](const Case& c) { return Tensor::einsum("ii", {A(c)}); }},
      {"einsum_batch_diagonal_times",
       [](const Case& c) {
         return Tensor::einsum("bii,ij->bj", {A(c), B(c)});
       }},
      {"einsum_ellipsis",
       [](const Case& c) {
         return Tensor::einsum("...ij,jk->...ik", {A(c), B(c)});
       }},
      {"einsum_ellipsis_implicit",
       [](const Case& c) { return Tensor::einsum("...ij->...ji", {A(c)}); }},
      {"einsum_implicit_sum",
       [](const Case& c) {
         return Tensor::einsum("ij,ij", {A(c), A(c)});
       }},
      {"rearrange",
       [](const Case& c) {
         return A(c).rearrange("b (h w) c -> b h (c w)", {{"h", 2}});
       }},
      {"sdpa", [](const Case& c) { return A(c).scaled_dot_product_attention(B(c), C(c)); }},
      {"sdpa_causal",
       [](const Case& c) {
         return A(c).scaled_dot_product_attention(B(c), C(c), std::nullopt, true);
       }},
      {"sdpa_mask",
       [](const Case& c) { return A(c).scaled_dot_product_attention(B(c), C(c), c.in("d")); }},
  };
  return t;
}

const tensor_test::OpTable& conv_table() {
  static const tensor_test::OpTable t = {
      {"conv2d_basic", [](const Case& c) { return A(c).conv2d(B(c)); }},
      {"conv2d_bias_stride_pad", [](const Case& c) { return A(c).conv2d(B(c), C(c), 1, 2, 1, 1); }},
      {"conv2d_dilation", [](const Case& c) { return A(c).conv2d(B(c), std::nullopt, 1, 1, 2); }},
      {"conv2d_groups",
       [](const Case& c) {
         return A(c).conv2d(B(c), std::nullopt, 2, {1, 2}, 1, {1, 0});
       }},
      {"max_pool2d_k2", [](const Case& c) { return A(c).max_pool2d(2); }},
      {"max_pool2d_k3_s2_p1", [](const Case& c) { return A(c).max_pool2d(3, 2, 1, 1); }},
      {"max_pool2d_dilation", [](const Case& c) { return A(c).max_pool2d(2, 1, 2); }},
      {"avg_pool2d_k2", [](const Case& c) { return A(c).avg_pool2d(2); }},
      {"avg_pool2d_k3_s1_p1", [](const Case& c) { return A(c).avg_pool2d(3, 1, 1); }},
      {"max_pool2d_ceil", [](const Case& c) { return A(c).max_pool2d(3, 2, 1, 1, true); }},
      {"max_pool2d_k2_ceil", [](const Case& c) { return A(c).max_pool2d(2, 2, 1, 0, true); }},
      {"avg_pool2d_ceil", [](const Case& c) { return A(c).avg_pool2d(3, 2, 0, true); }},
      {"avg_pool2d_p1_exclude_pad",
       [](const Case& c) { return A(c).avg_pool2d(3, 2, 1, false, false); }},
      {"avg_pool2d_ceil_p1_exclude_pad",
       [](const Case& c) { return A(c).avg_pool2d(3, 2, 1, true, false); }},
      {"avg_pool2d_ceil_p1",
       [](const Case& c) {
         return A(c).avg_pool2d({3, 2}, polygrad::Size2{2, 3}, 1, true);
       }},
  };
  return t;
}

POLYGRAD_TORCH_FIXTURE_SUITE(Nn, "nn", nn_table(), 1e-5, 1e-4)

POLYGRAD_TORCH_FIXTURE_SUITE(Conv, "conv", conv_table(), 1e-5, 1e-4)

TEST(CrossEntropy, ALogitOfMinusInfinityOnAClassOfProbabilityZero) {
  // logits (0, -inf, 1): log_softmax of class 0 is -log(1 + e) (0 * -inf must not make NaN).
  const Tensor logits(std::vector<float>{0.0f, -INFINITY, 1.0f}, {1, 3});
  const double want0 = std::log(1.0 + std::exp(1.0)), want2 = want0 - 1.0;
  tensor_test::expect_values(logits.cross_entropy(Tensor(std::vector<int32_t>{0})), {}, {want0},
                             1e-6, 1e-6);
  tensor_test::expect_values(logits.cross_entropy(Tensor(std::vector<int32_t>{2})), {}, {want2},
                             1e-6, 1e-6);
}

TEST(MaxPool, OverlappingWindowsGiveATiesGradientToTheFirstMaximum) {
  // A 3 x 3 input of equal values, one 3 x 3 window at stride 2: torch's gradient, all of it to
  // the first maximum (a chain of maximums split it 1/2, 1/4, ... 1/256).
  const Tensor x = Tensor::ones({1, 1, 3, 3}).requires_grad(true);
  x.max_pool2d({3, 3}, polygrad::Size2{2, 2}).sum().backward();
  tensor_test::expect_values(*x.grad(), {1, 1, 3, 3}, {1, 0, 0, 0, 0, 0, 0, 0, 0}, 0, 0);
  // A NaN in a window is its maximum.
  const Tensor y(std::vector<float>{1, NAN, 2, 3, 4, 5, 6, 7, 8}, {1, 1, 3, 3});
  const std::vector<float> m = y.max_pool2d({2, 2}, polygrad::Size2{1, 1}).to_vector<float>();
  ASSERT_EQ(m.size(), 4u);
  EXPECT_TRUE(std::isnan(m[0]) && std::isnan(m[1]));
  EXPECT_EQ(m[2], 7.0f);
  EXPECT_EQ(m[3], 8.0f);
}

// Padding of an int or bool max_pool2d is the dtype's least value (tinygrad's dtypes.min), as
// -inf is a float's: an int tensor was padded with 0 and a bool one with true, so windows of
// negative values over the border came out 0 and every bool window true.
TEST(MaxPool, IntAndBoolPaddingIsTheDtypesLeastValue) {
  const Tensor::Shape s{1, 1, 2, 2};
  const Tensor i32(std::vector<int32_t>{-5, -6, -7, -8}, s);
  EXPECT_EQ(i32.max_pool2d(2, polygrad::Size2{1}, 1, 1).to_vector<int32_t>(),
            (std::vector<int32_t>{-5, -5, -6, -5, -5, -6, -7, -7, -8}));
  EXPECT_EQ(i32.max_pool2d(2, std::nullopt, 1, 1).to_vector<int32_t>(),  // (tiled windows)
            (std::vector<int32_t>{-5, -6, -7, -8}));
  const Tensor i64 = i32.cast(PG_DTYPE_INT64) - (int64_t{1} << 40);
  EXPECT_EQ(i64.max_pool2d(2, std::nullopt, 1, 1).to_vector<int64_t>()[3], -8 - (int64_t{1} << 40));
  const Tensor b(std::vector<bool>{false, false, false, true}, s);
  EXPECT_EQ(b.max_pool2d(2, polygrad::Size2{1}, 1, 1).to_vector<uint8_t>(),
            (std::vector<uint8_t>{0, 0, 0, 0, 1, 1, 0, 1, 1}));
}

}  // namespace
