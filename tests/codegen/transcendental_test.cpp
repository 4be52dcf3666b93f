// EXP2, LOG2 and SIN decomposed into ALU ops (PG_CAP_DECOMPOSE_TRANSCENDENTAL) and run on the
// cpu, compared with the C library over a sweep and the edge values.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "harness.hpp"

namespace polygrad_test {
namespace {

using polygrad::range;

template <typename T>
std::vector<T> inputs() {
  const T inf = std::numeric_limits<T>::infinity();
  std::vector<T> v = {T(0),
                      T(-0.0),
                      T(1),
                      T(-1),
                      T(0.5),
                      T(2),
                      T(3),
                      T(1e-40),
                      T(1e-30),
                      T(-1e-30),
                      T(1e30),
                      T(-1e30),
                      inf,
                      -inf,
                      std::numeric_limits<T>::quiet_NaN(),
                      std::numeric_limits<T>::denorm_min(),
                      std::numeric_limits<T>::min(),
                      std::numeric_limits<T>::max(),
                      T(127.9),
                      T(128),
                      T(-149),
                      T(-150),
                      T(1023.5),
                      T(-1074),
                      T(-1075),
                      T(100),
                      T(-100),
                      T(1e4),
                      T(-1e5),
                      T(3.14159265358979),
                      T(1.5707963267948966),
                      T(1e22),
                      T(-1e22),
                      T(1e300),
                      T(-1e300),
                      T(6381956970095103.0 * 0x1p797),  // the double closest to a multiple of pi/2
                      T(0x1p23),
                      T(0x1p23 + 1),
                      T(-0x1p23 - 0.5),
                      T(0x1.fffffep127)};
  for (double x = 1e9; x < 1e308; x *= 37.1) v.push_back(T(x));
  for (double x = 0x1p22; x < 0x1p25; x += 0x1p19 + 0.25) v.push_back(T(-x));
  for (double x = -200; x < 200; x += 0.37) v.push_back(T(x));
  for (double x = 1e-9; x < 1e9; x *= 1.7) v.push_back(T(x));
  for (double x = -1000; x < 1000; x += 3.3) v.push_back(T(x));
  return v;
}

/// Distance in units in the last place (NaN = NaN and inf = inf give 0).
template <typename T>
double ulps(T got, T want) {
  if (std::isnan(want)) return std::isnan(got) ? 0 : INFINITY;
  if (std::isinf(want) || std::isinf(got)) return got == want ? 0 : INFINITY;
  if (got == want) return 0;
  T scale = std::max(std::fabs(want), std::numeric_limits<T>::min());
  return std::fabs(double(got) - double(want)) / double(std::nextafter(scale, INFINITY) - scale);
}

/// e^x in long double, T's nearest: the reference for EXP2(x * log2(e)).
template <typename T>
T exp_ref(T x) {
  return static_cast<T>(std::exp(static_cast<long double>(x)));
}

template <typename T>
void check(DType dt, const polygrad::codegen::Target& target, double max_ulps_exp_log,
           double max_ulps_sin, double sin_limit) {
  std::vector<T> x = inputs<T>();
  const int64_t n = static_cast<int64_t>(x.size());
  UOpRef r = range(idx(n), 0);
  UOpRef in = global(4, dt);
  UOpRef v = load(in, r);
  // e^x as Tensor::exp builds it, x * log2(e) then EXP2: decomposed from x itself.
  UOpRef ex = polygrad::alu(Op::EXP2, {v * polygrad::const_float(dt, 1.4426950408889634)});
  UOpRef ast =
      sink({store(global(0, dt), r, polygrad::alu(Op::EXP2, {v})),
            store(global(1, dt), r, polygrad::alu(Op::LOG2, {v})),
            store(global(2, dt), r, polygrad::alu(Op::SIN, {v})), store(global(3, dt), r, ex)});
  Compiled c = compile(ast, target);
  for (const pg_instruction& i : c.kernel.instructions)
    ASSERT_TRUE(i.op != PG_OP_EXP2 && i.op != PG_OP_LOG2 && i.op != PG_OP_SIN)
        << "a transcendental op was left in the program";
  std::vector<HostBuf> bufs{HostBuf::zeros<T>(n), HostBuf::zeros<T>(n), HostBuf::zeros<T>(n),
                            HostBuf::zeros<T>(n), HostBuf::of(x)};
  run(c, bufs);
  std::vector<T> e = bufs[0].as<T>(), l = bufs[1].as<T>(), s = bufs[2].as<T>();
  std::vector<T> xe = bufs[3].as<T>();
  double worst[4] = {0, 0, 0, 0};
  for (int64_t i = 0; i < n; ++i) {
    double de = ulps(e[i], std::exp2(x[i])), dl = ulps(l[i], std::log2(x[i]));
    double dx = ulps(xe[i], exp_ref(x[i]));
    EXPECT_LE(de, max_ulps_exp_log) << "exp2(" << x[i] << ") = " << e[i];
    EXPECT_LE(dl, max_ulps_exp_log) << "log2(" << x[i] << ") = " << l[i];
    // (Rounding x * log2(e) first erred by up to |x| ulps: 62 at x = 80 in float32.)
    EXPECT_LE(dx, max_ulps_exp_log) << "exp(" << x[i] << ") = " << xe[i];
    worst[0] = std::max(worst[0], de);
    worst[1] = std::max(worst[1], dl);
    worst[3] = std::max(worst[3], dx);
    T want = std::sin(x[i]);
    if (!std::isfinite(x[i])) {
      EXPECT_TRUE(std::isnan(s[i])) << "sin(" << x[i] << ") = " << s[i];
    } else if (std::fabs(x[i]) <= sin_limit) {
      // Absolute error against 1 ulp of 1: near a zero of sin the reduction's error dominates.
      double err =
          std::fabs(double(s[i]) - double(want)) / double(std::numeric_limits<T>::epsilon());
      double rel = ulps(s[i], want);
      double d = std::min(err, rel);
      EXPECT_LE(d, max_ulps_sin) << "sin(" << x[i] << ") = " << s[i] << ", want " << want;
      worst[2] = std::max(worst[2], d);
    }
  }
  std::printf("worst ulps: exp2 %.2f log2 %.2f sin %.2f exp %.2f\n", worst[0], worst[1], worst[2],
              worst[3]);
}

polygrad::codegen::Target decomposing() {
  polygrad::codegen::Target t = cpu_target();
  t.caps.flags |= PG_CAP_DECOMPOSE_TRANSCENDENTAL;
  return t;
}

TEST(Transcendental, Float32) {
  check<float>(dtypes::float32, decomposing(), 2.0, 1.0, INFINITY);
}

TEST(Transcendental, Float64) {
  check<double>(dtypes::float64, decomposing(), 4.0, 4.0, INFINITY);
}

TEST(Transcendental, Float32SinWithoutFloat64) {
  polygrad::codegen::Target t = decomposing();
  t.caps.dtype_mask &= ~(uint64_t{1} << PG_DTYPE_FLOAT64);
  check<float>(dtypes::float32, t, 2.0, 2.0, 1000);
}

}  // namespace
}  // namespace polygrad_test
