// Arithmetic, comparisons, math and activations against torch (fixtures/elementwise.txt).
#include <algorithm>
#include <cmath>
#include <limits>

#include "harness.hpp"

namespace {

using polygrad::Tensor;
using tensor_test::A;
using tensor_test::B;
using tensor_test::C;
using tensor_test::Case;

const tensor_test::OpTable& table() {
  static const tensor_test::OpTable t = {
      {"add_bcast", [](const Case& c) { return A(c) + B(c); }},
      {"sub_bcast", [](const Case& c) { return A(c) - B(c); }},
      {"mul_bcast", [](const Case& c) { return A(c) * B(c); }},
      {"div", [](const Case& c) { return A(c) / B(c); }},
      {"add_scalar", [](const Case& c) { return A(c) + 2.5; }},
      {"rsub_scalar", [](const Case& c) { return 3 - A(c); }},
      {"rdiv_scalar", [](const Case& c) { return 2 / B(c); }},
      {"neg", [](const Case& c) { return -A(c); }},
      {"pow_tensor", [](const Case& c) { return A(c).pow(B(c)); }},
      {"pow_neg_base", [](const Case& c) { return A(c).pow(B(c)); }},
      {"pow_int_scalar", [](const Case& c) { return A(c).pow(3); }},
      {"pow_half", [](const Case& c) { return A(c).pow(0.5); }},
      {"rpow", [](const Case& c) { return Tensor::pow(2, A(c)); }},
      {"lt", [](const Case& c) { return A(c) < B(c); }},
      {"le", [](const Case& c) { return A(c) <= B(c); }},
      {"gt", [](const Case& c) { return A(c) > B(c); }},
      {"ge", [](const Case& c) { return A(c) >= B(c); }},
      {"eq", [](const Case& c) { return A(c) == B(c); }},
      {"ne", [](const Case& c) { return A(c) != B(c); }},
      {"exp", [](const Case& c) { return A(c).exp(); }},
      {"log", [](const Case& c) { return A(c).log(); }},
      {"sqrt", [](const Case& c) { return A(c).sqrt(); }},
      {"rsqrt", [](const Case& c) { return A(c).rsqrt(); }},
      {"square", [](const Case& c) { return A(c).square(); }},
      {"abs", [](const Case& c) { return A(c).abs(); }},
      {"sign", [](const Case& c) { return A(c).sign(); }},
      {"reciprocal", [](const Case& c) { return A(c).reciprocal(); }},
      {"sin", [](const Case& c) { return A(c).sin(); }},
      {"cos", [](const Case& c) { return A(c).cos(); }},
      {"tan", [](const Case& c) { return A(c).tan(); }},
      {"exp2", [](const Case& c) { return A(c).exp2(); }},
      {"log2", [](const Case& c) { return A(c).log2(); }},
      {"trunc", [](const Case& c) { return A(c).trunc(); }},
      {"ceil", [](const Case& c) { return A(c).ceil(); }},
      {"floor", [](const Case& c) { return A(c).floor(); }},
      {"round", [](const Case& c) { return A(c).round(); }},
      {"isnan", [](const Case& c) { return A(c).isnan(); }},
      {"isinf", [](const Case& c) { return A(c).isinf(); }},
      {"where", [](const Case& c) { return A(c).where(B(c), c.in("c")); }},
      {"maximum", [](const Case& c) { return A(c).maximum(B(c)); }},
      {"minimum", [](const Case& c) { return A(c).minimum(B(c)); }},
      {"clamp", [](const Case& c) { return A(c).clamp(-0.5, 0.5); }},
      {"clamp_min", [](const Case& c) { return A(c).clamp(0.25); }},
      {"relu", [](const Case& c) { return A(c).relu(); }},
      {"relu6", [](const Case& c) { return A(c).relu6(); }},
      {"leaky_relu", [](const Case& c) { return A(c).leaky_relu(0.1); }},
      {"sigmoid", [](const Case& c) { return A(c).sigmoid(); }},
      {"tanh", [](const Case& c) { return A(c).tanh(); }},
      {"gelu", [](const Case& c) { return A(c).gelu(); }},
      {"quick_gelu", [](const Case& c) { return A(c).quick_gelu(); }},
      {"silu", [](const Case& c) { return A(c).swish(); }},
      {"elu", [](const Case& c) { return A(c).elu(1.5); }},
      {"softplus", [](const Case& c) { return A(c).softplus(2.0); }},
      {"mish", [](const Case& c) { return A(c).mish(); }},
      {"hardtanh", [](const Case& c) { return A(c).hardtanh(-0.5, 0.8); }},
      {"hardswish", [](const Case& c) { return A(c).hardswish(); }},
      {"hardsigmoid", [](const Case& c) { return A(c).hardsigmoid(); }},
      {"cast_float_int", [](const Case& c) { return A(c).int_(); }},
      {"cast_int_float", [](const Case& c) { return A(c).float_(); }},
      {"floordiv_int", [](const Case& c) { return A(c).floordiv(B(c)); }},
      {"mod_int", [](const Case& c) { return A(c) % B(c); }},
      {"floordiv_float", [](const Case& c) { return A(c).floordiv(B(c)); }},
      {"mod_float", [](const Case& c) { return A(c).mod(B(c)); }},
  };
  return t;
}

POLYGRAD_TORCH_FIXTURE_SUITE(Elementwise, "elementwise", table(), 1e-5, 2e-5)

// 4096 elements: the kernels run in whole vectors (max, compare and select through masks).
// NaN, infinities and signed zeros included; expected values from the definitions.
TEST(ElementwiseVectors, MaxCompareAndWhereOnLongInputs) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> special = {nan, inf, -inf, 0.0f, -0.0f, 1.5f, -2.5f};
  std::vector<float> x(4096), y(4096);
  for (size_t i = 0; i < x.size(); ++i) {
    x[i] = i % 11 < special.size() ? special[i % 11] : static_cast<float>(i % 37) - 18.0f;
    y[i] = i % 13 < special.size() ? special[(i / 13) % special.size()]
                                   : static_cast<float>(i % 29) - 14.0f;
  }
  Tensor tx(x), ty(y);
  const std::vector<float> relu = tx.relu().to_vector<float>();
  const std::vector<float> maximum = tx.maximum(ty).to_vector<float>();
  const std::vector<float> pick = (tx < ty).where(tx, ty).to_vector<float>();
  const std::vector<uint8_t> eq = (tx == ty).to_vector<uint8_t>();
  const std::vector<uint8_t> ne = (tx != ty).to_vector<uint8_t>();
  ASSERT_EQ(relu.size(), x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    const float want_relu = x[i] <= 0 ? 0.0f : x[i];  // torch's: NaN stays NaN
    const float want_max = std::isnan(x[i]) || std::isnan(y[i]) ? nan : std::max(x[i], y[i]);
    const float want_pick = x[i] < y[i] ? x[i] : y[i];
    if (std::isnan(want_relu))
      EXPECT_TRUE(std::isnan(relu[i])) << i;
    else
      EXPECT_EQ(relu[i], want_relu) << i << " x=" << x[i];
    if (std::isnan(want_max))
      EXPECT_TRUE(std::isnan(maximum[i])) << i;
    else
      EXPECT_EQ(maximum[i], want_max) << i << " x=" << x[i] << " y=" << y[i];
    if (std::isnan(want_pick))
      EXPECT_TRUE(std::isnan(pick[i])) << i;
    else
      EXPECT_EQ(pick[i], want_pick) << i;
    EXPECT_EQ(eq[i], x[i] == y[i] ? 1 : 0) << i;
    EXPECT_EQ(ne[i], x[i] != y[i] ? 1 : 0) << i;
  }
}

