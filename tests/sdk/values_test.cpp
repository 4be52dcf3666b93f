// The conformance kit's own reference semantics, checked against hand-derived values.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "values.hpp"

namespace polygrad::conformance::detail {
namespace {

Value ref2(pg_op op, pg_dtype dt, Value a, Value b) {
  Value s[3] = {a, b, {}};
  bool cmp = op == PG_OP_CMPLT || op == PG_OP_CMPNE || op == PG_OP_CMPEQ;
  return reference_alu(op, dt, cmp ? PG_DTYPE_BOOL : dt, s);
}

TEST(Values, HalfConversions) {
  EXPECT_EQ(float_to_half(1.0f), 0x3c00);
  EXPECT_EQ(float_to_half(-2.0f), 0xc000);
  EXPECT_EQ(float_to_half(65504.0f), 0x7bff);
  EXPECT_EQ(float_to_half(65520.0f), 0x7c00);          // rounds up to infinity
  EXPECT_EQ(float_to_half(5.960464477539063e-8f), 1);  // smallest subnormal
  EXPECT_EQ(float_to_half(1e-9f), 0);
  EXPECT_EQ(half_to_float(0x3555), 0.333251953125f);
  EXPECT_EQ(float_to_bfloat16(1.0f), 0x3f80);
  EXPECT_EQ(bfloat16_to_float(0xc040), -3.0f);
}

TEST(Values, IntegerSemantics) {
  EXPECT_EQ(ref2(PG_OP_IDIV, PG_DTYPE_INT32, int_value(-7), int_value(2)).i, -3);
  EXPECT_EQ(ref2(PG_OP_MOD, PG_DTYPE_INT32, int_value(-7), int_value(2)).i, -1);
  EXPECT_EQ(ref2(PG_OP_MOD, PG_DTYPE_INT32, int_value(7), int_value(-2)).i, 1);
  EXPECT_EQ(ref2(PG_OP_SHR, PG_DTYPE_INT8, int_value(-128), int_value(7)).i, -1);
  EXPECT_EQ(ref2(PG_OP_SHL, PG_DTYPE_UINT8, int_value(200), int_value(3)).i, 64);
  EXPECT_EQ(ref2(PG_OP_SUB, PG_DTYPE_UINT8, int_value(3), int_value(7)).i, 252);
  EXPECT_EQ(ref2(PG_OP_CMPLT, PG_DTYPE_UINT64, int_value(-1), int_value(1)).i, 0);
  EXPECT_EQ(wrap_int(PG_DTYPE_INT8, 300), 44);
  EXPECT_EQ(wrap_int(PG_DTYPE_UINT16, -1), 65535);
}

TEST(Values, FloatSemantics) {
  double nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_TRUE(std::isnan(ref2(PG_OP_MAX, PG_DTYPE_FLOAT32, float_value(nan), float_value(1)).f));
  EXPECT_TRUE(std::isnan(ref2(PG_OP_MAX, PG_DTYPE_FLOAT32, float_value(1), float_value(nan)).f));
  EXPECT_EQ(ref2(PG_OP_CMPNE, PG_DTYPE_FLOAT32, float_value(nan), float_value(nan)).i, 1);
  Value x = float_value(-3.7);
  EXPECT_EQ(reference_alu(PG_OP_CAST, PG_DTYPE_FLOAT32, PG_DTYPE_INT8, &x).i, -3);
  EXPECT_EQ(ref2(PG_OP_ADD, PG_DTYPE_FLOAT32, float_value(1), float_value(1e-8)).f, 1.0);
  Value one = float_value(1.0);
  EXPECT_EQ(reference_alu(PG_OP_BITCAST, PG_DTYPE_FLOAT32, PG_DTYPE_INT32, &one).i, 0x3f800000);
}

TEST(Values, ToleranceIsInUnitsOfTheLastPlace) {
  Tolerance one_ulp{1, false};
  double ulp = std::ldexp(1.0, -23);
  EXPECT_TRUE(values_match(PG_DTYPE_FLOAT32, float_value(1 + ulp), float_value(1), one_ulp));
  EXPECT_FALSE(values_match(PG_DTYPE_FLOAT32, float_value(1 + 2 * ulp), float_value(1), one_ulp));
  EXPECT_FALSE(values_match(PG_DTYPE_FLOAT32, float_value(INFINITY), float_value(1e38), one_ulp));
  EXPECT_FALSE(values_match(PG_DTYPE_INT32, int_value(2), int_value(3), one_ulp));
}

}  // namespace
}  // namespace polygrad::conformance::detail
