// Floor division and remainder (// and %) against Python's definitions, written out here:
// exact for every int sign, zero divisors and INT_MIN / -1 included, and bit-exact for
// float64 against CPython's float_divmod (fmod-based).
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>

#include "harness.hpp"

namespace {

using polygrad::Tensor;

// CPython's float_divmod (Objects/floatobject.c), restated: the remainder from fmod, moved to
// the divisor's sign; the quotient from the exact a - mod, rounded to the nearest integer.
std::pair<double, double> python_divmod(double a, double b) {
  double mod = std::fmod(a, b);
  if (b == 0) return {a / b, mod};  // (Python raises; torch gives these)
  double div = (a - mod) / b;
  if (mod != 0) {
    if ((b < 0) != (mod < 0)) {
      mod += b;
      div -= 1.0;
    }
  } else {
    mod = std::copysign(0.0, b);
  }
  double floordiv = div;
  if (div != 0) {
    floordiv = std::floor(div);
    if (div - floordiv > 0.5) floordiv += 1.0;
  } else {
    floordiv = std::copysign(0.0, a / b);
  }
  return {floordiv, mod};
}

TEST(FloorDivision, IntsFollowPythonForEverySign) {
  std::vector<int32_t> a, b;
  for (int32_t x = -20; x <= 20; ++x)
    for (int32_t y = -6; y <= 6; ++y) {
      a.push_back(x);
      b.push_back(y);
    }
  const int32_t lo = std::numeric_limits<int32_t>::min();
  a.insert(a.end(), {lo, lo, lo, 7});
  b.insert(b.end(), {-1, 1, 2, lo});
  const auto q = Tensor(a).floordiv(Tensor(b)).to_vector<int32_t>();
  const auto r = (Tensor(a) % Tensor(b)).to_vector<int32_t>();
  for (size_t i = 0; i < a.size(); ++i) {
    const int64_t x = a[i], y = b[i];
    int64_t want_q = 0, want_r = 0;  // a zero divisor gives 0 (numpy's)
    if (y != 0) {
      want_q = x / y - ((x % y != 0) && ((x % y < 0) != (y < 0)) ? 1 : 0);
      want_r = x - want_q * y;
    }
    // INT_MIN // -1 wraps to INT_MIN, as int32 arithmetic does in torch and numpy.
    EXPECT_EQ(q[i], static_cast<int32_t>(static_cast<uint32_t>(want_q))) << x << " // " << y;
    EXPECT_EQ(r[i], want_r) << x << " % " << y;
  }
}

TEST(FloorDivision, Int64ScalarsAndReflectedOperands) {
  const std::vector<int64_t> a = {-7, 7, std::numeric_limits<int64_t>::min(), 0};
  EXPECT_EQ(Tensor(a).floordiv(-2).to_vector<int64_t>(),
            (std::vector<int64_t>{3, -4, std::numeric_limits<int64_t>::min() / -2, 0}));
  EXPECT_EQ((Tensor(a) % 3).to_vector<int64_t>(), (std::vector<int64_t>{2, 1, 1, 0}));
  EXPECT_EQ((10 % Tensor(std::vector<int64_t>{3, -3, 4, 0})).to_vector<int64_t>(),
            (std::vector<int64_t>{1, -2, 2, 0}));
}

TEST(FloorDivision, Float64IsBitExactWithPython) {
  std::mt19937_64 gen(5);
  std::normal_distribution<double> n(0.0, 1.0);
  std::vector<double> a = {1.0, -1.0, 7.5, -7.5, 0.0, -1e-300, 5.0, -5.0, 0x1p60, 1e300, 3.0};
  std::vector<double> b = {0.1, 0.1, -2.0, 2.0, 3.0, 7.0, INFINITY, INFINITY, 3.0, 3.0, 0.0};
  for (double scale : {1.0, 1e3, 1e9, 1e15, 1e25})
    for (int i = 0; i < 400; ++i) {
      a.push_back(n(gen) * scale);
      b.push_back(n(gen) * std::pow(10.0, static_cast<double>(i % 5) - 2.0));
    }
  const auto q = Tensor(a).floordiv(Tensor(b)).to_vector<double>();
  const auto r = (Tensor(a) % Tensor(b)).to_vector<double>();
  for (size_t i = 0; i < a.size(); ++i) {
    const auto [want_q, want_r] = python_divmod(a[i], b[i]);
    if (std::isnan(want_r))
      EXPECT_TRUE(std::isnan(r[i])) << a[i] << " % " << b[i];
    else
      EXPECT_EQ(r[i], want_r) << a[i] << " % " << b[i];
    // Past 2^40 Python's quotient, (a - mod) / b rounded, can miss the exact floor by one
    // (160963242276094.88 // -0.05503189246127678: Python -2924908359082087, exactly
    // -2924908359082086.6, which polygrad gives floored); the remainders agree throughout.
    if (std::fabs(a[i] / b[i]) < 0x1p40) {
      EXPECT_EQ(q[i], want_q) << a[i] << " // " << b[i];
    }
  }
}

TEST(FloorDivision, Float32RemaindersAreExact) {
  std::mt19937 gen(9);
  std::uniform_real_distribution<float> u(-1000.0f, 1000.0f), v(0.01f, 30.0f);
  std::vector<float> a, b;
  for (int i = 0; i < 2000; ++i) {
    a.push_back(u(gen));
    b.push_back(i % 2 ? v(gen) : -v(gen));
  }
  const auto q = Tensor(a).floordiv(Tensor(b)).to_vector<float>();
  const auto r = Tensor(a).mod(Tensor(b)).to_vector<float>();
  for (size_t i = 0; i < a.size(); ++i) {
    // The true floor and remainder, rounded once to float32 (torch rounds its float32
    // quotient twice, so only the remainder is compared with torch's in the fixtures).
    const auto [want_q, want_r] = python_divmod(a[i], b[i]);
    EXPECT_EQ(r[i], static_cast<float>(want_r)) << a[i] << " % " << b[i];
    EXPECT_EQ(q[i], static_cast<float>(want_q)) << a[i] << " // " << b[i];
  }
}

TEST(FloorDivision, GradientsMatchTheDefinition) {
  // d(a % b)/da = 1, d(a % b)/db = -floor(a / b); a // b is piecewise constant.
  Tensor a(std::vector<float>{5.5f, -3.25f, 7.0f}), b(std::vector<float>{2.0f, 2.0f, -3.0f});
  auto g = Tensor::gradient((a % b).sum(), {a, b});
  EXPECT_EQ(g[0].to_vector<float>(), (std::vector<float>{1, 1, 1}));
  EXPECT_EQ(g[1].to_vector<float>(), (std::vector<float>{-2, 2, 3}));
}

// An infinite dividend has no floor quotient: torch 1.13 (and Python) give NaN, and a / b
// over 0; finite over infinite is 0 or -1. float32, float64 and float16 alike; floor(inf / b)
// gave +-inf.
TEST(FloorDivision, InfiniteDividendIsNaN) {
  const std::vector<double> a = {INFINITY, -INFINITY, INFINITY, -INFINITY, INFINITY, 2.5, -2.5};
  const std::vector<double> b = {2.5, 2.5, -0.5, -1e30, 0.0, INFINITY, INFINITY};
  for (pg_dtype t : {PG_DTYPE_FLOAT32, PG_DTYPE_FLOAT64, PG_DTYPE_FLOAT16}) {
    const auto q = Tensor(a).cast(t).floordiv(Tensor(b).cast(t)).to_vector<double>();
    for (size_t i = 0; i < 4; ++i) EXPECT_TRUE(std::isnan(q[i])) << a[i] << " // " << b[i];
    EXPECT_EQ(q[4], INFINITY);
    EXPECT_EQ(q[5], 0.0);
    EXPECT_EQ(q[6], -1.0);
  }
}

}  // namespace