// An integer tensor to an integer tensor power wraps as C's unsigned arithmetic does (torch's
// results): the reference multiplies in uint64 and truncates. Negative exponents give 1 for a
// base of 1, +-1 for -1 and 0 otherwise, as torch's.
TEST(IntegerPower, TensorExponentsAreExactAndWrap) {
  const std::vector<int64_t> b = {2, 3, -3, 7, 0, 1, -1, 5, 94906267, -7};
  const std::vector<int64_t> e = {31, 39, 21, 13, 0, 100, 101, 27, 2, 19};
  auto wrap = [](int64_t base, int64_t n, int bits) {
    uint64_t acc = 1;
    for (int64_t i = 0; i < n; ++i) acc *= static_cast<uint64_t>(base);
    if (bits == 64) return static_cast<int64_t>(acc);
    return static_cast<int64_t>(static_cast<int32_t>(static_cast<uint32_t>(acc)));
  };
  const auto r64 = Tensor(b).pow(Tensor(e)).to_vector<int64_t>();
  std::vector<int32_t> b32(b.begin(), b.end()), e32(e.begin(), e.end());
  const auto r32 = Tensor(b32).pow(Tensor(e32)).to_vector<int32_t>();
  for (size_t i = 0; i < b.size(); ++i) {
    EXPECT_EQ(r64[i], wrap(b[i], e[i], 64)) << b[i] << " ** " << e[i];
    EXPECT_EQ(r32[i], wrap(b32[i], e32[i], 32)) << b32[i] << " ** " << e32[i];
  }
  const std::vector<int32_t> nb = {2, 1, -1, -1, 0, 3}, ne = {-1, -5, -2, -3, -1, -2};
  EXPECT_EQ(Tensor(nb).pow(Tensor(ne)).to_vector<int32_t>(),
            (std::vector<int32_t>{0, 1, 1, -1, 0, 0}));
  // A negative scalar exponent of an integer tensor is refused, as torch refuses it.
  EXPECT_THROW(Tensor(nb).pow(-1), polygrad::Error);
}

