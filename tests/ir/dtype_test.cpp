#include "ir/dtype.hpp"
#include "ir/error.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <sstream>

namespace polygrad {
namespace {

TEST(DType, NamesSizesAndKinds) {
  EXPECT_EQ(dtypes::float32.name(), "float32");
  EXPECT_EQ(dtypes::bfloat16.itemsize(), 2);
  EXPECT_EQ(dtypes::int64.itemsize(), 8);
  EXPECT_EQ(dtypes::float32.vec(4).name(), "float32.vec(4)");
  EXPECT_EQ(dtypes::float32.vec(4).itemsize(), 16);
  EXPECT_EQ(dtypes::float32.ptr().name(), "float32*[global]");
  EXPECT_EQ(dtypes::float16.vec(2).ptr(AddrSpace::local).name(), "float16.vec(2)*[local]");
  EXPECT_EQ(dtypes::float32.ptr().itemsize(), 8);
  EXPECT_EQ(dtypes::float32.ptr().base(), dtypes::float32);
  EXPECT_TRUE(dtypes::uint16.is_int());
  EXPECT_TRUE(dtypes::uint16.is_unsigned());
  EXPECT_FALSE(dtypes::int16.is_unsigned());
  EXPECT_FALSE(dtypes::bool_.is_int());
  EXPECT_TRUE(dtypes::bfloat16.is_float());
  EXPECT_FALSE(dtypes::float32.ptr().is_float());
  EXPECT_EQ(dtype_from_name("uint32"), dtypes::uint32);
  EXPECT_THROW(dtype_from_name("int7"), IrError);
}

TEST(DType, Limits) {
  EXPECT_EQ(dtypes::int8.int_min(), -128);
  EXPECT_EQ(dtypes::int8.int_max(), 127);
  EXPECT_EQ(dtypes::uint16.int_max(), 65535);
  EXPECT_EQ(dtypes::int32.int_min(), -2147483648LL);
  EXPECT_EQ(dtypes::uint32.int_max(), 4294967295LL);
  EXPECT_EQ(dtypes::bool_.int_max(), 1);
  EXPECT_EQ(dtypes::uint64.max_value(), 18446744073709551615.0);
  EXPECT_EQ(dtypes::float32.min_value(), -INFINITY);
}

TEST(DType, WrapInt) {
  EXPECT_EQ(wrap_int(dtypes::int8, 128), -128);
  EXPECT_EQ(wrap_int(dtypes::uint8, -1), 255);
  EXPECT_EQ(wrap_int(dtypes::int32, 2147483648LL), -2147483648LL);
  EXPECT_EQ(wrap_int(dtypes::uint32, -1), 4294967295LL);
  EXPECT_EQ(wrap_int(dtypes::bool_, 7), 1);
  EXPECT_EQ(wrap_int(dtypes::int64, -5), -5);
}

// Every pair of torch's dtypes against the committed torch.result_type table.
TEST(DType, PromotionMatchesTorch) {
  std::ifstream in(PG_PROMOTION_FIXTURE);
  ASSERT_TRUE(in) << PG_PROMOTION_FIXTURE;
  std::string line;
  int checked = 0;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    std::string a, b, r;
    fields >> a >> b >> r;
    EXPECT_EQ(promote(dtype_from_name(a), dtype_from_name(b)).name(), r) << a << " + " << b;
    ++checked;
  }
  EXPECT_EQ(checked, 100);
}

// The unsigned types torch lacks follow uint8's rule.
TEST(DType, PromotionBeyondTorch) {
  EXPECT_EQ(promote(dtypes::uint32, dtypes::int32), dtypes::int64);
  EXPECT_EQ(promote(dtypes::uint16, dtypes::int8), dtypes::int32);
  EXPECT_EQ(promote(dtypes::uint16, dtypes::int32), dtypes::int32);
  EXPECT_EQ(promote(dtypes::uint16, dtypes::uint64), dtypes::uint64);
  EXPECT_EQ(promote(dtypes::uint64, dtypes::float16), dtypes::float16);
  EXPECT_EQ(promote(dtypes::bool_, dtypes::uint32), dtypes::uint32);
  EXPECT_THROW(promote(dtypes::uint64, dtypes::int64), IrError);
  EXPECT_THROW(promote(dtypes::float32.vec(2), dtypes::float32), IrError);
}

}  // namespace
}  // namespace polygrad
