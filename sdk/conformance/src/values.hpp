// Typed host arrays and scalar values as the conformance kit computes with them, plus the
// reference semantics of every ALU op and the per-dtype comparison with a tolerance.
#ifndef POLYGRAD_CONFORMANCE_VALUES_HPP
#define POLYGRAD_CONFORMANCE_VALUES_HPP

#include <polygrad/plugin.h>

#include <cstdint>
#include <string>
#include <vector>

namespace polygrad::conformance::detail {

/// One element. Integers and bool live in `i` (signed ones sign-extended, unsigned ones
/// zero-extended to 64 bits, bool 0/1); floats of every width live in `f`.
struct Value {
  int64_t i = 0;
  double f = 0;
};

Value int_value(int64_t v);
Value float_value(double v);
/// `v` as a value of dtype `dt` (ints: truncated toward zero then wrapped; floats: rounded).
Value from_double(pg_dtype dt, double v);
/// The numeric value of `v` read as dtype `dt`, as a double.
double to_double(pg_dtype dt, Value v);

/// IEEE binary16 and bfloat16 conversions, round to nearest even.
float half_to_float(uint16_t h);
uint16_t float_to_half(float f);
float bfloat16_to_float(uint16_t h);
uint16_t float_to_bfloat16(float f);

/// `v` wrapped to the width of integer dtype `dt` and extended again (bool: v != 0).
int64_t wrap_int(pg_dtype dt, int64_t v);
/// `v` rounded to the precision of float dtype `dt`.
double round_float(pg_dtype dt, double v);

/// A typed array in host memory, laid out as the device expects it.
struct HostArray {
  pg_dtype dtype = PG_DTYPE_FLOAT32;
  std::vector<unsigned char> bytes;

  HostArray() = default;
  HostArray(pg_dtype dt, size_t count);
  HostArray(pg_dtype dt, const std::vector<Value>& values);
  size_t size() const;
  Value get(size_t index) const;
  void set(size_t index, Value v);
};

/// How closely a plugin's result must match the reference.
struct Tolerance {
  double ulps = 0;       ///< floats: allowed error in units in the last place of the dtype
  bool bitwise = false;  ///< compare the raw bytes instead (BITCAST); see compare_output
};

/// True when `got` matches `want` for dtype `dt` within `tol.ulps`; NaN matches NaN,
/// infinities must be equal. Ignores `tol.bitwise`: a Value cannot hold every bit pattern.
bool values_match(pg_dtype dt, Value got, Value want, const Tolerance& tol);
/// Human-readable element, e.g. "-3", "2.5", "nan", "true".
std::string format_value(pg_dtype dt, Value v);

/// Reference result of ALU op `op` (unary, binary, ternary, CAST, BITCAST) applied to `src`
/// whose operand dtype is `in` and whose result dtype is `out`. Follows plugin.h: C semantics,
/// integer division and modulo truncate, float MAX propagates NaN, shifts take b < bits.
Value reference_alu(pg_op op, pg_dtype in, pg_dtype out, const Value* src);

}  // namespace polygrad::conformance::detail

#endif  // POLYGRAD_CONFORMANCE_VALUES_HPP
