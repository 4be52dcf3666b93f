// log1p, expm1, hyperbolic and inverse trigonometric functions against the C library's, in
// ulps, near 0, around 1 and far out; masks and selections against hand-derived values.
#include <cmath>
#include <limits>
#include <random>

#include "harness.hpp"

namespace {

using polygrad::Tensor;

// |got - want| in units of want's last place in T (0 when both are NaN or equal infinities).
template <class T>
double ulps(T got, double want) {
  if (std::isnan(want)) return std::isnan(got) ? 0 : INFINITY;
  const double w = static_cast<double>(static_cast<T>(want));  // (past T's range: infinite)
  if (std::isinf(w)) return static_cast<double>(got) == w ? 0 : INFINITY;
  const double ulp = std::nextafter(static_cast<T>(std::fabs(w)), std::numeric_limits<T>::max()) -
                     static_cast<T>(std::fabs(w));
  return std::fabs(static_cast<double>(got) - want) /
         std::max(ulp, static_cast<double>(std::numeric_limits<T>::denorm_min()));
}

// v times k, and the zeros of cos near 1.57, 4.71 and 1000.5 pi in float32 and float64.
std::vector<double> scaled(const std::vector<double>& v, double k) {
  std::vector<double> out;
  for (double x : v) out.push_back(x * k);
  for (double z : {0.5, 1.5, 1000.5}) {
    out.push_back(z * 3.141592653589793);
    out.push_back(static_cast<float>(z * 3.141592653589793));
  }
  return out;
}

struct Fn {
  const char* name;
  Tensor (*op)(const Tensor&);
  double (*ref)(double);
  std::vector<double> inputs;
};

std::vector<Fn> functions() {
  std::mt19937_64 gen(3);
  std::normal_distribution<double> n(0.0, 3.0);
  std::uniform_real_distribution<double> u(-1.0, 1.0), e(-30.0, 2.0);
  std::vector<double> wide, unit, above;
  for (int i = 0; i < 500; ++i) {
    wide.push_back(n(gen));
    wide.push_back(std::copysign(std::pow(10.0, e(gen)), u(gen)));
    unit.push_back(u(gen));
    above.push_back(1.0 + std::pow(10.0, 12.0 * (u(gen) + 1.0) - 8.0));
  }
  for (double v : {0.0, 1e-9, -1e-9, 0.5, -0.5, 20.0, -20.0, 50.0, -50.0}) wide.push_back(v);
  for (double v : {1.0, -1.0, 0.0, 0.999999, -0.999999, 1e-9, 1.5, -1.5}) unit.push_back(v);
  above.insert(above.end(), {1.0, 0.5, 1e20});
  std::vector<double> above_minus1;
  for (double v : wide) above_minus1.push_back(std::fabs(v) - 0.999999);
  return {
      {"log1p", [](const Tensor& x) { return x.log1p(); }, [](double v) { return std::log1p(v); },
       above_minus1},
      {"expm1", [](const Tensor& x) { return x.expm1(); }, [](double v) { return std::expm1(v); },
       wide},
      {"sinh", [](const Tensor& x) { return x.sinh(); }, [](double v) { return std::sinh(v); },
       wide},
      {"cosh", [](const Tensor& x) { return x.cosh(); }, [](double v) { return std::cosh(v); },
       wide},
      {"asinh", [](const Tensor& x) { return x.asinh(); }, [](double v) { return std::asinh(v); },
       wide},
      {"acosh", [](const Tensor& x) { return x.acosh(); }, [](double v) { return std::acosh(v); },
       above},
      {"atanh", [](const Tensor& x) { return x.atanh(); }, [](double v) { return std::atanh(v); },
       unit},
      {"exp", [](const Tensor& x) { return x.exp(); }, [](double v) { return std::exp(v); },
       scaled(wide, 15.0)},
      {"sigmoid", [](const Tensor& x) { return x.sigmoid(); },
       [](double v) { return static_cast<double>(1.0L / (1.0L + std::exp(-(long double)v))); },
       scaled(wide, 15.0)},
      {"tanh", [](const Tensor& x) { return x.tanh(); }, [](double v) { return std::tanh(v); },
       wide},
      {"cos", [](const Tensor& x) { return x.cos(); }, [](double v) { return std::cos(v); },
       scaled(wide, 1000.0)},
      {"tan", [](const Tensor& x) { return x.tan(); }, [](double v) { return std::tan(v); }, wide},
      {"atan", [](const Tensor& x) { return x.atan(); }, [](double v) { return std::atan(v); },
       wide},
      {"asin", [](const Tensor& x) { return x.asin(); }, [](double v) { return std::asin(v); },
       unit},
      {"acos", [](const Tensor& x) { return x.acos(); }, [](double v) { return std::acos(v); },
       unit},
  };
}

// The bounds (8 ulps in float64, 4 in float32) hold the measured worst cases with some room.
// (Until exp was decomposed from x itself, exp and what it composes erred by about |x| ulps:
// 20 at expm1(44.1) in float32, 82 at sinh(94) in float64.)

TEST(SpecialFunctions, Float64WithinAFewUlps) {
  for (const Fn& f : functions()) {
    const auto got = f.op(Tensor(f.inputs)).to_vector<double>();
    for (size_t i = 0; i < f.inputs.size(); ++i) {
      const double x = f.inputs[i];
      EXPECT_LE(ulps<double>(got[i], f.ref(x)), 8)
          << f.name << "(" << x << ") = " << got[i] << ", want " << f.ref(x);
    }
  }
}

TEST(SpecialFunctions, Float32WithinAFewUlps) {
  for (const Fn& f : functions()) {
    std::vector<float> x;
    for (double v : f.inputs) x.push_back(static_cast<float>(v));
    const auto got = f.op(Tensor(x)).to_vector<float>();
    for (size_t i = 0; i < x.size(); ++i)
      EXPECT_LE(ulps<float>(got[i], f.ref(x[i])), 4)
          << f.name << "(" << x[i] << ") = " << got[i] << ", want " << f.ref(x[i]);
  }
}

TEST(SpecialFunctions, GradientsAtZeroAreTheDerivatives) {
  // Selects, not abs(), give the odd functions their slope at 0; expm1's and log1p's safe
  // branches keep NaN out of the gradient there.
  Tensor x(std::vector<float>{0.0f});
  auto d = [&](Tensor (*f)(const Tensor&)) {
    return Tensor::gradient(f(x).sum(), {x})[0].item<float>();
  };
  EXPECT_EQ(d([](const Tensor& t) { return t.sinh(); }), 1.0f);
  EXPECT_EQ(d([](const Tensor& t) { return t.cosh(); }), 0.0f);
  EXPECT_EQ(d([](const Tensor& t) { return t.asinh(); }), 1.0f);
  EXPECT_EQ(d([](const Tensor& t) { return t.atan(); }), 1.0f);
  EXPECT_EQ(d([](const Tensor& t) { return t.expm1(); }), 1.0f);
  EXPECT_EQ(d([](const Tensor& t) { return t.log1p(); }), 1.0f);
  EXPECT_EQ(d([](const Tensor& t) { return t.softsign(); }), 1.0f);
  EXPECT_EQ(d([](const Tensor& t) { return t.tanh(); }), 1.0f);
  // -sin(0), not the cos of a rounded pi/2 (sin(pi/2 - x)'s gradient was -4.4e-8 here).
  EXPECT_EQ(d([](const Tensor& t) { return t.cos(); }), 0.0f);
}

TEST(SpecialFunctions, GradientsAtTheDomainsEdgesAreTheDerivatives) {
  // The derivatives' limits, as torch gives them: 1/sqrt(1 - x^2) at |x| = 1 is inf, and so
  // on; no discarded branch (e^x of a large x in elu's) may turn them into NaN.
  const float inf = INFINITY;
  auto d = [](Tensor (*f)(const Tensor&), std::vector<float> x) {
    Tensor t(x);
    return Tensor::gradient(f(t).sum(), {t})[0].to_vector<float>();
  };
  using V = std::vector<float>;
  EXPECT_EQ(d([](const Tensor& t) { return t.asin(); }, {-1, 1}), (V{inf, inf}));
  EXPECT_EQ(d([](const Tensor& t) { return t.acos(); }, {-1, 1}), (V{-inf, -inf}));
  EXPECT_EQ(d([](const Tensor& t) { return t.atanh(); }, {-1, 1}), (V{inf, inf}));
  EXPECT_EQ(d([](const Tensor& t) { return t.acosh(); }, {1}), (V{inf}));
  EXPECT_EQ(d([](const Tensor& t) { return t.log1p(); }, {-1, inf, -2}), (V{inf, 0, -1}));
  EXPECT_EQ(d([](const Tensor& t) { return t.elu(); }, {inf, -inf}), (V{1, 0}));
  EXPECT_EQ(d([](const Tensor& t) { return t.celu(); }, {inf}), (V{1}));
  EXPECT_FLOAT_EQ(d([](const Tensor& t) { return t.selu(); }, {inf})[0], 1.0507009873554805f);
}

TEST(SpecialFunctions, CosGradientKeepsItsDigitsNearTheZerosOfSin) {
  // d cos / dx = -sin x, relative to sin's own (small) value at multiples of pi and near 0.
  const std::vector<float> x = {1e-6f, -3e-4f, 3.14159274f, 6.28318548f, -9.42477798f, 2.5f};
  Tensor t(x);
  const auto g = Tensor::gradient(t.cos().sum(), {t})[0].to_vector<float>();
  for (size_t i = 0; i < x.size(); ++i)
    EXPECT_LE(ulps<float>(g[i], -std::sin(static_cast<double>(x[i]))), 4)
        << "cos'(" << x[i] << ") = " << g[i];
}

TEST(Masks, TriangleFillOneHotAnyAllRollLerp) {
  Tensor m(std::vector<int32_t>{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, {3, 4});
  EXPECT_EQ(m.tril().to_vector<int32_t>(),
            (std::vector<int32_t>{1, 0, 0, 0, 5, 6, 0, 0, 9, 10, 11, 0}));
  EXPECT_EQ(m.triu(1).to_vector<int32_t>(),
            (std::vector<int32_t>{0, 2, 3, 4, 0, 0, 7, 8, 0, 0, 0, 12}));
  EXPECT_EQ(m.masked_fill(m % 3 == 0, -1).to_vector<int32_t>(),
            (std::vector<int32_t>{1, 2, -1, 4, 5, -1, 7, 8, -1, 10, 11, -1}));
  EXPECT_EQ(Tensor(std::vector<int32_t>{2, 0, 1}).one_hot().to_vector<int32_t>(),
            (std::vector<int32_t>{0, 0, 1, 1, 0, 0, 0, 1, 0}));
  EXPECT_EQ((m > 11).any({1}).to_vector<uint8_t>(), (std::vector<uint8_t>{0, 0, 1}));
  EXPECT_EQ((m > 4).all({1}).to_vector<uint8_t>(), (std::vector<uint8_t>{0, 1, 1}));
  EXPECT_EQ(m.roll({1, -1}, {0, 1}).to_vector<int32_t>(),
            (std::vector<int32_t>{10, 11, 12, 9, 2, 3, 4, 1, 6, 7, 8, 5}));
  EXPECT_EQ(m.roll({5}).to_vector<int32_t>(),
            (std::vector<int32_t>{8, 9, 10, 11, 12, 1, 2, 3, 4, 5, 6, 7}));
  Tensor a(std::vector<float>{1, 2}), b(std::vector<float>{3, 10});
  EXPECT_EQ(a.lerp(b, 0.25).to_vector<float>(), (std::vector<float>{1.5f, 4.0f}));
  EXPECT_EQ(a.lerp(b, 1.0).to_vector<float>(), (std::vector<float>{3, 10}));
  EXPECT_EQ(a.outer(b).to_vector<float>(), (std::vector<float>{3, 10, 6, 20}));
}

// torch's out-of-place masked_fill (and tinygrad's mask.where(value, x)) broadcasts the tensor
// and the mask against each other: a (3,) row filled by a (2, 3) mask is (2, 3).
TEST(Masks, MaskedFillBroadcastsTensorAndMask) {
  Tensor row(std::vector<float>{0.5f, -1.5f, 2.5f});
  Tensor mask(std::vector<bool>{true, false, true, false, true, true}, {2, 3});
  Tensor r = row.masked_fill(mask, 0);
  EXPECT_EQ(r.shape(), (Tensor::Shape{2, 3}));
  EXPECT_EQ(r.to_vector<float>(), (std::vector<float>{0, -1.5f, 0, 0.5f, 0, 0}));
  Tensor col = Tensor(std::vector<int32_t>{1, 2}, {2, 1}).masked_fill(mask, 7);
  EXPECT_EQ(col.shape(), (Tensor::Shape{2, 3}));
  EXPECT_EQ(col.to_vector<int32_t>(), (std::vector<int32_t>{7, 1, 7, 2, 7, 7}));
  tensor_test::expect_user_error(
      [&] {
        row.masked_fill(Tensor(std::vector<bool>{true, false}), 1);
      },
      {"masked_fill", "(3,)", "(2,)"});
}

TEST(SpecialFunctions, LogsumexpOfInfiniteRows) {
  // A row of -inf sums nothing (-inf); a row holding +inf is +inf; neither is inf - inf = NaN.
  const double inf = std::numeric_limits<double>::infinity();
  const Tensor x(std::vector<float>{-INFINITY, -INFINITY, INFINITY, 0.0f, -INFINITY, 1.0f}, {3, 2});
  tensor_test::expect_values(x.logsumexp(1), {3}, {-inf, inf, 1.0});
  // Finite rows keep the softmax as their gradient.
  const Tensor y = Tensor(std::vector<float>{0.5f, -1.0f, 2.0f}).requires_grad(true);
  y.logsumexp(0).backward();
  const double s = std::exp(0.5) + std::exp(-1.0) + std::exp(2.0);
  tensor_test::expect_values(
      *y.grad(), {3}, {std::exp(0.5) / s, std::exp(-1.0) / s, std::exp(2.0) / s}, 1e-7, 1e-6);
}

TEST(SpecialFunctions, HalfExpWithinAnUlp) {
  // e^x in float16 and bfloat16, against the exactly rounded e^x of the same inputs (the
  // product x * log2(e) rounded to the half type first was up to 10 ulps off).
  std::vector<float> xs;
  for (int i = -1000; i <= 1100; ++i) xs.push_back(static_cast<float>(i) / 100.0f);
  for (pg_dtype t : {PG_DTYPE_FLOAT16, PG_DTYPE_BFLOAT16}) {
    const int mantissa = t == PG_DTYPE_FLOAT16 ? 10 : 7;
    const Tensor x = Tensor(xs).cast(t);
    const std::vector<float> in = x.cast(PG_DTYPE_FLOAT32).to_vector<float>();
    const std::vector<float> got = x.exp().cast(PG_DTYPE_FLOAT32).to_vector<float>();
    for (size_t i = 0; i < in.size(); ++i) {
      const double want = std::exp(static_cast<double>(in[i]));
      const double ulp = std::ldexp(1.0, std::ilogb(want) - mantissa);
      ASSERT_LE(std::fabs(got[i] - want), ulp) << "dtype " << t << ", exp(" << in[i] << ")";
    }
  }
}

TEST(SpecialFunctions, SoftplusSecondDerivativeIsSmoothAtZero) {
  // d2/dx2 log(1 + e^(bx)) / b = b s (1 - s), s = sigmoid(bx): b/4 at 0.
  for (double beta : {1.0, 2.0}) {
    for (double at : {0.0, 0.5, -3.0}) {
      const Tensor x = Tensor(std::vector<float>{static_cast<float>(at)}).requires_grad(true);
      const Tensor d1 = Tensor::gradient(x.softplus(beta).sum(), {x})[0];
      const Tensor d2 = Tensor::gradient(d1.sum(), {x})[0];
      const double s = 1.0 / (1.0 + std::exp(-beta * at));
      tensor_test::expect_values(d1, {1}, {s}, 1e-6, 1e-6);
      tensor_test::expect_values(d2, {1}, {beta * s * (1 - s)}, 1e-6, 1e-5);
    }
  }
  // Past bx = 20 it is x, with gradient 1, and no NaN from the branch not taken.
  const Tensor y = Tensor(std::vector<float>{30.0f, 1000.0f}).requires_grad(true);
  tensor_test::expect_values(Tensor::gradient(y.softplus().sum(), {y})[0], {2}, {1, 1}, 0, 0);
  tensor_test::expect_values(y.softplus(), {2}, {30, 1000}, 0, 0);
}

TEST(SpecialFunctions, HalfStatisticsAreWorkedInFloat32) {
  // 0 .. 299 in float16: their sum of squared deviations (2.25e6) is past float16's 65504.
  const Tensor x = Tensor::arange(0.0, 300.0, 1.0, PG_DTYPE_FLOAT16);
  const double var = 300.0 * 301.0 / 12.0;  // (n^2 - 1) / 12 * n / (n - 1) with n = 300
  tensor_test::expect_values(x.var().cast(PG_DTYPE_FLOAT32), {}, {var}, 0, 1e-3);
  tensor_test::expect_values(x.std().cast(PG_DTYPE_FLOAT32), {}, {std::sqrt(var)}, 0, 1e-3);
  tensor_test::expect_values(x.mean().cast(PG_DTYPE_FLOAT32), {}, {149.5}, 0, 1e-3);
  const std::vector<float> ln = x.layernorm({-1}).cast(PG_DTYPE_FLOAT32).to_vector<float>();
  const double sd = std::sqrt(var * 299.0 / 300.0);
  EXPECT_NEAR(ln.front(), -149.5 / sd, 2e-3);
  EXPECT_NEAR(ln.back(), 149.5 / sd, 2e-3);
}

}  // namespace
