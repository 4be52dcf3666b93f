#include "values.hpp"

#include <polygrad/plugin.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>

namespace polygrad::conformance::detail {

using sdk::dtype_kind;
using sdk::dtype_size;

Value int_value(int64_t v) {
  return Value{v, 0};
}
Value float_value(double v) {
  return Value{0, v};
}

float half_to_float(uint16_t h) {
  uint32_t sign = (h & 0x8000u) << 16, exp = (h >> 10) & 0x1fu, mant = h & 0x3ffu;
  if (exp == 0) {
    float v = std::ldexp(static_cast<float>(mant), -24);
    return sign ? -v : v;
  }
  uint32_t bits =
      exp == 31 ? (sign | 0x7f800000u | (mant << 13)) : (sign | ((exp + 112) << 23) | (mant << 13));
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

uint16_t float_to_half(float f) {
  uint32_t x;
  std::memcpy(&x, &f, sizeof x);
  uint32_t sign = (x >> 16) & 0x8000u, exp = (x >> 23) & 0xffu, mant = x & 0x7fffffu;
  if (exp == 0xff) return static_cast<uint16_t>(sign | 0x7c00u | (mant ? 0x200u : 0u));
  int e = static_cast<int>(exp) - 127 + 15;
  if (e >= 31) return static_cast<uint16_t>(sign | 0x7c00u);
  if (e <= 0) {  // subnormal half (or zero)
    if (e < -10) return static_cast<uint16_t>(sign);
    mant |= 0x800000u;
    int shift = 14 - e;
    uint32_t m = mant >> shift, rem = mant & ((1u << shift) - 1), half = 1u << (shift - 1);
    if (rem > half || (rem == half && (m & 1))) ++m;
    return static_cast<uint16_t>(sign | m);
  }
  uint32_t m = mant >> 13, rem = mant & 0x1fffu;
  uint32_t h = sign | (static_cast<uint32_t>(e) << 10) | m;
  if (rem > 0x1000u || (rem == 0x1000u && (m & 1))) ++h;  // may carry into inf, correctly
  return static_cast<uint16_t>(h);
}

float bfloat16_to_float(uint16_t h) {
  uint32_t bits = static_cast<uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

uint16_t float_to_bfloat16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, sizeof x);
  if (std::isnan(f)) return static_cast<uint16_t>((x >> 16) | 0x40u);
  x += 0x7fffu + ((x >> 16) & 1u);
  return static_cast<uint16_t>(x >> 16);
}

int64_t wrap_int(pg_dtype dt, int64_t v) {
  if (dt == PG_DTYPE_BOOL) return v != 0;
  uint32_t bits = dtype_size(dt) * 8;
  if (bits >= 64) return v;
  uint64_t u = static_cast<uint64_t>(v);
  if (dtype_kind(dt) == 'u') return static_cast<int64_t>(u & ((uint64_t{1} << bits) - 1));
  return static_cast<int64_t>(u << (64 - bits)) >> (64 - bits);
}

double round_float(pg_dtype dt, double v) {
  switch (dt) {
    case PG_DTYPE_FLOAT32:
      return static_cast<float>(v);
    case PG_DTYPE_FLOAT16:
      return half_to_float(float_to_half(static_cast<float>(v)));
    case PG_DTYPE_BFLOAT16:
      return bfloat16_to_float(float_to_bfloat16(static_cast<float>(v)));
    default:
      return v;
  }
}

Value from_double(pg_dtype dt, double v) {
  if (dtype_kind(dt) == 'f') return float_value(round_float(dt, v));
  if (dt == PG_DTYPE_BOOL) return int_value(v != 0);
  double t = std::trunc(v);
  if (!(std::fabs(t) < 9.2e18)) return int_value(0);  // out of range: C leaves it undefined
  return int_value(wrap_int(dt, static_cast<int64_t>(t)));
}

double to_double(pg_dtype dt, Value v) {
  if (dtype_kind(dt) == 'f') return v.f;
  if (dtype_kind(dt) == 'u') return static_cast<double>(static_cast<uint64_t>(v.i));
  return static_cast<double>(v.i);
}

HostArray::HostArray(pg_dtype dt, size_t count) : dtype(dt), bytes(count * dtype_size(dt)) {}

HostArray::HostArray(pg_dtype dt, const std::vector<Value>& values) : HostArray(dt, values.size()) {
  for (size_t k = 0; k < values.size(); ++k) set(k, values[k]);
}

size_t HostArray::size() const {
  return bytes.size() / std::max<uint32_t>(1, dtype_size(dtype));
}

Value HostArray::get(size_t index) const {
  uint32_t n = dtype_size(dtype);
  const unsigned char* p = bytes.data() + index * n;
  switch (dtype) {
    case PG_DTYPE_FLOAT32: {
      float f;
      std::memcpy(&f, p, 4);
      return float_value(f);
    }
    case PG_DTYPE_FLOAT64: {
      double f;
      std::memcpy(&f, p, 8);
      return float_value(f);
    }
    case PG_DTYPE_FLOAT16:
    case PG_DTYPE_BFLOAT16: {
      uint16_t h;
      std::memcpy(&h, p, 2);
      return float_value(dtype == PG_DTYPE_FLOAT16 ? half_to_float(h) : bfloat16_to_float(h));
    }
    case PG_DTYPE_BOOL:
      return int_value(p[0]);  // raw: a non-canonical bool shows up
    default: {
      uint64_t raw = 0;
      std::memcpy(&raw, p, n);  // little-endian hosts
      return int_value(wrap_int(dtype, static_cast<int64_t>(raw)));
    }
  }
}

void HostArray::set(size_t index, Value v) {
  uint32_t n = dtype_size(dtype);
  unsigned char* p = bytes.data() + index * n;
  switch (dtype) {
    case PG_DTYPE_FLOAT32: {
      float f = static_cast<float>(v.f);
      std::memcpy(p, &f, 4);
      break;
    }
    case PG_DTYPE_FLOAT64:
      std::memcpy(p, &v.f, 8);
      break;
    case PG_DTYPE_FLOAT16:
    case PG_DTYPE_BFLOAT16: {
      float f = static_cast<float>(v.f);
      uint16_t h = dtype == PG_DTYPE_FLOAT16 ? float_to_half(f) : float_to_bfloat16(f);
      std::memcpy(p, &h, 2);
      break;
    }
    case PG_DTYPE_BOOL:
      p[0] = v.i != 0;
      break;
    default: {
      uint64_t raw = static_cast<uint64_t>(v.i);
      std::memcpy(p, &raw, n);
    }
  }
}

namespace {

double ulp_of(pg_dtype dt, double x) {
  int mant = 52, emin = -1022;
  if (dt == PG_DTYPE_FLOAT32) mant = 23, emin = -126;
  if (dt == PG_DTYPE_FLOAT16) mant = 10, emin = -14;
  if (dt == PG_DTYPE_BFLOAT16) mant = 7, emin = -126;
  int e = x == 0 ? emin : std::max(std::ilogb(x), emin);
  return std::ldexp(1.0, e - mant);
}

}  // namespace

bool values_match(pg_dtype dt, Value got, Value want, const Tolerance& tol) {
  if (dtype_kind(dt) != 'f') return got.i == want.i;
  if (std::isnan(want.f)) return std::isnan(got.f);
  if (std::isinf(want.f) || std::isnan(got.f) || std::isinf(got.f)) return got.f == want.f;
  return std::fabs(got.f - want.f) <= tol.ulps * ulp_of(dt, want.f);
}

std::string format_value(pg_dtype dt, Value v) {
  char text[64];
  if (dt == PG_DTYPE_BOOL && (v.i == 0 || v.i == 1)) return v.i ? "true" : "false";
  if (dtype_kind(dt) == 'f')
    std::snprintf(text, sizeof text, "%.9g", v.f);
  else if (dtype_kind(dt) == 'u')
    std::snprintf(text, sizeof text, "%llu", static_cast<unsigned long long>(v.i));
  else
    std::snprintf(text, sizeof text, "%lld", static_cast<long long>(v.i));
  return text;
}

namespace {

Value float_alu(pg_op op, pg_dtype out, const Value* s) {
  double a = s[0].f, b = s[1].f, c = s[2].f, r = 0;
  switch (op) {
    case PG_OP_NEG:
      r = -a;
      break;
    case PG_OP_RECIP:
      r = 1.0 / a;
      break;
    case PG_OP_SQRT:
      r = std::sqrt(a);
      break;
    case PG_OP_EXP2:
      r = std::exp2(a);
      break;
    case PG_OP_LOG2:
      r = std::log2(a);
      break;
    case PG_OP_SIN:
      r = std::sin(a);
      break;
    case PG_OP_TRUNC:
      r = std::trunc(a);
      break;
    case PG_OP_ADD:
      r = a + b;
      break;
    case PG_OP_SUB:
      r = a - b;
      break;
    case PG_OP_MUL:
      r = a * b;
      break;
    case PG_OP_FDIV:
      r = a / b;
      break;
    case PG_OP_MAX:
      r = (std::isnan(a) || std::isnan(b)) ? std::numeric_limits<double>::quiet_NaN()
                                           : std::max(a, b);
      break;
    case PG_OP_MULACC:
      r = a * b + c;
      break;
    case PG_OP_CMPLT:
      return int_value(a < b);
    case PG_OP_CMPNE:
      return int_value(a != b);
    case PG_OP_CMPEQ:
      return int_value(a == b);
    default:
      return float_value(std::numeric_limits<double>::quiet_NaN());
  }
  return float_value(round_float(out, r));
}

Value int_alu(pg_op op, pg_dtype in, pg_dtype out, const Value* s) {
  bool is_unsigned = dtype_kind(in) == 'u';
  int64_t a = s[0].i, b = s[1].i;
  uint64_t ua = static_cast<uint64_t>(a), ub = static_cast<uint64_t>(b),
           uc = static_cast<uint64_t>(s[2].i), r = 0;
  switch (op) {
    case PG_OP_NEG:
      r = 0 - ua;
      break;
    case PG_OP_NOT:
      r = in == PG_DTYPE_BOOL ? (a == 0) : ~ua;
      break;
    case PG_OP_ADD:
      r = ua + ub;
      break;
    case PG_OP_SUB:
      r = ua - ub;
      break;
    case PG_OP_MUL:
      r = ua * ub;
      break;
    case PG_OP_MULACC:
      r = ua * ub + uc;
      break;
    case PG_OP_IDIV:
      if (b == 0) return int_value(0);
      r = is_unsigned ? ua / ub : static_cast<uint64_t>(a / b);
      break;
    case PG_OP_MOD:
      if (b == 0) return int_value(0);
      r = is_unsigned ? ua % ub : static_cast<uint64_t>(a % b);
      break;
    case PG_OP_MAX:
      r = is_unsigned ? std::max(ua, ub) : static_cast<uint64_t>(std::max(a, b));
      break;
    case PG_OP_CMPLT:
      return int_value(is_unsigned ? ua < ub : a < b);
    case PG_OP_CMPNE:
      return int_value(a != b);
    case PG_OP_CMPEQ:
      return int_value(a == b);
    case PG_OP_AND:
      r = ua & ub;
      break;
    case PG_OP_OR:
      r = ua | ub;
      break;
    case PG_OP_XOR:
      r = ua ^ ub;
      break;
    case PG_OP_SHL:
      r = ua << (ub & 63);
      break;
    case PG_OP_SHR:
      r = is_unsigned ? ua >> (ub & 63) : static_cast<uint64_t>(a >> (ub & 63));
      break;
    default:
      return int_value(0);
  }
  return int_value(wrap_int(out, static_cast<int64_t>(r)));
}

}  // namespace

Value reference_alu(pg_op op, pg_dtype in, pg_dtype out, const Value* src) {
  if (op == PG_OP_WHERE) return src[0].i ? src[1] : src[2];
  if (op == PG_OP_CAST) {
    if (dtype_kind(in) == 'f') return from_double(out, src[0].f);
    if (dtype_kind(out) == 'f') return float_value(round_float(out, to_double(in, src[0])));
    return int_value(wrap_int(out, src[0].i));
  }
  if (op == PG_OP_BITCAST) {
    HostArray a(in, 1), b(out, 1);
    a.set(0, src[0]);
    b.bytes = a.bytes;
    return b.get(0);
  }
  if (dtype_kind(in) == 'f') return float_alu(op, out, src);
  return int_alu(op, in, out, src);
}

}  // namespace polygrad::conformance::detail
