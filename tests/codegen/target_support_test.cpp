// What the codegen hands a target, by its declared capabilities: the vcount of a vector STORE,
// EXP2/LOG2/SIN by PG_CAP_DECOMPOSE_TRANSCENDENTAL, and a clear error naming what a device
// lacks (a dtype missing from dtype_mask) instead of a program the plugin cannot run.
#include <polygrad/error.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "harness.hpp"

namespace polygrad_test {
namespace {

using polygrad::range;
using polygrad::codegen::lower;
using polygrad::codegen::LoweredKernel;
using polygrad::codegen::Target;

/// A plain scalar target: 4-byte vectors (no SIMD lanes), no flags, every dtype.
Target scalar_target() {
  Target t;
  t.device = "test:0";
  t.caps.dtype_mask = ~uint64_t{0} & ~(uint64_t{1} << PG_DTYPE_VOID);
  t.caps.vector_width_bytes = 4;
  t.caps.max_vector_lanes = 1;
  t.caps.max_threads_per_group = 1;
  for (int d = 0; d < 3; ++d) {
    t.caps.max_local_dims[d] = 1;
    t.caps.max_global_dims[d] = 1u << 30;
  }
  t.caps.compute_units = 1;
  return t;
}

/// out0 = exp2(x), out1 = log2(x), out2 = sin(x) over 64 float32 elements.
UOpRef transcendentals() {
  UOpRef r = range(idx(64), 0);
  UOpRef v = load(global(3, dtypes::float32), r);
  return sink({store(global(0, dtypes::float32), r, polygrad::alu(Op::EXP2, {v})),
               store(global(1, dtypes::float32), r, polygrad::alu(Op::LOG2, {v})),
               store(global(2, dtypes::float32), r, polygrad::alu(Op::SIN, {v}))});
}

int count_op(const LoweredKernel& k, pg_op op) {
  return static_cast<int>(std::count_if(k.instructions.begin(), k.instructions.end(),
                                        [&](const pg_instruction& i) { return i.op == op; }));
}

TEST(TargetSupport, WithoutTheFlagThePluginGetsExp2Log2AndSin) {
  LoweredKernel k = lower(transcendentals(), scalar_target());
  EXPECT_EQ(count_op(k, PG_OP_EXP2), 1);
  EXPECT_EQ(count_op(k, PG_OP_LOG2), 1);
  EXPECT_EQ(count_op(k, PG_OP_SIN), 1);
}

TEST(TargetSupport, WithTheFlagTheHostDecomposesAllThree) {
  Target t = scalar_target();
  t.caps.flags |= PG_CAP_DECOMPOSE_TRANSCENDENTAL;
  LoweredKernel k = lower(transcendentals(), t);
  EXPECT_EQ(count_op(k, PG_OP_EXP2) + count_op(k, PG_OP_LOG2) + count_op(k, PG_OP_SIN), 0);
}

TEST(TargetSupport, SimdLanesWithoutTheFlagKeepSin) {
  // With float32 SIMD lanes the host may decompose float32 EXP2 and LOG2 for speed (a libm
  // call stops a loop from vectorising); SIN always reaches a target without the flag.
  Target t = scalar_target();
  t.caps.vector_width_bytes = 32;
  t.caps.max_vector_lanes = 8;
  LoweredKernel k = lower(transcendentals(), t);
  EXPECT_EQ(count_op(k, PG_OP_SIN), 1);
}

TEST(TargetSupport, AVectorStoreWritesItsValuesLanes) {
  Target t = scalar_target();
  t.caps.vector_width_bytes = 16;
  t.caps.max_vector_lanes = 4;
  UOpRef r = range(idx(64), 0);
  UOpRef v = load(global(1, dtypes::float32), r);
  LoweredKernel k = lower(sink({store(global(0, dtypes::float32), r, v + v)}), t);
  int vector_stores = 0;
  for (const pg_instruction& in : k.instructions) {
    if (in.op != PG_OP_STORE) continue;
    const pg_instruction& value = k.instructions[k.operands[in.src_start + 1]];
    EXPECT_EQ(in.vcount, value.vcount);
    vector_stores += in.vcount == 4;
  }
  EXPECT_GE(vector_stores, 1) << "the kernel was expected to store float32x4 vectors";
}

TEST(TargetSupport, AMissingInt64IsADeviceErrorNamingIt) {
  Target t = scalar_target();
  t.caps.dtype_mask &= ~(uint64_t{1} << PG_DTYPE_INT64);
  UOpRef r = range(idx(16), 0);
  UOpRef ast = sink({store(global(0, dtypes::float32), r, load(global(1, dtypes::float32), r))});
  try {
    lower(ast, t);
    FAIL() << "lowering for a target without int64 succeeded";
  } catch (const polygrad::Error& e) {
    EXPECT_EQ(e.kind(), polygrad::ErrorKind::user);
    EXPECT_EQ(e.status(), PG_ERR_UNSUPPORTED);
    EXPECT_EQ(std::string(e.what()).rfind("device test:0 lacks int64, needed by kernel E_16 (", 0),
              0u)
        << e.what();
  }
}

TEST(TargetSupport, AMissingBufferDtypeNamesIt) {
  Target t = scalar_target();
  t.caps.dtype_mask &= ~(uint64_t{1} << PG_DTYPE_FLOAT16);
  UOpRef r = range(idx(16), 0);
  UOpRef ast = sink({store(global(0, dtypes::float16), r, load(global(1, dtypes::float16), r))});
  try {
    lower(ast, t);
    FAIL() << "lowering a float16 kernel for a target without float16 succeeded";
  } catch (const polygrad::Error& e) {
    EXPECT_NE(std::string(e.what()).find("device test:0 lacks float16, needed by kernel E_16"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace polygrad_test
