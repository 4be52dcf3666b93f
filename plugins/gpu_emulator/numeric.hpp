// How the emulator holds values of each dtype: a register slot is 64 bits, integers and bool
// sign- or zero-extended to int64, floats as double rounded to their dtype after every op (so
// float16 and bfloat16 arithmetic rounds as the device's would, once per op). Memory holds the
// dtype's own bytes, little-endian.
#ifndef POLYGRAD_GPU_EMU_NUMERIC_HPP
#define POLYGRAD_GPU_EMU_NUMERIC_HPP

#include <polygrad/plugin.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

namespace polygrad::gpu_emu {

/// One lane of one thread's value.
union Slot {
  int64_t i;
  double f;
};

/// Bits of a 16-bit float with `mb` mantissa and `eb` exponent bits nearest to `x` (ties to
/// even; NaN stays NaN, overflow goes to infinity).
inline uint16_t to_small_float(double x, int mb, int eb) {
  uint64_t b;
  std::memcpy(&b, &x, 8);
  const uint32_t sign = static_cast<uint32_t>(b >> 63) << (mb + eb);
  const int e = static_cast<int>((b >> 52) & 0x7ff);
  const uint64_t m = b & 0xfffffffffffffull;
  const uint32_t max_e = (1u << eb) - 1u, inf = max_e << mb;
  if (e == 0x7ff) {
    const uint32_t payload = static_cast<uint32_t>(m >> (52 - mb));
    return static_cast<uint16_t>(sign | inf | (m ? (payload ? payload : 1u << (mb - 1)) : 0u));
  }
  if (e == 0) return static_cast<uint16_t>(sign);  // double subnormals underflow to zero
  const int E = e - 1023 + static_cast<int>(max_e >> 1);
  if (E >= static_cast<int>(max_e)) return static_cast<uint16_t>(sign | inf);
  const uint64_t full = m | (1ull << 52);
  const int shift = E > 0 ? 52 - mb : 52 - mb + 1 - E;
  if (shift > 53) return static_cast<uint16_t>(sign);
  uint64_t q = full >> shift;
  const uint64_t rem = full & ((1ull << shift) - 1ull), half = 1ull << (shift - 1);
  if (rem > half || (rem == half && (q & 1ull))) q += 1ull;
  uint64_t bits = E > 0 ? (static_cast<uint64_t>(E - 1) << mb) + q : q;
  if (bits >= inf) bits = inf;
  return static_cast<uint16_t>(sign | static_cast<uint32_t>(bits));
}

/// The value of 16-bit float bits `h` (exact; a NaN keeps its payload, so bits survive a
/// round trip through to_small_float).
inline double from_small_float(uint32_t h, int mb, int eb) {
  const uint32_t max_e = (1u << eb) - 1u, e = (h >> mb) & max_e, m = h & ((1u << mb) - 1u);
  const bool negative = (h >> (mb + eb)) & 1u;
  if (e == max_e && m != 0) {  // NaN: the payload moves to the top of the double's mantissa
    const uint64_t bits =
        uint64_t{negative} << 63 | uint64_t{0x7ff} << 52 | uint64_t{m} << (52 - mb);
    double v;
    std::memcpy(&v, &bits, 8);
    return v;
  }
  const double v =
      e == max_e
          ? std::numeric_limits<double>::infinity()
          : std::ldexp(static_cast<double>(e == 0 ? m : (m | (1u << mb))),
                       (e == 0 ? 1 : static_cast<int>(e)) - static_cast<int>(max_e >> 1) - mb);
  return negative ? -v : v;
}

/// Mantissa and exponent bits of the 16-bit float dtypes.
template <pg_dtype DT>
struct SmallFloat;
template <>
struct SmallFloat<PG_DTYPE_FLOAT16> {
  static constexpr int mantissa = 10, exponent = 5;
};
template <>
struct SmallFloat<PG_DTYPE_BFLOAT16> {
  static constexpr int mantissa = 7, exponent = 8;
};

/// Compile-time facts of a dtype and the conversions between its slot and memory forms.
template <pg_dtype DT>
struct Type {
  static constexpr bool is_float = DT == PG_DTYPE_FLOAT16 || DT == PG_DTYPE_BFLOAT16 ||
                                   DT == PG_DTYPE_FLOAT32 || DT == PG_DTYPE_FLOAT64;
  static constexpr bool is_unsigned = DT == PG_DTYPE_UINT8 || DT == PG_DTYPE_UINT16 ||
                                      DT == PG_DTYPE_UINT32 || DT == PG_DTYPE_UINT64;
  static constexpr bool is_bool = DT == PG_DTYPE_BOOL;
  static constexpr uint32_t size =
      DT == PG_DTYPE_BOOL || DT == PG_DTYPE_INT8 || DT == PG_DTYPE_UINT8 ? 1
      : DT == PG_DTYPE_INT16 || DT == PG_DTYPE_UINT16 || DT == PG_DTYPE_FLOAT16 ||
              DT == PG_DTYPE_BFLOAT16
          ? 2
      : DT == PG_DTYPE_INT32 || DT == PG_DTYPE_UINT32 || DT == PG_DTYPE_FLOAT32 ? 4
                                                                                : 8;

