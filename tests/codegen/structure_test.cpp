// Symbolic sizes, determinism, kernel names, launch sizes and malformed input.
#include <gtest/gtest.h>

#include <cstring>

#include "codegen/lower.hpp"
#include "harness.hpp"
#include "ir/error.hpp"

namespace polygrad_test {
namespace {

using polygrad::range;

TEST(Symbolic, OneProgramServesEveryValue) {
  // rows[r] = sum_k x[r * n + k] * 2 over a symbolic n x n matrix: the extent of the SPECIAL,
  // the reduce range (split in lanes plus a tail) and the index math all depend on n.
  UOpRef n = polygrad::define_var("n", 1, 4096);
  UOpRef r = range(n, 0), k = range(n, 1);
  UOpRef o = global(0, dtypes::int32), x = global(1, dtypes::int32);
  UOpRef ast = sink({store(
      o, r, reduce(Op::ADD, load(x, r * n + k) * polygrad::const_int(dtypes::int32, 2), {k}))});
  Compiled c = compile(ast);
  EXPECT_EQ(c.kernel.name, "r_n");
  ASSERT_EQ(c.kernel.vars.size(), 1u);
  EXPECT_EQ(c.kernel.vars[0].name, "n");
  const pg_program_t handle = c.program.handle();
  for (int64_t v : {1, 7, 8, 19, 300}) {
    // Lowering again gives the same bytes, so a runtime cache finds the program it has.
    polygrad::codegen::LoweredKernel again = polygrad::codegen::lower(ast, cpu_target());
    ASSERT_EQ(again.instructions.size(), c.kernel.instructions.size());
    EXPECT_EQ(std::memcmp(again.instructions.data(), c.kernel.instructions.data(),
                          again.instructions.size() * sizeof(pg_instruction)),
              0);
    EXPECT_EQ(again.operands, c.kernel.operands);
    std::vector<int32_t> vx(v * v);
    for (int64_t t = 0; t < v * v; ++t) vx[t] = static_cast<int32_t>(t % 13) - 6;
    std::vector<HostBuf> bufs{HostBuf::zeros<int32_t>(v), HostBuf::of(vx)};
    EXPECT_EQ(c.kernel.launch_global({{"n", v}})[0], static_cast<uint32_t>(v));
    run(c, bufs, {{"n", v}});
    EXPECT_EQ(c.program.handle(), handle);
    std::vector<int32_t> got = bufs[0].as<int32_t>();
    for (int64_t row = 0; row < v; ++row) {
      int32_t want = 0;
      for (int64_t col = 0; col < v; ++col) want += vx[row * v + col] * 2;
      ASSERT_EQ(got[row], want) << "n = " << v << " row " << row;
    }
  }
}

TEST(Symbolic, LaunchSizeNeedsItsVariable) {
  UOpRef n = polygrad::define_var("n", 1, 100);
  UOpRef r = range(n * 2, 0);
  UOpRef o = global(0, dtypes::int32);
  polygrad::codegen::LoweredKernel k =
      polygrad::codegen::lower(sink({store(o, r, polygrad::cast(r, dtypes::int32))}), cpu_target());
  EXPECT_EQ(k.launch_global({{"n", 21}})[0], 42u);
  EXPECT_EQ(k.name.rfind("E_s_", 0), 0u) << k.name;  // an expression extent: hashed
  try {
    k.launch_global({});
    FAIL() << "expected an error";
  } catch (const polygrad::IrError& e) {
    EXPECT_NE(std::string(e.what()).find("'n'"), std::string::npos) << e.what();
  }
}

TEST(Structure, NamesAndLaunch) {
  // (A transpose of rows shorter than a tile: not tiled, see loop_order.hpp.)
  UOpRef i = range(idx(64), 0), j = range(idx(8), 1);
  UOpRef o = global(0, dtypes::float32), x = global(1, dtypes::float32);
  polygrad::codegen::LoweredKernel k =
      polygrad::codegen::lower(sink({store(o, i * 8 + j, load(x, j * 64 + i))}), cpu_target());
  EXPECT_EQ(k.name, "E_64_8");
  EXPECT_EQ(k.buffer_count, 2u);
  EXPECT_TRUE(k.vars.empty());
  EXPECT_EQ(k.launch_global({}), (std::array<uint32_t, 3>{64, 1, 1}));
  EXPECT_EQ(k.local_size, (std::array<uint32_t, 3>{1, 1, 1}));
  pg_kernel_program p = k.program();
  EXPECT_EQ(std::string(p.name), "E_64_8");
  EXPECT_EQ(p.instruction_count, k.instructions.size());
  EXPECT_EQ(p.scalar_count, 0u);
}

TEST(Structure, NoSpecialWhenTheTargetHasNoGlobalDims) {
  polygrad::codegen::Target t = cpu_target();
  t.caps.max_global_dims[0] = 10;  // smaller than the extent: stays a loop
  UOpRef r = range(idx(64), 0);
  UOpRef o = global(0, dtypes::int32);
  polygrad::codegen::LoweredKernel k =
      polygrad::codegen::lower(sink({store(o, r, polygrad::cast(r, dtypes::int32))}), t);
  int specials = 0, ranges = 0;
  for (const pg_instruction& in : k.instructions) {
    specials += in.op == PG_OP_SPECIAL;
    ranges += in.op == PG_OP_RANGE;
  }
  EXPECT_EQ(specials, 0);
  EXPECT_EQ(ranges, 1);
  EXPECT_EQ(k.launch_global({})[0], 1u);
  Compiled c = compile(sink({store(o, r, polygrad::cast(r, dtypes::int32))}), t);
  std::vector<HostBuf> bufs{HostBuf::zeros<int32_t>(64)};
  run(c, bufs);
  for (int v = 0; v < 64; ++v) ASSERT_EQ(bufs[0].as<int32_t>()[v], v);
}

/// The IrError message lower() throws for `ast`, or "" when it does not throw.
std::string lower_error(const UOpRef& ast, const polygrad::codegen::Target& t = cpu_target()) {
  try {
    polygrad::codegen::lower(ast, t);
  } catch (const polygrad::IrError& e) {
    return e.what();
  }
  return "";
}

TEST(Malformed, StoreOfWrongDtypeNamesTheStore) {
  UOpRef r = range(idx(4), 0);
  UOpRef o = global(0, dtypes::int32), x = global(1, dtypes::float32);
  std::string e = lower_error(sink({store(o, r, load(x, r))}));
  EXPECT_NE(e.find("STORE"), std::string::npos) << e;
  EXPECT_NE(e.find("float32"), std::string::npos) << e;
}

TEST(Malformed, RangeWithFloatEndNamesTheRange) {
  UOpRef r = UOp::make(Op::RANGE, dtypes::float32, {polygrad::const_float(dtypes::float32, 4.0)},
                       int64_t{0});
  UOpRef o = global(0, dtypes::int32);
  std::string e = lower_error(sink({store(o, idx(0), polygrad::cast(r, dtypes::int32))}));
  EXPECT_NE(e.find("RANGE"), std::string::npos) << e;
}

TEST(Malformed, ReduceRangeOutsideItsReduce) {
  UOpRef k = range(idx(8), 0);
  UOpRef o = global(0, dtypes::float32), x = global(1, dtypes::float32);
  // The stored value uses k outside the REDUCE over k.
  std::string e =
      lower_error(sink({store(o, idx(0), reduce(Op::ADD, load(x, k), {k}) + load(x, k))}));
  EXPECT_NE(e.find("outside its"), std::string::npos) << e;
}

TEST(Malformed, OpNotAllowedInAKernel) {
  UOpRef o = global(0, dtypes::float32);
  UOpRef buf = UOp::make(Op::DETACH, dtypes::float32, {polygrad::const_float(dtypes::float32, 1)});
  std::string e = lower_error(sink({store(o, idx(0), buf)}));
  EXPECT_NE(e.find("DETACH"), std::string::npos) << e;
}

}  // namespace
}  // namespace polygrad_test
