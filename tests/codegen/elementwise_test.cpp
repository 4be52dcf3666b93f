// Elementwise kernels: dtypes, broadcast-style index math and gated (padded) loads.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>

#include "harness.hpp"

namespace polygrad_test {
namespace {

using polygrad::range;

TEST(Elementwise, MulAddFloat32) {
  check_mul_add(1000);
}

TEST(Elementwise, BoolLogic) {
  const int64_t n = 37;
  UOpRef r = range(idx(n), 0);
  UOpRef o = global(0, dtypes::bool_), a = global(1, dtypes::bool_), b = global(2, dtypes::bool_);
  UOpRef x = load(a, r), y = load(b, r);
  // (a xor b) or not(a), and a comparison with the index folded in
  UOpRef v = polygrad::alu(Op::OR, {polygrad::alu(Op::XOR, {x, y}), polygrad::alu(Op::NOT, {x})});
  v = polygrad::alu(Op::AND, {v, polygrad::lt(r, idx(30))});
  std::vector<uint8_t> va(n), vb(n);
  for (int64_t i = 0; i < n; ++i) {
    va[i] = i % 3 == 0;
    vb[i] = i % 2 == 0;
  }
  std::vector<HostBuf> bufs{HostBuf::zeros<uint8_t>(n), HostBuf::of(va), HostBuf::of(vb)};
  lower_and_run(sink({store(o, r, v)}), bufs);
  std::vector<uint8_t> out = bufs[0].as<uint8_t>();
  for (int64_t i = 0; i < n; ++i) {
    bool want = ((va[i] != vb[i]) || !va[i]) && i < 30;
    ASSERT_EQ(out[i], want ? 1 : 0) << "element " << i;
  }
}

TEST(Elementwise, Int8Wraps) {
  const int64_t n = 256;
  UOpRef r = range(idx(n), 0);
  UOpRef o = global(0, dtypes::int8), a = global(1, dtypes::int8);
  UOpRef x = load(a, r);
  UOpRef v = x * polygrad::const_int(dtypes::int8, 3) + polygrad::const_int(dtypes::int8, 100);
  std::vector<int8_t> va(n);
  for (int64_t i = 0; i < n; ++i) va[i] = static_cast<int8_t>(i - 128);
  std::vector<HostBuf> bufs{HostBuf::zeros<int8_t>(n), HostBuf::of(va)};
  lower_and_run(sink({store(o, r, v)}), bufs);
  std::vector<int8_t> out = bufs[0].as<int8_t>();
  for (int64_t i = 0; i < n; ++i)
    ASSERT_EQ(out[i], static_cast<int8_t>(static_cast<uint8_t>(va[i] * 3 + 100))) << i;
}

/// float16 bits of a value exactly representable in half (normal or zero).
uint16_t half_bits(float f) {
  if (f == 0.0f) return std::signbit(f) ? 0x8000 : 0;
  int e = 0;
  float m = std::frexp(std::fabs(f), &e);  // f = m * 2^e, m in [0.5, 1)
  uint16_t mant = static_cast<uint16_t>(std::ldexp(m, 11)) & 0x3ff;
  return static_cast<uint16_t>((f < 0 ? 0x8000 : 0) | ((e - 1 + 15) << 10) | mant);
}

TEST(Elementwise, Float16MulAdd) {
  const int64_t n = 64;
  UOpRef r = range(idx(n), 0);
  UOpRef o = global(0, dtypes::float16), a = global(1, dtypes::float16),
         b = global(2, dtypes::float16);
  UOpRef v = load(a, r) * load(b, r) + polygrad::const_float(dtypes::float16, 0.5);
  std::vector<uint16_t> va(n), vb(n), want(n);
  for (int64_t i = 0; i < n; ++i) {
    float x = static_cast<float>(i % 9) - 4.0f, y = 0.25f * static_cast<float>(i % 6);
    va[i] = half_bits(x);
    vb[i] = half_bits(y);
    want[i] = half_bits(x * y + 0.5f);
  }
  std::vector<HostBuf> bufs{HostBuf::zeros<uint16_t>(n), HostBuf::of(va), HostBuf::of(vb)};
  lower_and_run(sink({store(o, r, v)}), bufs);
  std::vector<uint16_t> out = bufs[0].as<uint16_t>();
  for (int64_t i = 0; i < n; ++i) ASSERT_EQ(out[i], want[i]) << "element " << i;
}

TEST(Elementwise, Float64DivSqrtAndCast) {
  const int64_t n = 100;
  UOpRef r = range(idx(n), 0);
  UOpRef o = global(0, dtypes::float64), a = global(1, dtypes::float64),
         i32 = global(2, dtypes::int32);
  UOpRef x = load(a, r);
  UOpRef v = polygrad::alu(Op::SQRT, {x}) / (x + polygrad::const_float(dtypes::float64, 1.0)) +
             polygrad::cast(load(i32, r), dtypes::float64);
  std::vector<double> va(n);
  std::vector<int32_t> vi(n);
  for (int64_t i = 0; i < n; ++i) {
    va[i] = 0.37 * static_cast<double>(i);
    vi[i] = static_cast<int32_t>(i * 1000 - 50000);
  }
  std::vector<HostBuf> bufs{HostBuf::zeros<double>(n), HostBuf::of(va), HostBuf::of(vi)};
  lower_and_run(sink({store(o, r, v)}), bufs);
  std::vector<double> out = bufs[0].as<double>();
  for (int64_t i = 0; i < n; ++i)
    ASSERT_EQ(out[i], std::sqrt(va[i]) / (va[i] + 1.0) + static_cast<double>(vi[i])) << i;
}

TEST(Elementwise, BroadcastByDivMod) {
  // out[r] = a[r / 10] + b[r % 10] for r < 60: a (6) broadcast along columns, b (10) along rows.
  UOpRef r = range(idx(60), 0);
  UOpRef o = global(0, dtypes::int32), a = global(1, dtypes::int32), b = global(2, dtypes::int32);
  UOpRef ast = sink({store(o, r, load(a, r / 10) + load(b, r % 10))});
  std::vector<int32_t> va{1, 2, 3, 4, 5, 6}, vb(10);
  for (int i = 0; i < 10; ++i) vb[i] = 100 * i;
  std::vector<HostBuf> bufs{HostBuf::zeros<int32_t>(60), HostBuf::of(va), HostBuf::of(vb)};
  lower_and_run(ast, bufs);
  std::vector<int32_t> out = bufs[0].as<int32_t>();
  for (int i = 0; i < 60; ++i) ASSERT_EQ(out[i], va[i / 10] + vb[i % 10]) << "element " << i;
}

TEST(Elementwise, TwoRangesOuterProduct) {
  UOpRef i = range(idx(9), 0), j = range(idx(13), 1);
  UOpRef o = global(0, dtypes::float32), a = global(1, dtypes::float32),
         b = global(2, dtypes::float32);
  UOpRef ast = sink({store(o, i * 13 + j, load(a, i) * load(b, j))});
  std::vector<float> va(9), vb(13);
  for (int k = 0; k < 9; ++k) va[k] = static_cast<float>(k) - 4.0f;
  for (int k = 0; k < 13; ++k) vb[k] = 0.5f * static_cast<float>(k);
  std::vector<HostBuf> bufs{HostBuf::zeros<float>(9 * 13), HostBuf::of(va), HostBuf::of(vb)};
  lower_and_run(ast, bufs);
  std::vector<float> out = bufs[0].as<float>();
  for (int x = 0; x < 9; ++x)
    for (int y = 0; y < 13; ++y) ASSERT_EQ(out[x * 13 + y], va[x] * vb[y]) << x << "," << y;
}

TEST(Elementwise, GatedLoadPads) {
  // out[r] = x[r - 2] where 2 <= r < 12, else -1: a pad of 2 before and 3 after a length-10 x.
  UOpRef r = range(idx(15), 0);
  UOpRef o = global(0, dtypes::float32), x = global(1, dtypes::float32);
  UOpRef gate = polygrad::alu(Op::AND, {polygrad::lt(idx(1), r), polygrad::lt(r, idx(12))});
  UOpRef in = UOp::make(Op::INDEX, x->dtype(), {x, r - 2});
  UOpRef v = UOp::make(Op::LOAD, dtypes::float32,
                       {in, polygrad::const_float(dtypes::float32, -1.0), gate});
  std::vector<float> vx(10);
  for (int k = 0; k < 10; ++k) vx[k] = 1.5f * static_cast<float>(k + 1);
  std::vector<HostBuf> bufs{HostBuf::zeros<float>(15), HostBuf::of(vx)};
  lower_and_run(sink({store(o, r, v)}), bufs);
  std::vector<float> out = bufs[0].as<float>();
  for (int k = 0; k < 15; ++k)
    ASSERT_EQ(out[k], (k >= 2 && k < 12) ? vx[k - 2] : -1.0f) << "element " << k;
}

}  // namespace
}  // namespace polygrad_test