  /// An integer result wrapped to the dtype (bool: nonzero is 1).
  static int64_t wrap(uint64_t v) {
    if constexpr (is_bool) {
      return v != 0;
    } else if constexpr (size == 8) {
      return static_cast<int64_t>(v);
    } else if constexpr (is_unsigned) {
      return static_cast<int64_t>(v & ((uint64_t{1} << (size * 8)) - 1));
    } else {
      return static_cast<int64_t>(v << (64 - size * 8)) >> (64 - size * 8);
    }
  }

  /// A float result rounded to the dtype.
  static double round(double v) {
    if constexpr (DT == PG_DTYPE_FLOAT32) {
      return static_cast<float>(v);
    } else if constexpr (DT == PG_DTYPE_FLOAT16 || DT == PG_DTYPE_BFLOAT16) {
      constexpr int mb = SmallFloat<DT>::mantissa, eb = SmallFloat<DT>::exponent;
      return from_small_float(to_small_float(v, mb, eb), mb, eb);
    } else {
      return v;
    }
  }

  /// A value from `raw` in its slot form (ints wrapped, floats rounded: raw.f for floats).
  static Slot fix(Slot raw) {
    Slot s;
    if constexpr (is_float)
      s.f = round(raw.f);
    else
      s.i = wrap(static_cast<uint64_t>(raw.i));
    return s;
  }

  static Slot read(const unsigned char* p) {
    Slot s;
    if constexpr (DT == PG_DTYPE_FLOAT32) {
      float f;
      std::memcpy(&f, p, 4);
      s.f = f;
    } else if constexpr (DT == PG_DTYPE_FLOAT64) {
      std::memcpy(&s.f, p, 8);
    } else if constexpr (DT == PG_DTYPE_FLOAT16 || DT == PG_DTYPE_BFLOAT16) {
      uint16_t h;
      std::memcpy(&h, p, 2);
      s.f = from_small_float(h, SmallFloat<DT>::mantissa, SmallFloat<DT>::exponent);
    } else {
      uint64_t raw = 0;
      std::memcpy(&raw, p, size);
      s.i = wrap(raw);
    }
    return s;
  }

  static void write(Slot s, unsigned char* p) {
    if constexpr (DT == PG_DTYPE_FLOAT32) {
      const float f = static_cast<float>(s.f);
      std::memcpy(p, &f, 4);
    } else if constexpr (DT == PG_DTYPE_FLOAT64) {
      std::memcpy(p, &s.f, 8);
    } else if constexpr (DT == PG_DTYPE_FLOAT16 || DT == PG_DTYPE_BFLOAT16) {
      const uint16_t h = to_small_float(s.f, SmallFloat<DT>::mantissa, SmallFloat<DT>::exponent);
      std::memcpy(p, &h, 2);
    } else {
      std::memcpy(p, &s.i, size);  // little-endian: the low bytes
    }
  }
};

/// Calls `f.template operator()<DT>()` for the pg_dtype `dt` (not VOID); returns its result.
template <class F>
decltype(auto) with_dtype(uint32_t dt, F&& f) {
  switch (dt) {
    case PG_DTYPE_BOOL:
      return f.template operator()<PG_DTYPE_BOOL>();
    case PG_DTYPE_INT8:
      return f.template operator()<PG_DTYPE_INT8>();
    case PG_DTYPE_INT16:
      return f.template operator()<PG_DTYPE_INT16>();
    case PG_DTYPE_INT32:
      return f.template operator()<PG_DTYPE_INT32>();
    case PG_DTYPE_INT64:
      return f.template operator()<PG_DTYPE_INT64>();
    case PG_DTYPE_UINT8:
      return f.template operator()<PG_DTYPE_UINT8>();
    case PG_DTYPE_UINT16:
      return f.template operator()<PG_DTYPE_UINT16>();
    case PG_DTYPE_UINT32:
      return f.template operator()<PG_DTYPE_UINT32>();
    case PG_DTYPE_UINT64:
      return f.template operator()<PG_DTYPE_UINT64>();
    case PG_DTYPE_FLOAT16:
      return f.template operator()<PG_DTYPE_FLOAT16>();
    case PG_DTYPE_BFLOAT16:
      return f.template operator()<PG_DTYPE_BFLOAT16>();
    case PG_DTYPE_FLOAT32:
      return f.template operator()<PG_DTYPE_FLOAT32>();
    default:
      return f.template operator()<PG_DTYPE_FLOAT64>();
  }
}

}  // namespace polygrad::gpu_emu

#endif  // POLYGRAD_GPU_EMU_NUMERIC_HPP