TEST(Sign, OfNaNIsZeroAndItsGradientZerosAsTorchs) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  Tensor x(std::vector<float>{nan, -2.0f, 0.0f, 3.0f});
  EXPECT_EQ(x.sign().to_vector<float>(), (std::vector<float>{0.0f, -1.0f, 0.0f, 1.0f}));
  EXPECT_EQ(Tensor::gradient(x.sign().sum(), {x})[0].to_vector<float>(),
            (std::vector<float>{0.0f, 0.0f, 0.0f, 0.0f}));
}

// hardtanh is clamp's lower bound then its upper one: torch's F.hardtanh(x, 1, -1) is -1
// everywhere with a zero gradient (it gave 1 below the bounds), and its gradient is 0 on the
// bounds (torch: hardtanh(x, -1, 1) weighted by 0..5 gives [0, 0, 2, 3, 0, 0]).
TEST(Hardtanh, CrossedBoundsGiveTheUpperOneAsTorchs) {
  Tensor x(std::vector<float>{-2, -1, -0.5, 0.5, 1, 2});
  tensor_test::expect_values(x.hardtanh(1, -1), {6}, {-1, -1, -1, -1, -1, -1});
  tensor_test::expect_values(Tensor::gradient(x.hardtanh(1, -1).sum(), {x})[0], {6},
                             {0, 0, 0, 0, 0, 0});
  Tensor w(std::vector<float>{0, 1, 2, 3, 4, 5});
  tensor_test::expect_values(x.hardtanh(), {6}, {-1, -1, -0.5, 0.5, 1, 1});
  tensor_test::expect_values(Tensor::gradient((x.hardtanh() * w).sum(), {x})[0], {6},
                             {0, 0, 2, 3, 0, 0});
}

// (-inf)^y for a y that is not whole is +inf (y > 0) or +0 (y < 0), IEEE's pow and torch
// 1.13's tensor pow for float32, float64 and bfloat16 (it was NaN, as a finite negative base's);
// whole exponents keep their signs: (-inf)^3 = -inf, (-inf)^-3 = -0.
TEST(FloatPower, NegativeInfinityToAFractionalPower) {
  const std::vector<double> y = {1.5, -0.5, 2.5, -2.5, 1e-30, 3.0, -3.0, 2.0};
  const std::vector<double> x(y.size(), -INFINITY);
  for (pg_dtype t : {PG_DTYPE_FLOAT32, PG_DTYPE_FLOAT64, PG_DTYPE_BFLOAT16}) {
    const auto r = Tensor(x).cast(t).pow(Tensor(y).cast(t)).to_vector<double>();
    EXPECT_EQ(r, (std::vector<double>{INFINITY, 0.0, INFINITY, 0.0, INFINITY, -INFINITY, -0.0,
                                      INFINITY}));
    EXPECT_FALSE(std::signbit(r[1]));
    EXPECT_TRUE(std::signbit(r[6]));
  }
  EXPECT_EQ(Tensor(std::vector<float>{-INFINITY}).pow(2.5).to_vector<float>(),
            (std::vector<float>{INFINITY}));
}

