// The group strategy's plans (codegen/group/plan.hpp) on a target with groups: the launch
// shape and the program's structure. Values on such a target: tests/gpu_emu.
#include <gtest/gtest.h>

#include <polygrad/error.hpp>
#include <polygrad/program_check.hpp>

#include <algorithm>
#include <climits>
#include <cstdint>

#include "codegen/group/tiles.hpp"
#include "codegen/group/wmma.hpp"
#include "harness.hpp"
#include "ir/graph.hpp"

namespace polygrad_test {
namespace {

using polygrad::range;
using polygrad::codegen::LoweredKernel;
using polygrad::codegen::Planned;
using polygrad::codegen::Target;
using polygrad::codegen::group_tuning::TileShape;
using polygrad::codegen::group_tuning::WmmaShape;

/// A GPU-like target: groups of up to 1024 threads, 48 KiB of local memory, 32-wide warps.
Target group_target() {
  Target t = cpu_target();
  t.caps.flags = PG_CAP_GROUPS | PG_CAP_LOCAL_MEMORY | PG_CAP_ALIGNED_VECTORS;
  t.caps.max_threads_per_group = 1024;
  t.caps.max_local_dims[0] = t.caps.max_local_dims[1] = 1024;
  t.caps.max_local_dims[2] = 64;
  t.caps.max_global_dims[0] = 2147483647u;
  t.caps.max_global_dims[1] = t.caps.max_global_dims[2] = 65535;
  t.caps.local_memory_bytes = 48 << 10;
  t.caps.subgroup_size = 32;
  t.caps.vector_width_bytes = 16;
  t.caps.max_vector_lanes = 8;
  return t;
}

int count_ops(const UOpRef& sink, Op op) {
  int n = 0;
  for (const polygrad::UOp* u : polygrad::toposort(sink)) n += u->op() == op;
  return n;
}

int count(const LoweredKernel& k, pg_op op) {
  return static_cast<int>(std::count_if(k.instructions.begin(), k.instructions.end(),
                                        [&](const pg_instruction& in) { return in.op == op; }));
}

int64_t groups(const LoweredKernel& k) {
  return k.launch_global({})[0];
}

void expect_valid(const LoweredKernel& k) {
  const pg_kernel_program p = k.program();
  EXPECT_NO_THROW(polygrad::sdk::check_program(p, PG_KERNEL_ISA_VERSION)) << k.name;
}

TEST(Group, ElementwiseIsOneThreadPerElementWithItsStoreGated) {
  UOpRef i = range(idx(1001), 0);  // (not a multiple of a vector's lanes: scalar)
  UOpRef o = global(0, dtypes::float32), a = global(1, dtypes::float32);
  UOpRef ast = sink({store(o, i, load(a, i) * load(a, i))});
  const LoweredKernel k = polygrad::codegen::lower(ast, group_target());
  expect_valid(k);
  EXPECT_EQ(k.local_size[0], 256u);
  EXPECT_EQ(groups(k), 4);  // ceil(1001 / 256)
  EXPECT_EQ(count(k, PG_OP_RANGE), 0);
  EXPECT_EQ(count(k, PG_OP_SPECIAL), 2);
  EXPECT_EQ(count(k, PG_OP_BARRIER), 0);
  for (const pg_instruction& in : k.instructions)
    if (in.op == PG_OP_STORE) {
      EXPECT_EQ(in.src_count, 3u) << "the store past 1001 is gated";
    }
}

TEST(Group, AlignedContiguousElementwiseIsVectorised) {
  UOpRef i = range(idx(64), 0), j = range(idx(1024), 1);
  UOpRef o = global(0, dtypes::float32), a = global(1, dtypes::float32);
  UOpRef ast = sink({store(o, i * 1024 + j, load(a, i * 1024 + j) * load(a, i * 1024 + j))});
  const LoweredKernel k = polygrad::codegen::lower(ast, group_target());
  expect_valid(k);
  // 16-byte vectors: 4 floats a thread, 64 * 1024 / 4 threads in groups of 256.
  EXPECT_EQ(groups(k), 64 * 1024 / 4 / 256);
  for (const pg_instruction& in : k.instructions)
    if (in.op == PG_OP_LOAD || in.op == PG_OP_STORE) {
      EXPECT_EQ(in.vcount, 4) << in.op;
    }
  // An offset one element off the vectors' alignment keeps scalar accesses.
  UOpRef shifted = sink({store(o, i * 1024 + j, load(a, i * 1024 + j + 1))});
  const LoweredKernel s = polygrad::codegen::lower(shifted, group_target());
  for (const pg_instruction& in : s.instructions)
    if (in.op == PG_OP_LOAD) {
      EXPECT_EQ(in.vcount, 1);
    }
}

TEST(Group, ASymbolicRowCountWithVectorRowsIsOneThreadPerVector) {
  UOpRef n0 = polygrad::define_var("n0", 1, INT32_MAX);
  UOpRef i = range(n0, 0), j = range(idx(4), 2);
  UOpRef o = global(0, dtypes::float32);
  UOpRef ast = sink({store(o, i * 4 + j, load(o, i * 4 + j))});
  const LoweredKernel k = polygrad::codegen::lower(ast, group_target());
  expect_valid(k);
  EXPECT_EQ(k.launch_global({{"n0", 1000}})[0], 4);  // 1000 vectors of 4, 256 a group
}

TEST(Group, SmallElementwiseTakesAWholeWarp) {
  UOpRef i = range(idx(5), 0), j = range(idx(3), 1);
  UOpRef o = global(0, dtypes::float32), a = global(1, dtypes::float32);
  UOpRef ast = sink({store(o, i * 3 + j, load(a, j * 5 + i))});
  const LoweredKernel k = polygrad::codegen::lower(ast, group_target());
  expect_valid(k);
  EXPECT_EQ(k.local_size[0], 32u);  // 15 elements, rounded up to the warp
  EXPECT_EQ(groups(k), 1);
}

TEST(Group, RowSumIsAGroupPerRowWithATreeInLocalMemory) {
  UOpRef i = range(idx(64), 0), kk = range(idx(4096), 1);
  UOpRef o = global(0, dtypes::float32), a = global(1, dtypes::float32);
  UOpRef ast = sink({store(o, i, reduce(Op::ADD, load(a, i * 4096 + kk), {kk}))});
  const LoweredKernel k = polygrad::codegen::lower(ast, group_target());
  expect_valid(k);
  EXPECT_EQ(k.local_size[0], 256u);
  EXPECT_EQ(groups(k), 64);
  EXPECT_EQ(count(k, PG_OP_DEFINE_LOCAL), 1);
  // One after the partials are stored, one per tree step (log2 256), one after the result.
  EXPECT_EQ(count(k, PG_OP_BARRIER), 1 + 8 + 1);
  EXPECT_EQ(count(k, PG_OP_RANGE), 1);  // the thread's share: 4096 / 256 values
}

TEST(Group, SoftmaxIsOneKernelWithTwoTreesAndSharedColumns) {
  const int64_t n = 1000;
  UOpRef i = range(idx(8), 0), j = range(idx(n), 1), k1 = range(idx(n), 2), k2 = range(idx(n), 3);
  UOpRef o = global(0, dtypes::float32), a = global(1, dtypes::float32);
  UOpRef mx = reduce(Op::MAX, load(a, i * n + k1), {k1});
  UOpRef e2 = polygrad::alu(Op::EXP2, {load(a, i * n + k2) - mx});
  UOpRef sum = reduce(Op::ADD, e2, {k2});
  UOpRef out = polygrad::alu(Op::EXP2, {load(a, i * n + j) - mx}) * polygrad::alu(Op::RECIP, {sum});
  UOpRef ast = sink({store(o, i * n + j, out)});
  const LoweredKernel k = polygrad::codegen::lower(ast, group_target());
  expect_valid(k);
  EXPECT_EQ(groups(k), 8);
  EXPECT_EQ(count(k, PG_OP_DEFINE_LOCAL), 2);
  EXPECT_EQ(count(k, PG_OP_BARRIER), 2 * (1 + 8 + 1));
  EXPECT_EQ(count(k, PG_OP_RANGE), 3);  // max's share, sum's share, the row's columns
}

TEST(Group, ShortReducesStayInsideOneThread) {
  UOpRef i = range(idx(4096), 0), kk = range(idx(40), 1);
  UOpRef o = global(0, dtypes::float32), a = global(1, dtypes::float32);
  UOpRef ast = sink({store(o, i, reduce(Op::ADD, load(a, i * 40 + kk), {kk}))});
  const LoweredKernel k = polygrad::codegen::lower(ast, group_target());
  expect_valid(k);
  EXPECT_EQ(count(k, PG_OP_BARRIER), 0);
  EXPECT_EQ(groups(k), 16);  // 4096 rows, a thread each
}

TEST(Group, MatmulStagesTilesOfBothOperandsInLocalMemory) {
  const int64_t m = 200, n = 130, kd = 100;  // none a multiple of its tile
  UOpRef i = range(idx(m), 0), j = range(idx(n), 1), kk = range(idx(kd), 2);
  UOpRef o = global(0, dtypes::float32), a = global(1, dtypes::float32),
         b = global(2, dtypes::float32);
  UOpRef ast = sink(
      {store(o, i * n + j, reduce(Op::ADD, load(a, i * kd + kk) * load(b, kk * n + j), {kk}))});
  const LoweredKernel k = polygrad::codegen::lower(ast, group_target());
  expect_valid(k);
  EXPECT_EQ(k.local_size[0], 256u);
  EXPECT_EQ(groups(k), 4 * 3);  // ceil(200 / 64) x ceil(130 / 64) tiles
  EXPECT_EQ(count(k, PG_OP_DEFINE_LOCAL), 2);
  EXPECT_EQ(count(k, PG_OP_BARRIER), 2);      // after the tiles are stored, after they are read
  EXPECT_EQ(count(k, PG_OP_DEFINE_REG), 16);  // a 4 x 4 block of accumulators per thread
}

TEST(Group, TileShapesAreTakenInOrderWhenTheProductHoldsThem) {
  // 128 x 128 with 8 x 8 a thread first, then the default: a product 130 wide takes the first,
  // one 100 wide the second.
  const std::vector<TileShape> shapes = {{128, 128, 8, 8, 8}, {64, 64, 16, 4, 4}};
  for (const int64_t n : {130, 100}) {
    const int64_t m = 200, kd = 100;
    UOpRef i = range(idx(m), 0), j = range(idx(n), 1), kk = range(idx(kd), 2);
    UOpRef o = global(0, dtypes::float32), a = global(1, dtypes::float32),
           b = global(2, dtypes::float32);
    UOpRef ast = sink(
        {store(o, i * n + j, reduce(Op::ADD, load(a, i * kd + kk) * load(b, kk * n + j), {kk}))});
    const std::optional<Planned> plan = polygrad::codegen::plan_tiles(ast, group_target(), shapes);
    ASSERT_TRUE(plan) << n;
    EXPECT_EQ(plan->local[0], 256u) << n;  // 16 x 16 threads either way
    const int64_t tile = n == 130 ? 128 : 64;
    EXPECT_EQ(plan->groups[0]->arg_int(), ((m + tile - 1) / tile) * ((n + tile - 1) / tile)) << n;
    EXPECT_EQ(count_ops(plan->sink, Op::REDUCE), n == 130 ? 64 : 16) << n;  // a block a thread
  }
}

/// The maps of PTX's mma.sync m16n8k16 (row.col) for lane t, group g = t / 4, q = t % 4:
/// A's element l at row g + 8 * (l / 2 % 2), column 2q + l % 2 + 8 * (l / 4); B's at k-row
/// 2q + l % 2 + 8 * (l / 2), column g; C's at row g + 8 * (l / 2), column 2q + l % 2.
struct PtxMaps {
  uint16_t a[256], b[128], c[128];
  PtxMaps() {
    for (int t = 0; t < 32; ++t) {
      const int g = t / 4, q = t % 4;
      for (int l = 0; l < 8; ++l)
        a[t * 8 + l] =
            static_cast<uint16_t>((g + 8 * (l / 2 % 2)) * 16 + 2 * q + l % 2 + 8 * (l / 4));
      for (int l = 0; l < 4; ++l) {
        b[t * 4 + l] = static_cast<uint16_t>((2 * q + l % 2 + 8 * (l / 2)) * 8 + g);
        c[t * 4 + l] = static_cast<uint16_t>((g + 8 * (l / 2)) * 8 + 2 * q + l % 2);
      }
    }
  }
};

/// group_target() with PTX's m16n8k16 tensor core on `input` operands (float accumulators).
Target tensor_core_target(pg_dtype input) {
  static const PtxMaps maps;
  Target t = group_target();
  t.caps.tensor_core_count = 1;
  t.caps.tensor_cores[0] = {16,
                            8,
                            16,
                            32,
                            static_cast<uint8_t>(input),
                            static_cast<uint8_t>(input),
                            PG_DTYPE_FLOAT32,
                            0,
                            0,
                            maps.a,
                            maps.b,
                            maps.c};
  return t;
}

TEST(Group, HalfMatmulUsesTheTargetsTensorCore) {
  const Target t = tensor_core_target(PG_DTYPE_FLOAT16);
  const int64_t m = 128, n = 96, kd = 64;
  UOpRef i = range(idx(m), 0), j = range(idx(n), 1), kk = range(idx(kd), 2);
  UOpRef o = global(0, dtypes::float16), a = global(1, dtypes::float16),
         b = global(2, dtypes::float16);
  UOpRef prod = polygrad::cast(load(a, i * kd + kk) * load(b, kk * n + j), dtypes::float32);
  UOpRef ast =
      sink({store(o, i * n + j, polygrad::cast(reduce(Op::ADD, prod, {kk}), dtypes::float16))});
  const LoweredKernel k = polygrad::codegen::lower(ast, t);
  expect_valid(k);
  EXPECT_EQ(k.local_size[0], 128u);    // 4 warps
  EXPECT_EQ(groups(k), 2 * 2);         // 64 x 64 tiles
  EXPECT_EQ(count(k, PG_OP_WMMA), 8);  // 2 x 4 tensor-core tiles per warp
  EXPECT_EQ(count(k, PG_OP_DEFINE_LOCAL), 2);
  // Without the tensor core, the same kernel is the float tile form.
  const LoweredKernel plain = polygrad::codegen::lower(ast, group_target());
  EXPECT_EQ(count(plain, PG_OP_WMMA), 0);
  EXPECT_EQ(plain.local_size[0], 256u);
}

TEST(Group, ATensorCoreShapeOfEightWarpsStagesSlicesOfTwoSteps) {
  const Target t = tensor_core_target(PG_DTYPE_BFLOAT16);
  const int64_t m = 256, n = 128, kd = 96;
  UOpRef i = range(idx(m), 0), j = range(idx(n), 1), kk = range(idx(kd), 2);
  UOpRef o = global(0, dtypes::float32), a = global(1, dtypes::bfloat16),
         b = global(2, dtypes::bfloat16);
  UOpRef prod = polygrad::cast(load(a, i * kd + kk), dtypes::float32) *
                polygrad::cast(load(b, kk * n + j), dtypes::float32);
  UOpRef ast = sink({store(o, i * n + j, reduce(Op::ADD, prod, {kk}))});
  const std::vector<WmmaShape> shapes = {{2, 4, 4, 4, 2}};
  const std::optional<Planned> plan = polygrad::codegen::plan_wmma(ast, t, shapes);
  ASSERT_TRUE(plan);
  EXPECT_EQ(plan->local[0], 256u);                 // 2 x 4 warps
  EXPECT_EQ(plan->groups[0]->arg_int(), 2);        // 128 x 128 tiles
  EXPECT_EQ(count_ops(plan->sink, Op::WMMA), 16);  // 4 x 4 tensor-core tiles per warp
  ASSERT_EQ(plan->stages.size(), 1u);
  // Both tiles staged with rows padded by 8: A 128 x (32 + 8), B 32 x (128 + 8).
  std::vector<int64_t> sizes;
  for (const UOp* u : polygrad::toposort(plan->sink))
    if (u->op() == Op::DEFINE_LOCAL) sizes.push_back(u->arg_ints()[1]);
  std::sort(sizes.begin(), sizes.end());
  EXPECT_EQ(sizes, (std::vector<int64_t>{32 * 136, 128 * 40}));
}

int count_int64(const LoweredKernel& k) {
  return static_cast<int>(
      std::count_if(k.instructions.begin(), k.instructions.end(), [](const pg_instruction& in) {
        return in.dtype == PG_DTYPE_INT64 && in.addrspace == PG_ADDR_NONE;
      }));
}

TEST(Group, IndexMathIsInt32WhenTheTargetAsksAndItFits) {
  UOpRef i = range(idx(64), 0), kk = range(idx(4096), 1);
  UOpRef o = global(0, dtypes::float32), a = global(1, dtypes::float32);
  UOpRef ast = sink({store(o, i, reduce(Op::ADD, load(a, i * 4096 + kk), {kk}))});
  Target t = group_target();
  EXPECT_GT(count_int64(polygrad::codegen::lower(ast, t)), 0);
  t.caps.index_bits = 32;
  const LoweredKernel k = polygrad::codegen::lower(ast, t);
  expect_valid(k);
  EXPECT_EQ(count_int64(k), 0);
  // An int64 output computed from an index (arange's) casts back from the int32 math.
  UOpRef ol = global(0, dtypes::int64);
  const LoweredKernel ar = polygrad::codegen::lower(sink({store(ol, i, i * 3)}), t);
  expect_valid(ar);
  EXPECT_EQ(count_int64(ar), 1);  // the CAST of the stored value
}

TEST(Group, IndexMathPastInt32StaysInt64OrIsAnErrorWithoutInt64) {
  UOpRef i = range(idx(int64_t{3} << 30), 0);  // 3 Gi elements
  UOpRef o = global(0, dtypes::int8), a = global(1, dtypes::int8);
  UOpRef ast = sink({store(o, i, load(a, i))});
  Target t = group_target();
  t.caps.index_bits = 32;
  EXPECT_GT(count_int64(polygrad::codegen::lower(ast, t)), 0);
  t.caps.dtype_mask &= ~(uint64_t{1} << PG_DTYPE_INT64);
  t.device = "gpu:0";
  try {
    polygrad::codegen::lower(ast, t);
    ADD_FAILURE() << "no error";
  } catch (const polygrad::Error& e) {
    EXPECT_NE(std::string(e.what()).find("past the 32-bit indices"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("gpu:0"), std::string::npos) << e.what();
  }
}

TEST(Group, AVariableOnlyTheStagedTilesReadIsAKernelParameter) {
  // x[:, t] @ w with the step t a variable s0 (a size template's offset) and the rows n0: only
  // the stores that stage x's tile read s0, none of the kernel's own stores.
  UOpRef n0 = polygrad::define_var("n0", 1, 1 << 16), s0 = polygrad::define_var("s0", 0, 352);
  UOpRef i = range(n0, 0), j = range(idx(256), 1), kk = range(idx(32), 2);
  UOpRef o = global(0, dtypes::float32), x = global(1, dtypes::float32),
         w = global(2, dtypes::float32);
  UOpRef ast = sink({store(
      o, i * 256 + j, reduce(Op::ADD, load(x, i * 384 + kk + s0) * load(w, kk * 256 + j), {kk}))});
  for (const int bits : {64, 32}) {
    Target t = group_target();
    t.caps.index_bits = static_cast<uint32_t>(bits);
    const LoweredKernel k = polygrad::codegen::lower(ast, t);
    expect_valid(k);
    EXPECT_EQ(count(k, PG_OP_DEFINE_LOCAL), 2) << bits << "-bit: the tile form";
    ASSERT_EQ(k.vars.size(), 2u) << bits;
    EXPECT_EQ(k.vars[0].name, "n0");
    EXPECT_EQ(k.vars[1].name, "s0");
    EXPECT_EQ(count(k, PG_OP_PARAM_SCALAR), 2) << bits;
    if (bits == 32) {
      EXPECT_EQ(count_int64(k), 2) << "int64: only the two parameters, cast to the int32 math";
    }
    EXPECT_EQ(k.launch_global({{"n0", 100}, {"s0", 3}})[0], 2 * 4);  // ceil(100/64) x 256/64
  }
}

}  // namespace
}  // namespace polygrad_test
