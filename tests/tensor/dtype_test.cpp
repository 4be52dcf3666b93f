// Result dtypes: python-scalar rule, tensor-tensor promotion, bool comparisons, int division.
#include "harness.hpp"

namespace {

using polygrad::Tensor;
using tensor_test::expect_values;

Tensor ints() {
  return Tensor(std::vector<int32_t>{1, -2, 3});
}

TEST(Dtype, ScalarOperands) {
  EXPECT_EQ((ints() + 2).dtype(), PG_DTYPE_INT32);  // int scalar keeps int
  Tensor f = ints() + 1.5;                          // float scalar with int tensor: float32
  EXPECT_EQ(f.dtype(), PG_DTYPE_FLOAT32);
  expect_values(f, {3}, {2.5, -0.5, 4.5});
  EXPECT_EQ((Tensor(std::vector<double>{1}) + 2.5).dtype(), PG_DTYPE_FLOAT64);  // no upcast
  EXPECT_EQ((Tensor(std::vector<float>{1}) * 2).dtype(), PG_DTYPE_FLOAT32);
  std::vector<int> three(3);
  EXPECT_EQ((ints() * three.size()).to_vector<int32_t>(), (std::vector<int32_t>{3, -6, 9}));
  Tensor b(std::vector<bool>{true, false});
  EXPECT_EQ((b + 1).dtype(), PG_DTYPE_INT32);
  EXPECT_EQ((b + 1).to_vector<int32_t>(), (std::vector<int32_t>{2, 1}));
}

TEST(Dtype, TensorPromotion) {
  Tensor d(std::vector<double>{0.5, 0.25, 1});
  Tensor r = ints() + d;  // int32 + float64 -> float64
  EXPECT_EQ(r.dtype(), PG_DTYPE_FLOAT64);
  expect_values(r, {3}, {1.5, -1.75, 4});
  EXPECT_EQ((ints() + Tensor(std::vector<int64_t>{1, 1, 1})).dtype(), PG_DTYPE_INT64);
  EXPECT_EQ((ints() * Tensor(std::vector<uint8_t>{2, 2, 2})).dtype(), PG_DTYPE_INT32);
  Tensor w = (ints() > 0).where(ints(), Tensor(std::vector<float>{9, 9, 9}));
  EXPECT_EQ(w.dtype(), PG_DTYPE_FLOAT32);
  expect_values(w, {3}, {1, 9, 3});
}

TEST(Dtype, ComparisonsAreBool) {
  Tensor c = ints() < 1.5;
  EXPECT_EQ(c.dtype(), PG_DTYPE_BOOL);
  EXPECT_EQ(c.to_vector<uint8_t>(), (std::vector<uint8_t>{1, 1, 0}));
  EXPECT_EQ((ints() == ints()).to_vector<uint8_t>(), (std::vector<uint8_t>{1, 1, 1}));
  EXPECT_EQ((!(ints() != 3)).to_vector<uint8_t>(), (std::vector<uint8_t>{0, 0, 1}));
  EXPECT_EQ((1 < ints()).to_vector<uint8_t>(), (std::vector<uint8_t>{0, 0, 1}));
}

TEST(Dtype, DivisionIsTrue) {
  Tensor q = Tensor(std::vector<int32_t>{7, -7}) / 2;
  EXPECT_EQ(q.dtype(), PG_DTYPE_FLOAT32);
  expect_values(q, {2}, {3.5, -3.5});
}

TEST(Dtype, IntegerOps) {
  Tensor x(std::vector<int32_t>{3, -4, 5, 0});
  EXPECT_EQ(x.abs().to_vector<int32_t>(), (std::vector<int32_t>{3, 4, 5, 0}));
  EXPECT_EQ(x.sign().to_vector<int32_t>(), (std::vector<int32_t>{1, -1, 1, 0}));
  EXPECT_EQ(x.pow(2).to_vector<int32_t>(), (std::vector<int32_t>{9, 16, 25, 0}));
  EXPECT_EQ(x.pow(2).dtype(), PG_DTYPE_INT32);
  EXPECT_EQ(x.min().item<int32_t>(), -4);
  EXPECT_EQ(x.max().item<int32_t>(), 5);
  EXPECT_EQ(x.sum().item<int32_t>(), 4);
  EXPECT_EQ(x.prod(0).item<int32_t>(), 0);
  EXPECT_EQ(x.minimum(1).to_vector<int32_t>(), (std::vector<int32_t>{1, -4, 1, 0}));
  Tensor m = x.mean();
  EXPECT_EQ(m.dtype(), PG_DTYPE_FLOAT32);
  EXPECT_FLOAT_EQ(m.item(), 1.0f);
  EXPECT_EQ(x.exp().dtype(), PG_DTYPE_FLOAT32);
  Tensor u(std::vector<uint8_t>{200, 3, 250});
  EXPECT_EQ(u.min().item<int32_t>(), 3);
  EXPECT_EQ(u.minimum(Tensor(std::vector<uint8_t>{100, 100, 255})).to_vector<int32_t>(),
            (std::vector<int32_t>{100, 3, 250}));
  EXPECT_EQ(u.sum().dtype(), PG_DTYPE_UINT32);
  EXPECT_EQ(u.sum().item<int64_t>(), 453);
}

TEST(Dtype, BoolOps) {
  Tensor a(std::vector<bool>{true, true, false, false}),
      b(std::vector<bool>{true, false, true, false});
  EXPECT_EQ((a & b).to_vector<uint8_t>(), (std::vector<uint8_t>{1, 0, 0, 0}));
  EXPECT_EQ((a | b).to_vector<uint8_t>(), (std::vector<uint8_t>{1, 1, 1, 0}));
  EXPECT_EQ((a ^ b).to_vector<uint8_t>(), (std::vector<uint8_t>{0, 1, 1, 0}));
  EXPECT_EQ((a + b).dtype(), PG_DTYPE_BOOL);
  Tensor count = a.sum();
  EXPECT_EQ(count.dtype(), PG_DTYPE_INT32);
  EXPECT_EQ(count.item<int32_t>(), 2);
  EXPECT_EQ(a.max().item<int32_t>(), 1);
  EXPECT_EQ((a & b).min().item<int32_t>(), 0);
}

TEST(Dtype, Casts) {
  Tensor f(std::vector<float>{1.7f, -1.7f, 300.0f});
  EXPECT_EQ(f.int_().to_vector<int32_t>(), (std::vector<int32_t>{1, -1, 300}));
  EXPECT_EQ(f.bool_().to_vector<uint8_t>(), (std::vector<uint8_t>{1, 1, 1}));
  EXPECT_EQ(f.double_().dtype(), PG_DTYPE_FLOAT64);
  EXPECT_EQ(f.long_().to_vector<int64_t>(), (std::vector<int64_t>{1, -1, 300}));
  Tensor r = Tensor::rand({4}, PG_DTYPE_FLOAT16);
  EXPECT_EQ(r.dtype(), PG_DTYPE_FLOAT16);
  for (float v : r.to_vector<float>()) EXPECT_TRUE(v >= 0.0f && v <= 1.0f) << v;
  expect_values(Tensor::arange(0, 3, 1, PG_DTYPE_FLOAT16).float_(), {3}, {0, 1, 2});
  Tensor h = f.half();
  EXPECT_EQ(h.dtype(), PG_DTYPE_FLOAT16);
  expect_values(h.float_(), {3}, {1.7, -1.7, 300}, 1e-3, 1e-3);
}

// int64 values beyond 2^53 (a nanosecond timestamp) have no double: scalars, full, arange and
// item keep them exact. Hand-derived values.
TEST(Dtype, Int64BeyondDoublesStaysExact) {
  constexpr int64_t big = (int64_t{1} << 60) + 1;  // as a double: 2^60
  const Tensor x(std::vector<int64_t>{1, 2, -3});
  EXPECT_EQ((x + big).to_vector<int64_t>(), (std::vector<int64_t>{big + 1, big + 2, big - 3}));
  EXPECT_EQ((x * ((int64_t{1} << 40) + 3)).to_vector<int64_t>()[2], -3 * ((int64_t{1} << 40) + 3));
  EXPECT_EQ(x.maximum(big).to_vector<int64_t>(), (std::vector<int64_t>{big, big, big}));
  EXPECT_EQ((x + big == big + 2).to_vector<uint8_t>(), (std::vector<uint8_t>{0, 1, 0}));
  const Tensor f = Tensor::full({2}, big, PG_DTYPE_INT64);
  EXPECT_EQ(f.sum().item<int64_t>(), 2 * big);
  EXPECT_EQ(Tensor::full_like(x, big).to_vector<int64_t>(), (std::vector<int64_t>{big, big, big}));
  EXPECT_EQ(Tensor::arange_int(big, big + 6, 2).to_vector<int64_t>(),
            (std::vector<int64_t>{big, big + 2, big + 4}));
  EXPECT_EQ(Tensor::arange_int(3, 0, -1, PG_DTYPE_INT32).to_vector<int32_t>(),
            (std::vector<int32_t>{3, 2, 1}));
  EXPECT_EQ(Tensor::full({1}, ~uint64_t{0}, PG_DTYPE_UINT64).to_vector<uint64_t>()[0],
            ~uint64_t{0});
  EXPECT_THROW(Tensor::arange_int(0, 3, 1, PG_DTYPE_FLOAT32), polygrad::Error);
  // An int scalar with no int tensor to follow is int32 unless int32 cannot hold it.
  const Tensor b(std::vector<bool>{true, false});
  EXPECT_EQ((b + big).dtype(), PG_DTYPE_INT64);
  EXPECT_EQ((b + big).to_vector<int64_t>(), (std::vector<int64_t>{big + 1, big}));
  EXPECT_EQ((b + 2).dtype(), PG_DTYPE_INT32);
  const Tensor w = b.where(big, 1);
  EXPECT_EQ(w.dtype(), PG_DTYPE_INT64);
  EXPECT_EQ(w.to_vector<int64_t>(), (std::vector<int64_t>{big, 1}));
  EXPECT_EQ(b.where(2, 1).dtype(), PG_DTYPE_INT32);
}

// clamp's bounds follow the scalar rule, as torch's: an int bound keeps an int tensor's dtype
// (int64 bounds beyond 2^53 exact), a float bound makes it float32, even a whole one (torch:
// int32 clamp(0.0) is float32); doubles through Scalar::whole_or_float stay int bounds.
TEST(Dtype, ClampBoundsFollowTheScalarRule) {
  const Tensor i = ints();  // {1, -2, 3}
  EXPECT_EQ(i.clamp(0, 2).dtype(), PG_DTYPE_INT32);
  EXPECT_EQ(i.clamp(0, 2).to_vector<int32_t>(), (std::vector<int32_t>{1, 0, 2}));
  const Tensor f = i.clamp(0.0, 2.0);
  EXPECT_EQ(f.dtype(), PG_DTYPE_FLOAT32);
  EXPECT_EQ(f.to_vector<float>(), (std::vector<float>{1.0f, 0.0f, 2.0f}));
  EXPECT_EQ(i.clamp(std::nullopt, 0.5).to_vector<float>(), (std::vector<float>{0.5f, -2.0f, 0.5f}));
  EXPECT_EQ(i.clamp(polygrad::Scalar::whole_or_float(0.0)).dtype(), PG_DTYPE_INT32);
  constexpr int64_t p62 = int64_t{1} << 62;
  const Tensor big(std::vector<int64_t>{p62, p62 + 3, p62 + 9});
  EXPECT_EQ(big.clamp(p62 + 1, p62 + 5).to_vector<int64_t>(),
            (std::vector<int64_t>{p62 + 1, p62 + 3, p62 + 5}));
  // Bounds beyond an int dtype's range are brought into it first (uint8: -1 and 300 change
  // nothing).
  const Tensor u(std::vector<uint8_t>{0, 7, 255});
  EXPECT_EQ(u.clamp(-1, 300).to_vector<uint8_t>(), (std::vector<uint8_t>{0, 7, 255}));
}

// A bool scalar keeps a bool tensor bool, as torch's and tinygrad's (torch: b * True is
// [True, False, True, False], b + True all True), and takes any other tensor's dtype; it was
// an int scalar, so b * true was int32.
TEST(Dtype, BoolScalarKeepsBool) {
  Tensor b(std::vector<bool>{true, false, true, false});
  Tensor m = b * true;
  EXPECT_EQ(m.dtype(), PG_DTYPE_BOOL);
  EXPECT_EQ(m.to_vector<uint8_t>(), (std::vector<uint8_t>{1, 0, 1, 0}));
  Tensor s = b + true;
  EXPECT_EQ(s.dtype(), PG_DTYPE_BOOL);
  EXPECT_EQ(s.to_vector<uint8_t>(), (std::vector<uint8_t>{1, 1, 1, 1}));
  EXPECT_EQ((b == false).to_vector<uint8_t>(), (std::vector<uint8_t>{0, 1, 0, 1}));
  Tensor w = b.where(true, false);
  EXPECT_EQ(w.dtype(), PG_DTYPE_BOOL);
  EXPECT_EQ(w.to_vector<uint8_t>(), (std::vector<uint8_t>{1, 0, 1, 0}));
  EXPECT_EQ(b.where(true, 2).dtype(), PG_DTYPE_INT32);
  EXPECT_EQ((ints() * true).dtype(), PG_DTYPE_INT32);
  EXPECT_EQ((ints() * true).to_vector<int32_t>(), (std::vector<int32_t>{1, -2, 3}));
  EXPECT_EQ((Tensor(std::vector<float>{1.5f}) * true).dtype(), PG_DTYPE_FLOAT32);
  EXPECT_EQ((b + 1).dtype(), PG_DTYPE_INT32);  // an int scalar still gives int32
}

// An int scalar divides an int tensor by its own value, in float32 (torch 1.13's values): it
// was wrapped into the tensor's dtype first, so int8 / 300 divided by 44 and uint8 / -3 by 253.
TEST(Dtype, DivisionByAnIntScalarOutsideTheDtype) {
  const Tensor i8 = Tensor(std::vector<int32_t>{100, 44, -20}).cast(PG_DTYPE_INT8);
  const Tensor q = i8 / 300;
  EXPECT_EQ(q.dtype(), PG_DTYPE_FLOAT32);
  EXPECT_EQ(q.to_vector<float>(),
            (std::vector<float>{0.3333333432674408f, 0.14666666090488434f, -0.06666667014360428f}));
  EXPECT_EQ((300 / i8).to_vector<float>(), (std::vector<float>{3.0f, 6.818181991577148f, -15.0f}));
  const Tensor u8(std::vector<uint8_t>{200, 44});
  EXPECT_EQ((u8 / -3).to_vector<float>(),
            (std::vector<float>{-66.66666412353516f, -14.666666984558105f}));
  const Tensor i32(std::vector<int32_t>{7});
  EXPECT_EQ((i32 / (int64_t{1} << 40)).to_vector<float>(),
            (std::vector<float>{6.366462912410498e-12f}));
}

// sign of a bool tensor is the tensor itself, bool, as torch's (torch.sign([True, False]) is
// [True, False]) and tinygrad's; it was int32 (the -1/0/1 constants took the int scalar rule).
TEST(Dtype, SignOfBoolIsBool) {
  const Tensor b(std::vector<bool>{true, false, true});
  const Tensor s = b.sign();
  EXPECT_EQ(s.dtype(), PG_DTYPE_BOOL);
  EXPECT_EQ(s.to_vector<uint8_t>(), (std::vector<uint8_t>{1, 0, 1}));
}

}  // namespace
