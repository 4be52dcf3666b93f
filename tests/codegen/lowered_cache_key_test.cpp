// The lowered-program cache's key (runtime/lowered_cache.hpp): a target's tensor-core fragment
// maps count by content, so the same plugin loaded at another address (ASLR) keys the same
// program, and maps that differ key differently.
#include "runtime/lowered_cache.hpp"

#include "ir/uop.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace polygrad {
namespace {

codegen::Target gpu_with_map(const uint16_t* a_map) {
  codegen::Target t;
  t.caps.flags = PG_CAP_GROUPS | PG_CAP_LOCAL_MEMORY;
  t.caps.dtype_mask = uint64_t{1} << PG_DTYPE_FLOAT32;
  t.caps.index_bits = 32;
  t.caps.tensor_core_count = 1;
  t.caps.tensor_cores[0] = {
      2, 2, 2,     2,       PG_DTYPE_FLOAT16, PG_DTYPE_FLOAT16, PG_DTYPE_FLOAT32,
      0, 0, a_map, nullptr, nullptr};
  return t;
}

TEST(LoweredCacheKey, TensorCoreMapsCountByContentNotAddress) {
  const UOpRef out =
      UOp::make(Op::DEFINE_GLOBAL, dtypes::float32.ptr(AddrSpace::global), {}, int64_t{0});
  const UOpRef at = UOp::make(Op::INDEX, out->dtype(), {out, const_int(dtypes::index, 0)});
  const UOpRef ast =
      UOp::make(Op::SINK, dtypes::void_,
                {UOp::make(Op::STORE, dtypes::void_, {at, const_float(dtypes::float32, 1.0)})});
  const std::vector<uint16_t> first{0, 1, 2, 3}, copy{0, 1, 2, 3}, other{1, 0, 3, 2};
  ASSERT_NE(first.data(), copy.data());
  const auto key = runtime::lowered_cache_key(ast, gpu_with_map(first.data()));
  EXPECT_EQ(key, runtime::lowered_cache_key(ast, gpu_with_map(copy.data())));
  EXPECT_NE(key, runtime::lowered_cache_key(ast, gpu_with_map(other.data())));
  EXPECT_NE(key, runtime::lowered_cache_key(ast, gpu_with_map(nullptr)));
  // The padding a raw copy of the capabilities would have hashed changes nothing.
  codegen::Target padded = gpu_with_map(first.data());
  padded.caps.reserved13 = 7;
  EXPECT_EQ(key, runtime::lowered_cache_key(ast, padded));
}

}  // namespace
}  // namespace polygrad