// float32 powers are rounded once from float64: torch 1.13's values exactly. Computed in
// float32, 2^(y log2|x|) was several ulps off (65504^2.5 gave 1098169319424, 1e-30^-0.5
// 1000000590970880, 97.3^7.7 2034553791184896).
TEST(FloatPower, Float32IsRoundedOnceAsTorchs) {
  const Tensor x(std::vector<float>{65504.0f, 1e-30f, 2.5f, 97.3f, 0.013f, 55.5f});
  const Tensor y(std::vector<float>{2.5f, -0.5f, 2.5f, 7.7f, -7.9f, -6.25f});
  EXPECT_EQ(x.pow(y).to_vector<float>(),
            (std::vector<float>{1098169909248.0f, 999999986991104.0f, 9.88211727142334f,
                                2034551106830336.0f, 794049594261504.0f, 1.2536285377839906e-11f}));
  EXPECT_EQ(x.pow(2.5).to_vector<float>()[0], 1098169909248.0f);
}

// round of -0.5 < x < 0 is -0.0, as torch's round (torch.round([-0.4, -0.5, 0.4, -1.5, 2.5,
// -0.0]) is [-0., -0., 0., -2., 2., -0.]); -1 + 1 gave +0.0.
TEST(Round, NegativeZeroAsTorchs) {
  for (pg_dtype t : {PG_DTYPE_FLOAT32, PG_DTYPE_FLOAT64, PG_DTYPE_FLOAT16}) {
    const auto r = Tensor(std::vector<double>{-0.4, -0.5, 0.4, -1.5, 2.5, -0.0})
                       .cast(t)
                       .round()
                       .to_vector<double>();
    EXPECT_EQ(r, (std::vector<double>{-0.0, -0.0, 0.0, -2.0, 2.0, -0.0}));
    const std::vector<bool> negative = {true, true, false, true, false, true};
    for (size_t i = 0; i < r.size(); ++i) EXPECT_EQ(std::signbit(r[i]), negative[i]) << i;
  }
}

// A whole scalar exponent is rounded once, as torch's: products in float16 and bfloat16 and
// float32 ones past torch's own x**2, x**3, x**-1, x**-2 rounded at every step (float16
// 2.51171875 ** 8 gave 1585, float32 1.3140524625778198 ** 8 gave 8.889998435974121).
TEST(FloatPower, WholeScalarExponentsRoundOnceAsTorchs) {
  const auto half = Tensor(std::vector<float>{2.51171875f, 2.51953125f, 1.7880859375f})
                        .cast(PG_DTYPE_FLOAT16)
                        .pow(8)
                        .to_vector<float>();
  EXPECT_EQ(half, (std::vector<float>{1584.0f, 1624.0f, 104.5f}));
  const auto bf = Tensor(std::vector<float>{2.140625f, 1.0234375f, 2.953125f})
                      .cast(PG_DTYPE_BFLOAT16)
                      .pow(5)
                      .to_vector<float>();
  EXPECT_EQ(bf, (std::vector<float>{45.0f, 1.125f, 225.0f}));
  const Tensor x(std::vector<float>{0.8119087815284729f, 1.3140524625778198f, 1.6325987577438354f});
  EXPECT_EQ(x.pow(8).to_vector<float>(),
            (std::vector<float>{0.18882431089878082f, 8.889997482299805f, 50.47027587890625f}));
  const Tensor y(std::vector<float>{2.9418978691101074f, 1.6717865467071533f, 0.8005737662315369f});
  EXPECT_EQ(y.pow(-3).to_vector<float>(),
            (std::vector<float>{0.039275094866752625f, 0.21402156352996826f, 1.9489285945892334f}));
  // The gradient at 0 stays torch's n x^(n-1): 0 for x**4 (not NaN).
  const Tensor z(std::vector<float>{0.0f, 2.0f});
  EXPECT_EQ(Tensor::gradient(z.pow(4).sum(), {z})[0].to_vector<float>(),
            (std::vector<float>{0.0f, 32.0f}));
}

}  // namespace
