// User errors: one test per kind; each message names the op and the shapes (or values) involved,
// and nothing aborts (the process goes on using tensors afterwards).
#include "harness.hpp"

#include <climits>
#include <cmath>
#include <cstdint>

namespace {

using polygrad::Index;
using polygrad::Tensor;
using tensor_test::expect_user_error;

Tensor m23() {
  return Tensor::zeros({2, 3});
}

TEST(Errors, Reshape) {
  expect_user_error([] { m23().reshape({4}); }, {"reshape: cannot reshape (2, 3) to (4,)"});
  // (layernorm centres as var does, and names itself)
  expect_user_error([] { m23().layernorm({5}); }, {"layernorm: axis 5", "(2, 3)"});
  expect_user_error([] { m23().reshape({-1, -1}); }, {"reshape", "more than one -1"});
}

TEST(Errors, Broadcast) {
  expect_user_error([] { m23() + Tensor::zeros({4}); },
                    {"add: shapes (2, 3) and (4,) do not broadcast"});
  expect_user_error([] { m23().where(Tensor::zeros({5}), 1.0); }, {"where", "(2, 3)", "(5,)"});
  expect_user_error([] { m23().expand({4, 3}); }, {"expand", "(2, 3)", "(4, 3)"});
}

TEST(Errors, AxisOutOfRange) {
  expect_user_error([] { m23().sum(3); }, {"sum: axis 3 out of range for shape (2, 3)"});
  expect_user_error([] { m23().softmax(-3); }, {"softmax: axis -3 out of range for shape (2, 3)"});
  expect_user_error([] { m23().logsumexp(2); }, {"logsumexp: axis 2 out of range"});
  expect_user_error([] { m23().sum({0, -2}); }, {"sum: axis 0 appears more than once", "(2, 3)"});
  expect_user_error([] { m23().max({1, 1}); }, {"max: axis 1 appears more than once"});
  expect_user_error([] { Tensor::scalar(2.0).sum(1); }, {"sum: axis 1 out of range for shape ()"});
  expect_user_error([] { Tensor::scalar(2.0).softmax(-2); }, {"softmax: axis -2 out of range"});
  expect_user_error([] { m23().transpose(0, 2); }, {"transpose", "axis 2", "(2, 3)"});
  expect_user_error([] { m23().permute({0, 0}); }, {"permute", "repeats axis 0"});
}

TEST(Errors, Matmul) {
  expect_user_error(
      [] {
        m23().matmul(Tensor::zeros({4, 5}));
      },
      {"matmul: shapes (2, 3) and (4, 5) do not match (3 != 4)"});
  expect_user_error([] { Tensor::scalar(1).matmul(m23()); }, {"matmul", "()", "(2, 3)"});
  // Batch axes that do not broadcast: the operands' shapes, not the internal product's views.
  expect_user_error(
      [] {
        Tensor::zeros({2, 3, 4}).matmul(Tensor::zeros({3, 4, 5}));
      },
      {"matmul: shapes (2, 3, 4) and (3, 4, 5): batch axes (2,) and (3,) do not "
       "broadcast"});
}

TEST(Errors, Slicing) {
  expect_user_error([] { m23()[{2}]; }, {"getitem: index 2 out of range", "(2, 3)"});
  expect_user_error([] { m23()[{0, 0, 0}]; }, {"getitem: 3 indices for shape (2, 3)"});
  expect_user_error([] { m23()[{Index::slice(0, 2, 0)}]; }, {"getitem", "step cannot be zero"});
  expect_user_error(
      [] {
        m23().shrink({{0, 2}, {1, 4}});
      },
      {"shrink: bounds (1, 4) out of range for axis 1 of shape (2, 3)"});
  expect_user_error([] { m23().pad({{0, 1}}); }, {"pad: 1 pad pairs for shape (2, 3)"});
  expect_user_error(
      [] {
        m23().gather(1, Tensor::zeros({2, 3}, PG_DTYPE_BOOL));
      },
      {"gather", "int tensor", "bool"});
  // A float index holding whole numbers is taken (token ids as the seed passes them); one
  // known on the host that is fractional or outside the axis is an error naming the value.
  const Tensor x(std::vector<float>{0, 1, 2, 3, 4, 5}, {2, 3});
  EXPECT_EQ(x.gather(1, Tensor(std::vector<float>{2, 0}, {2, 1})).to_vector<float>(),
            (std::vector<float>{2, 3}));
  expect_user_error(
      [] {
        m23().gather(1, Tensor(std::vector<float>{2.5f, 0}, {2, 1}));
      },
      {"gather: index 2.5 is not a whole number"});
  expect_user_error(
      [] {
        m23().gather(1, Tensor(std::vector<float>{1, 3}, {2, 1}));
      },
      {"gather: index 3 is out of bounds"});
}

TEST(Errors, Joining) {
  expect_user_error(
      [] {
        Tensor::cat({m23(), Tensor::zeros({3, 3})}, 1);
      },
      {"cat: shapes (2, 3) and (3, 3) differ outside axis 1"});
  expect_user_error(
      [] {
        Tensor::stack({m23(), Tensor::zeros({3, 2})});
      },
      {"stack: shapes (2, 3) and (3, 2) differ"});
  expect_user_error(
      [] {
        m23().split(std::vector<int64_t>{1, 1}, 1);
      },
      {"split: sizes (1, 1) do not add up to axis 1 of shape (2, 3)"});
}

TEST(Errors, NnShapes) {
  expect_user_error(
      [] {
        Tensor::zeros({1, 3, 5, 5}).conv2d(Tensor::zeros({2, 4, 3, 3}));
      },
      {"conv2d: input (1, 3, 5, 5) and weight (2, 4, 3, 3) do not match"});
  expect_user_error(
      [] {
        Tensor::zeros({1, 2, 5, 5}).conv2d(Tensor::zeros({3, 2, 3, 3}), Tensor::zeros({4}));
      },
      {"conv2d: bias shape (4,) does not match weight (3, 2, 3, 3) (3 output channels)"});
  expect_user_error(
      [] {
        Tensor::zeros({1, 2, 5, 5}).conv2d(Tensor::zeros({3, 2, 3, 3}), std::nullopt, 0);
      },
      {"conv2d: groups must be positive, not 0"});
  expect_user_error(
      [] {
        Tensor::zeros({1, 1, 2, 2}).max_pool2d(3);
      },
      {"max_pool2d: kernel (3, 3) does not fit", "(1, 1, 2, 2)"});
  expect_user_error([] { m23().cross_entropy(Tensor::zeros({3}, PG_DTYPE_INT32)); },
                    {"cross_entropy: class target shape (3,)", "(2, 3)"});
  expect_user_error(
      [] {
        Tensor::einsum("ij,jk->ik", {m23(), Tensor::zeros({4, 2})});
      },
      {"einsum: subscript 'j' has sizes 3 and 4"});
  expect_user_error(
      [] {
        Tensor::einsum("...i,...i->...", {m23(), Tensor::zeros({4, 3})});
      },
      {"einsum: axis 0 of '...' has sizes 2 and 4 in '...i,...i->...'"});
  expect_user_error([] { Tensor::einsum("ii->i", {m23()}); },
                    {"einsum: subscript 'i' repeats in 'ii' over axes of sizes 2 and 3"});
  expect_user_error([] { Tensor::einsum("...ijk->i", {m23()}); },
                    {"einsum: subscripts '...ijk' name more axes than operand 0 has (2)"});
  expect_user_error([] { Tensor::einsum("ij->ii", {m23()}); },
                    {"einsum: output subscript 'i' repeats"});
  expect_user_error([] { Tensor::einsum("i0->i", {m23()}); }, {"einsum: bad subscript '0'"});
  expect_user_error([] { m23().rearrange("a b c -> a b c"); },
                    {"rearrange", "3 input axes", "(2, 3)"});
  expect_user_error([] { m23().rearrange("a (b c) -> a b c"); },
                    {"rearrange: cannot infer sizes of both 'b' and 'c'"});
  expect_user_error([] { m23().rearrange("a ... -> a"); }, {"rearrange", "one '...' on each side"});
  expect_user_error(
      [] {
        m23().rearrange("a b -> b a", {{"c", 3}});
      },
      {"rearrange: a size is given for 'c'", "'a b -> b a'"});
  expect_user_error([] { m23().rearrange("(a ...) -> a ..."); },
                    {"rearrange", "'...' cannot be inside parentheses"});
  expect_user_error([] { m23().rearrange("a 2 -> a"); }, {"rearrange", "'2'", "only number"});
  expect_user_error([] { m23().rearrange("a .. -> a"); }, {"rearrange", "'..'", "not an ellipsis"});
}

// Composites check their operands' shapes themselves: the error was the mul, add, sub or
// matmul inside ("mul: shapes (6, 5) and (5, 6) do not broadcast"), naming neither the op nor
// which operand was wrong.
TEST(Errors, CompositeOperandShapes) {
  expect_user_error(
      [] {
        Tensor::zeros({5, 6}).binary_crossentropy(Tensor::zeros({6, 5}));
      },
      {"binary_crossentropy: target shape (6, 5) does not broadcast with input "
       "shape (5, 6)"});
  expect_user_error(
      [] {
        Tensor::zeros({5, 6}).binary_crossentropy_logits(
            Tensor::zeros({5, 6}), polygrad::Reduction::mean, Tensor::zeros({5}));
      },
      {"binary_crossentropy_logits: pos_weight shape (5,)", "(5, 6)"});
  expect_user_error(
      [] {
        m23().linear(Tensor::zeros({4, 5}));
      },
      {"linear: input shape (2, 3) and weight shape (4, 5) do not match"});
  expect_user_error(
      [] {
        m23().linear(Tensor::zeros({4, 3}), Tensor::zeros({5}));
      },
      {"linear: bias shape (5,) does not broadcast with the output shape (2, 4)"});
  expect_user_error(
      [] {
        Tensor::zeros({2, 4, 8}).scaled_dot_product_attention(Tensor::zeros({2, 6, 8}),
                                                              Tensor::zeros({2, 5, 8}));
      },
      {"scaled_dot_product_attention: query (2, 4, 8), key (2, 6, 8) and value (2, 5, 8) do "
       "not fit"});
  expect_user_error(
      [] {
        Tensor::zeros({2, 4, 8}).scaled_dot_product_attention(
            Tensor::zeros({2, 6, 8}), Tensor::zeros({2, 6, 8}), Tensor::zeros({4, 6}), true);
      },
      {"scaled_dot_product_attention: cannot set attn_mask (shape (4, 6)) when is_causal=True"});
  expect_user_error(
      [] {
        m23().lerp(Tensor::zeros({3, 2}), 0.5);
      },
      {"lerp: shapes (2, 3) and end (3, 2) do not broadcast"});
  expect_user_error(
      [] {
        m23().lerp(m23(), Tensor::zeros({3, 2}));
      },
      {"lerp: shapes (2, 3), end (2, 3) and weight (3, 2) do not broadcast"});
}

// logical_and / logical_or named bitwise_and / bitwise_or, the ops they are made of.
TEST(Errors, LogicalOpsNameThemselves) {
  expect_user_error(
      [] {
        m23().logical_and(Tensor::zeros({3, 2}));
      },
      {"logical_and: shapes (2, 3) and (3, 2) do not broadcast"});
  expect_user_error([] { m23().logical_or(Tensor::zeros({4})); },
                    {"logical_or: shapes (2, 3) and (4,) do not broadcast"});
}

TEST(Errors, Data) {
  expect_user_error(
      [] {
        Tensor(std::vector<float>{1, 2, 3, 4, 5}, {2, 3});
      },
      {"tensor: 5 values do not fill shape (2, 3)"});
  expect_user_error([] { m23().item(); }, {"item: tensor of shape (2, 3)"});
  expect_user_error(
      [] {
        float out[2];
        m23().copy_to_host(out, sizeof(out));
      },
      {"copy_to_host", "8 bytes", "(2, 3)", "24"});
  expect_user_error([] { Tensor::zeros({-1}); }, {"full: negative size in shape (-1,)"});
  expect_user_error([] { Tensor::randint(3, 3, {2}); }, {"randint", "high (3)", "low (3)"});
}

TEST(Errors, NullHandle) {
  expect_user_error([] { Tensor().shape(); }, {"shape: the tensor is a null handle"});
  expect_user_error([] { Tensor().exp(); }, {"exp: the tensor is a null handle"});
}

TEST(Errors, Dtypes) {
  Tensor u(std::vector<int64_t>{1});
  Tensor v = u.cast(PG_DTYPE_UINT64);
  expect_user_error([&] { v + u; }, {"add: no dtype holds both uint64 and int64"});
  expect_user_error([] { Tensor::arange(3).requires_grad(true); },
                    {"requires_grad", "float", "int32"});
  expect_user_error([] { m23().bitwise_and(m23()); }, {"bitwise_and", "float"});
}

TEST(Errors, Devices) {
  expect_user_error([] { m23().to("nosuchdevice"); }, {"nosuchdevice"});
}

TEST(Errors, Gradient) {
  Tensor a(std::vector<float>{1, 2}), b(std::vector<float>{3});
  expect_user_error([&] { Tensor::gradient((a * a).sum(), {b}); }, {"gradient"});
  expect_user_error([&] { (a * a).backward(); }, {"backward", "(2,)"});
}

TEST(Errors, NothingAborts) {
  for (int i = 0; i < 3; ++i) expect_user_error([] { m23().reshape({7}); }, {"reshape"});
  tensor_test::expect_values(m23() + 1, {2, 3}, {1, 1, 1, 1, 1, 1});
}

TEST(Errors, RandintBoundsTheDtypeCannotHold) {
  expect_user_error([] { Tensor::randint(0, int64_t{1} << 40, {4}); },
                    {"randint: [0, 1099511627776) does not fit int32"});
  expect_user_error([] { Tensor::randint(-3, 3, {4}, PG_DTYPE_UINT8); },
                    {"randint", "does not fit uint8"});
  // The whole range of a dtype is fine.
  const std::vector<int32_t> v =
      Tensor::randint(0, 256, {64}, PG_DTYPE_UINT8).cast(PG_DTYPE_INT32).to_vector<int32_t>();
  for (int32_t x : v) EXPECT_TRUE(x >= 0 && x < 256) << x;
}

TEST(Errors, LabelSmoothingOutsideZeroToOne) {
  const Tensor logits = Tensor::zeros({2, 3});
  const Tensor target(std::vector<int32_t>{0, 2});
  expect_user_error([&] { logits.cross_entropy(target, -1, 2.0); },
                    {"cross_entropy: label_smoothing must be in [0, 1]"});
  expect_user_error([&] { logits.cross_entropy(target, -1, -0.5); }, {"label_smoothing"});
}

// Indices and classes in data given as input (a buffer in the cpu's memory) are checked as
// torch checks them; a computed index is known only as the kernel runs, where one outside
// reads 0.
TEST(Errors, IndicesOutsideTheAxisInInputData) {
  const Tensor x(std::vector<float>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, {4, 3});
  expect_user_error(
      [&] {
        x.gather(0, Tensor(std::vector<int32_t>{0, 5, 1}, {1, 3}));
      },
      {"gather: index 5 is out of bounds for axis 0 with size 4"});
  expect_user_error(
      [&] {
        x.gather(1, Tensor(std::vector<int64_t>{-1}, {1, 1}));
      },
      {"gather: index -1 is out of bounds for axis 1 with size 3"});
  Tensor wide = Tensor(std::vector<int32_t>{0, 7, 1}, {1, 3}).cast(PG_DTYPE_UINT16);
  wide.realize();
  expect_user_error([&] { x.gather(0, wide); }, {"gather: index 7 is out of bounds"});
  EXPECT_EQ(x.gather(0, Tensor(std::vector<int32_t>{3, 0, 2}, {1, 3})).to_vector<float>(),
            (std::vector<float>{9, 1, 8}));
  const Tensor computed = Tensor(std::vector<int32_t>{1, 2, 0}, {1, 3}) + 4;  // 5, 6, 4
  EXPECT_EQ(x.gather(0, computed).to_vector<float>(), (std::vector<float>{0, 0, 0}));
  const Tensor logits = Tensor::zeros({3, 5});
  expect_user_error(
      [&] {
        logits.cross_entropy(Tensor(std::vector<int32_t>{1, 7, 2}, {3}));
      },
      {"cross_entropy: class 7 is out of range for 5 classes"});
  expect_user_error(
      [&] {
        logits.cross_entropy(Tensor(std::vector<int32_t>{1, -1, 2}, {3}));
      },
      {"cross_entropy: class -1"});
  expect_user_error(
      [] {
        Tensor(std::vector<int32_t>{0, 3}).one_hot(3);
      },
      {"one_hot: class 3 is out of range for 3 classes"});
  expect_user_error([] { Tensor(std::vector<int32_t>{0, -1}).one_hot(); }, {"one_hot: class -1"});
  // ignore_index is no class: log(5) for each of the two others
  EXPECT_NEAR(logits.cross_entropy(Tensor(std::vector<int32_t>{1, -100, 2}, {3})).item<float>(),
              std::log(5.0), 1e-6);
}

TEST(Errors, PoolPaddingBeyondHalfTheKernel) {
  const Tensor x = Tensor::zeros({1, 1, 8, 8});
  expect_user_error([&] { x.max_pool2d(3, std::nullopt, 1, 2); },
                    {"max_pool2d: padding (2, 2) exceeds half the kernel (3, 3)"});
  expect_user_error([&] { x.avg_pool2d(2, std::nullopt, 2); }, {"avg_pool2d", "padding (2, 2)"});
  // Half of it is fine; a dilated kernel is wider.
  EXPECT_EQ(x.max_pool2d(3, std::nullopt, 1, 1).shape(), (Tensor::Shape{1, 1, 3, 3}));
  EXPECT_EQ(x.max_pool2d(3, std::nullopt, 2, 2).shape(), (Tensor::Shape{1, 1, 3, 3}));
}

TEST(Errors, GradientDtypes) {
  Tensor w = Tensor::ones({2}).requires_grad(true);
  expect_user_error([&] { w.set_grad(Tensor::zeros({2}, PG_DTYPE_INT32)); },
                    {"set_grad: gradient dtype int32 does not match tensor dtype float32"});
  expect_user_error([&] { (w * 2).backward(Tensor::ones({2}, PG_DTYPE_INT32)); },
                    {"backward: the root gradient is int32"});
  expect_user_error([] { Tensor::rand({2}, PG_DTYPE_INT32); }, {"rand: dtype int32"});
  expect_user_error([] { Tensor::randn({2}, PG_DTYPE_UINT8); }, {"randn", "not a float type"});
}

TEST(Errors, ShapesPastInt64) {
  const int64_t big = int64_t{1} << 62;
  expect_user_error(
      [&] {
        Tensor::zeros({big, 4});
      },
      {"(4611686018427387904, 4)", "more than 2^62"});
  expect_user_error([] { m23().pad({{INT64_MAX, 0}, {0, 0}}); }, {"pad", "longer than 2^62"});
  expect_user_error([] { m23().pad({{INT64_MIN, 0}, {0, 0}}); }, {"pad", "longer than 2^62"});
  expect_user_error([&] { m23().repeat({big, 1}); }, {"repeat", "more than 2^62"});
  expect_user_error([&] { Tensor::zeros({1, 1}).expand({big, 8}); }, {"more than 2^62"});
  // (0 elements, but sizes that still multiply past it in index math)
  expect_user_error([&] { Tensor::zeros({0, big, 8}); }, {"more than 2^62 elements"});
}

// A 0-d tensor's only axis is 0 or -1 (torch: "Dimension out of range (expected to be in range
// of [-1, 0], but got 1)"); squeeze(1) returned it unchanged.
TEST(Errors, SqueezeOfAScalarChecksTheAxis) {
  expect_user_error([] { Tensor::scalar(2.0).squeeze(1); },
                    {"squeeze: axis 1 out of range for shape ()"});
  EXPECT_EQ(Tensor::scalar(2.0).squeeze(-1).item<float>(), 2.0f);
}

// A float that an int dtype cannot hold after truncation is an error, as torch's full ("value
// cannot be converted to type int without overflow"); it filled 0. Truncation stays: 2.9 -> 2.
TEST(Errors, FullOfAFloatPastTheIntDtype) {
  expect_user_error([] { Tensor::full({2}, 1e20, PG_DTYPE_INT32); },
                    {"full: value 1e+20 does not fit dtype int32"});
  expect_user_error([] { Tensor::full({2}, NAN, PG_DTYPE_INT64); }, {"full", "nan", "int64"});
  expect_user_error([] { Tensor::full_like(Tensor::zeros({2}, PG_DTYPE_UINT8), 256.0); },
                    {"full", "256", "uint8"});
  expect_user_error([] { Tensor::full({1}, -1.0, PG_DTYPE_UINT32); }, {"full", "-1", "uint32"});
  EXPECT_EQ(Tensor::full({2}, 2.9, PG_DTYPE_INT32).to_vector<int32_t>(),
            (std::vector<int32_t>{2, 2}));
  EXPECT_EQ(Tensor::full({1}, -0.5, PG_DTYPE_UINT8).to_vector<uint8_t>(),
            (std::vector<uint8_t>{0}));
  EXPECT_EQ(Tensor::full({1}, 255.9, PG_DTYPE_UINT8).to_vector<uint8_t>(),
            (std::vector<uint8_t>{255}));
  EXPECT_EQ(Tensor::full({1}, -9223372036854775808.0, PG_DTYPE_INT64).to_vector<int64_t>(),
            (std::vector<int64_t>{INT64_MIN}));
}

}  // namespace
