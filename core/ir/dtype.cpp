#include "ir/dtype.hpp"

#include "ir/error.hpp"

#include <polygrad/plugin.hpp>

#include <cmath>
#include <limits>

namespace polygrad {

void ir_error(const std::string& message) {
  throw IrError(message);
}

namespace {

// Checks `t` is a scalar dtype of the ABI; the tables are plugin.hpp's (from PG_DTYPES).
pg_dtype valid(pg_dtype t) {
  if (t >= PG_DTYPE_COUNT) ir_error("dtype: invalid scalar type " + std::to_string(int{t}));
  return t;
}
char kind(pg_dtype t) {
  return sdk::dtype_kind(valid(t));
}

const char* space_name(AddrSpace s) {
  switch (s) {
    case AddrSpace::global:
      return "global";
    case AddrSpace::local:
      return "local";
    case AddrSpace::reg:
      return "reg";
    case AddrSpace::none:
      break;
  }
  return "none";
}

// Category for promotion: bool < integer < floating point.
int category(DType t) {
  return t.is_bool() ? 0 : t.is_float() ? 2 : 1;
}

DType signed_of_size(int bytes) {
  switch (bytes) {
    case 1:
      return dtypes::int8;
    case 2:
      return dtypes::int16;
    case 4:
      return dtypes::int32;
    default:
      return dtypes::int64;
  }
}

}  // namespace

int DType::scalar_size() const {
  return static_cast<int>(sdk::dtype_size(valid(scalar())));
}
int DType::itemsize() const {
  return is_ptr() ? 8 : scalar_size() * lanes();
}
bool DType::is_int() const {
  return !is_ptr() && sdk::dtype_is_int(valid(scalar()));
}
bool DType::is_unsigned() const {
  return !is_ptr() && kind(scalar()) == 'u';
}
bool DType::is_float() const {
  return !is_ptr() && kind(scalar()) == 'f';
}

std::string DType::name() const {
  std::string s = sdk::dtype_name(valid(scalar()));
  if (lanes() > 1) s += ".vec(" + std::to_string(lanes()) + ")";
  if (is_ptr()) s += std::string("*[") + space_name(addrspace()) + "]";
  return s;
}

int64_t DType::int_min() const {
  if (scalar() == PG_DTYPE_BOOL || kind(scalar()) == 'u') return 0;
  int b = bits();
  return b >= 64 ? std::numeric_limits<int64_t>::min() : -(int64_t{1} << (b - 1));
}

int64_t DType::int_max() const {
  if (scalar() == PG_DTYPE_BOOL) return 1;
  int b = bits();
  if (kind(scalar()) == 'u')
    return b >= 64 ? std::numeric_limits<int64_t>::max() : (int64_t{1} << b) - 1;
  return b >= 64 ? std::numeric_limits<int64_t>::max() : (int64_t{1} << (b - 1)) - 1;
}

double DType::min_value() const {
  if (scalar_type().is_float()) return -std::numeric_limits<double>::infinity();
  return static_cast<double>(int_min());
}

double DType::max_value() const {
  if (scalar_type().is_float()) return std::numeric_limits<double>::infinity();
  if (scalar() == PG_DTYPE_UINT64) return 18446744073709551615.0;
  return static_cast<double>(int_max());
}

DType dtype_from_name(const std::string& name) {
  for (int i = 0; i < PG_DTYPE_COUNT; ++i)
    if (name == sdk::dtype_name(i)) return DType(static_cast<pg_dtype>(i));
  ir_error("dtype: unknown dtype name '" + name + "'");
}

// One rule per line, torch.result_type's tensor-tensor rule; uint16/32/64 (which torch 1.13
// lacks and torch 2 refuses to promote) follow uint8's rule, and uint64 with a signed int is an
// error because no integer type holds both.
DType promote(DType a, DType b) {
  if (a.is_ptr() || b.is_ptr() || a.is_vector() || b.is_vector() || a.is_void() || b.is_void())
    ir_error("promote: needs scalar value dtypes, got " + a.name() + " and " + b.name());
  if (a == b) return a;                        // same type: itself
  if (category(a) != category(b))              // bool < int < float:
    return category(a) > category(b) ? a : b;  //   the higher category wins
  if (a.is_float()) {                          // two floats:
    if (a.scalar_size() == 2 && b.scalar_size() == 2) return dtypes::float32;  // f16+bf16
    return a.scalar_size() > b.scalar_size() ? a : b;                          //   the wider one
  }
  if (a.is_unsigned() == b.is_unsigned())              // same signedness:
    return a.scalar_size() > b.scalar_size() ? a : b;  //   the wider one
  DType u = a.is_unsigned() ? a : b, s = a.is_unsigned() ? b : a;
  if (s.scalar_size() > u.scalar_size()) return s;  // signed holds unsigned
  if (u.scalar_size() == 8)                         // uint64 + signed: nothing holds
    ir_error("promote: no dtype holds both " + a.name() + " and " + b.name());
  return signed_of_size(u.scalar_size() * 2);  // next wider signed int
}

int64_t wrap_int(DType t, int64_t v) {
  if (t.scalar() == PG_DTYPE_BOOL) return v != 0;
  int b = t.bits();
  if (b >= 64) return v;
  uint64_t mask = (uint64_t{1} << b) - 1;
  uint64_t u = static_cast<uint64_t>(v) & mask;
  if (!t.is_unsigned() && (u >> (b - 1)) != 0) u |= ~mask;
  return static_cast<int64_t>(u);
}

}  // namespace polygrad
