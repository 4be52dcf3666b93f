// Tensor cores: the declared shapes and element maps are those of PTX mma.sync m16n8k16, and
// WMMA over a warp computes D = A * B + C exactly (f16 and bf16 inputs, f32 accumulators).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

#include "harness.hpp"

namespace polygrad::test {
namespace {

using Ref = sdk::ProgramBuilder::Ref;

// The fragment layouts of mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 as the PTX ISA
// draws them (lane t, group = t / 4, tq = t % 4), written out here independently of the plugin:
// (row, col) of the element lane l of thread t holds.
std::pair<int, int> a_element(int t, int l) {
  const int group = t / 4, tq = t % 4;
  switch (l) {
    case 0:
    case 1:
      return {group, tq * 2 + l};
    case 2:
    case 3:
      return {group + 8, tq * 2 + l - 2};
    case 4:
    case 5:
      return {group, tq * 2 + 8 + l - 4};
    default:
      return {group + 8, tq * 2 + 8 + l - 6};
  }
}
std::pair<int, int> b_element(int t, int l) {  // (k, n)
  const int group = t / 4, tq = t % 4;
  return l < 2 ? std::pair{tq * 2 + l, group} : std::pair{tq * 2 + 8 + l - 2, group};
}
std::pair<int, int> c_element(int t, int l) {
  const int group = t / 4, tq = t % 4;
  return l < 2 ? std::pair{group, tq * 2 + l} : std::pair{group + 8, tq * 2 + l - 2};
}

/// 16-bit float bits of `x`, a value the format holds exactly (checked).
uint16_t exact_bits(double x, pg_dtype dt) {
  if (dt == PG_DTYPE_BFLOAT16) {
    const float f = static_cast<float>(x);
    uint32_t u;
    std::memcpy(&u, &f, 4);
    EXPECT_EQ(u & 0xffff, 0u) << x << " is not a bfloat16";
    return static_cast<uint16_t>(u >> 16);
  }
  if (x == 0) return 0;
  int e;
  const double m = std::frexp(std::fabs(x), &e);  // |x| = m 2^e, m in [0.5, 1)
  const double mantissa = (m * 2 - 1) * 1024;
  EXPECT_EQ(mantissa, std::floor(mantissa)) << x << " is not a float16";
  EXPECT_GE(e - 1, -14) << x << " is not a normal float16";
  return static_cast<uint16_t>((x < 0 ? 0x8000 : 0) | (e - 1 + 15) << 10 |
                               static_cast<int>(mantissa));
}

TEST(GpuEmuWmma, DeclaresTheTwoMmaShapesWithThePtxElementMaps) {
  Emulator emu;
  const pg_capabilities& caps = emu.properties().caps;
  ASSERT_EQ(caps.tensor_core_count, 2u);
  const pg_dtype inputs[2] = {PG_DTYPE_FLOAT16, PG_DTYPE_BFLOAT16};
  for (int i = 0; i < 2; ++i) {
    const pg_tensor_core& tc = caps.tensor_cores[i];
    EXPECT_EQ(tc.m, 16);
    EXPECT_EQ(tc.n, 8);
    EXPECT_EQ(tc.k, 16);
    EXPECT_EQ(tc.threads, 32);
    EXPECT_EQ(tc.dtype_a, inputs[i]);
    EXPECT_EQ(tc.dtype_b, inputs[i]);
    EXPECT_EQ(tc.dtype_c, PG_DTYPE_FLOAT32);
    ASSERT_TRUE(tc.a_map && tc.b_map && tc.c_map);
    for (int t = 0; t < 32; ++t) {
      for (int l = 0; l < 8; ++l) {
        const auto [row, col] = a_element(t, l);
        EXPECT_EQ(tc.a_map[t * 8 + l], row * 16 + col) << "A thread " << t << " lane " << l;
      }
      for (int l = 0; l < 4; ++l) {
        const auto [k, n] = b_element(t, l);
        EXPECT_EQ(tc.b_map[t * 4 + l], k * 8 + n) << "B thread " << t << " lane " << l;
        const auto [row, col] = c_element(t, l);
        EXPECT_EQ(tc.c_map[t * 4 + l], row * 8 + col) << "C thread " << t << " lane " << l;
      }
    }
  }
}

/// Groups of `local` threads, each warp w of each group g computing D_{g,w} = A_{g,w} B_{g,w}
/// + C_{g,w} with tensor core `tc` (index): thread t of the warp loads its fragments from the
/// row-major matrices at the PTX positions above. Only threads where `gate` runs (when set)
/// take part.
sdk::ProgramBuilder mma_program(int tc, pg_dtype in, std::array<uint32_t, 3> local,
                                int active_threads = -1) {
  sdk::ProgramBuilder b("mma");
  const Ref d = b.param_buffer(0, PG_DTYPE_FLOAT32), a = b.param_buffer(1, in),
            bb = b.param_buffer(2, in), c = b.param_buffer(3, PG_DTYPE_FLOAT32);
  auto i32 = [&](int64_t v) { return b.const_i(PG_DTYPE_INT32, v); };
  auto add = [&](Ref x, Ref y) { return b.binary(PG_OP_ADD, x, y); };
  auto mul = [&](Ref x, Ref y) { return b.binary(PG_OP_MUL, x, y); };
  const Ref flat = add(b.special(PG_SPECIAL_LOCAL, 0),
                       mul(i32(local[0]), add(b.special(PG_SPECIAL_LOCAL, 1),
                                              mul(i32(local[1]), b.special(PG_SPECIAL_LOCAL, 2)))));
  const uint32_t threads = local[0] * local[1] * local[2];
  const Ref warp = add(mul(b.special(PG_SPECIAL_GROUP, 0), i32(threads / 32)),
                       b.binary(PG_OP_IDIV, flat, i32(32)));
  const Ref lane = b.binary(PG_OP_MOD, flat, i32(32));
  Ref gate = 0;
  if (active_threads >= 0) gate = b.if_(b.binary(PG_OP_CMPLT, flat, i32(active_threads)));
  // Element (row, col) of a matrix of `cols` columns for lane l of this thread: row and col
  // as functions of group = lane / 4 and tq = lane % 4.
  const Ref group = b.binary(PG_OP_IDIV, lane, i32(4)), tq = b.binary(PG_OP_MOD, lane, i32(4));
  auto at = [&](int size, int cols, Ref row, Ref col) {
    return add(mul(warp, i32(size)), add(mul(row, i32(cols)), col));
  };
  std::vector<Ref> fa, fb, fc;
  for (int l = 0; l < 8; ++l) {
    const Ref row = add(group, i32(l & 2 ? 8 : 0));
    const Ref col = add(mul(tq, i32(2)), i32((l & 1) + (l & 4 ? 8 : 0)));
    fa.push_back(b.load(b.index(a, at(256, 16, row, col))));
  }
  std::vector<Ref> c_at;
  for (int l = 0; l < 4; ++l) {
    const Ref k = add(mul(tq, i32(2)), i32((l & 1) + (l & 2 ? 8 : 0)));
    fb.push_back(b.load(b.index(bb, at(128, 8, k, group))));
    const Ref row = add(group, i32(l & 2 ? 8 : 0));
    const Ref col = add(mul(tq, i32(2)), i32(l & 1));
    c_at.push_back(at(128, 8, row, col));
    fc.push_back(b.load(b.index(c, c_at.back())));
  }
  pg_arg arg;
  arg.i = tc;
  const Ref out = b.emit(PG_OP_WMMA, PG_DTYPE_FLOAT32,
                         {b.vectorize(fa), b.vectorize(fb), b.vectorize(fc)}, arg, 4);
  for (int l = 0; l < 4; ++l) b.store(b.index(d, c_at[l]), b.gep(out, l));
  if (active_threads >= 0) b.end_if(gate);
  b.set_local_size(local[0], local[1], local[2]);
  return b;
}

void check_mma(int tc, pg_dtype in, std::array<uint32_t, 3> local, uint32_t groups) {
  Emulator emu;
  const uint32_t warps = groups * local[0] * local[1] * local[2] / 32;
  std::mt19937 rng(1234 + tc);
  std::uniform_int_distribution<int> value(-128, 128);
  // Inputs i / 64: exact in float16 and bfloat16, products exact in double.
  std::vector<double> a(warps * 256), bm(warps * 128), c(warps * 128);
  std::vector<uint16_t> a_bits(a.size()), b_bits(bm.size());
  std::vector<float> c_in(c.size());
  for (size_t i = 0; i < a.size(); ++i) a_bits[i] = exact_bits(a[i] = value(rng) / 64.0, in);
  for (size_t i = 0; i < bm.size(); ++i) b_bits[i] = exact_bits(bm[i] = value(rng) / 64.0, in);
  for (size_t i = 0; i < c.size(); ++i) c[i] = c_in[i] = static_cast<float>(value(rng) / 7.0);
  pg_buffer_t d = emu.upload(std::vector<float>(c.size(), 0.0f));
  sdk::ProgramBuilder program = mma_program(tc, in, local);
  emu.run_ok(program, {d, emu.upload(a_bits), emu.upload(b_bits), emu.upload(c_in)}, {groups, 1, 1},
             {local[0], local[1], local[2]});
  const std::vector<float> got = emu.download<float>(d, c.size());
  for (uint32_t w = 0; w < warps; ++w)
    for (int row = 0; row < 16; ++row)
      for (int col = 0; col < 8; ++col) {
        double want = c[w * 128 + row * 8 + col];
        for (int k = 0; k < 16; ++k) want += a[w * 256 + row * 16 + k] * bm[w * 128 + k * 8 + col];
        const float g = got[w * 128 + row * 8 + col];
        EXPECT_LE(std::fabs(g - want), std::fabs(want) * 0x1p-24 + 1e-30)
            << "warp " << w << " D[" << row << "][" << col << "] = " << g << ", want " << want;
      }
}

TEST(GpuEmuWmma, Float16MmaOverAWarpEqualsADoubleMatmul) {
  check_mma(0, PG_DTYPE_FLOAT16, {32, 1, 1}, 1);
}

TEST(GpuEmuWmma, Bfloat16MmaOverAWarpEqualsADoubleMatmul) {
  check_mma(1, PG_DTYPE_BFLOAT16, {32, 1, 1}, 1);
}

TEST(GpuEmuWmma, WarpsAre32ConsecutiveThreadsXFastestInEveryGroup) {
  // Groups of 16 x 4 threads: warp 0 is y = 0, 1; warp 1 is y = 2, 3. Three groups.
  check_mma(0, PG_DTYPE_FLOAT16, {16, 4, 1}, 3);
}

TEST(GpuEmuWmma, AGroupThatIsNotWholeWarpsIsALaunchError) {
  Emulator emu;
  sdk::ProgramBuilder program = mma_program(0, PG_DTYPE_FLOAT16, {16, 1, 1});
  const Outcome o =
      emu.run(program, {emu.alloc(512), emu.alloc(512), emu.alloc(256), emu.alloc(512)}, {1, 1, 1},
              {16, 1, 1});
  EXPECT_EQ(o.status, PG_ERR_LAUNCH);
  EXPECT_NE(o.error.find("kernel 'mma' launched with (1,1,1) groups of (16,1,1) threads: its WMMA "
                         "runs over warps of 32 threads"),
            std::string::npos)
      << o.error;
}

TEST(GpuEmuWmma, AWarpWithSomeThreadsOutsideTheBranchIsAnError) {
  Emulator emu;
  sdk::ProgramBuilder program = mma_program(0, PG_DTYPE_FLOAT16, {32, 1, 1}, 20);
  const Outcome o =
      emu.run(program, {emu.alloc(512), emu.alloc(512), emu.alloc(256), emu.alloc(512)}, {1, 1, 1},
              {32, 1, 1});
  EXPECT_EQ(o.status, PG_ERR_LAUNCH);
  EXPECT_NE(o.error.find("(WMMA float32): warp 0 of group (0,0,0) reaches WMMA with 20 of its 32 "
                         "threads; a tensor-core op needs the whole warp"),
            std::string::npos)
      << o.error;
}

TEST(GpuEmuWmma, FragmentsOfTheWrongShapeAreRefusedWhenRendered) {
  Emulator emu;
  sdk::ProgramBuilder b("bad_mma");
  const Ref d = b.param_buffer(0, PG_DTYPE_FLOAT32);
  const Ref x = b.const_f(PG_DTYPE_FLOAT16, 1.0, 4);  // A needs 8 lanes
  const Ref y = b.const_f(PG_DTYPE_FLOAT16, 1.0, 4);
  const Ref z = b.const_f(PG_DTYPE_FLOAT32, 1.0, 4);
  const Ref out = b.emit(PG_OP_WMMA, PG_DTYPE_FLOAT32, {x, y, z}, pg_arg{0}, 4);
  b.store(b.index(d, b.const_i(PG_DTYPE_INT32, 0)), out);
  std::string artifact;
  const Outcome o = emu.render(b, artifact);
  EXPECT_EQ(o.status, PG_ERR_INVALID_ARGUMENT);
  EXPECT_NE(o.error.find("tensor core 0 takes A float16 x8, B float16 x4, C and D float32 x4"),
            std::string::npos)
      << o.error;
}

}  // namespace
}  // namespace polygrad::test
