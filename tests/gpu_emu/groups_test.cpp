// Groups for real: threads of a group that share local memory and meet at barriers, the race
// detector that reports a missing barrier, divergent barriers, and the launch indices.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "harness.hpp"

namespace polygrad::test {
namespace {

using Ref = sdk::ProgramBuilder::Ref;

Ref i32(sdk::ProgramBuilder& b, int64_t v) {
  return b.const_i(PG_DTYPE_INT32, v);
}

/// out[g] = sum of in[g * 256 .. g * 256 + 255], a tree over 256 threads in local memory:
/// every thread stores its element, then at each step s = 128, 64, .., 1 the threads below s
/// add the element s above theirs. Barrier k (0 = after the first stores, k = after step k)
/// is left out when `skip` is k.
sdk::ProgramBuilder tree_sum(int skip = -1) {
  sdk::ProgramBuilder b("tree_sum");
  const Ref out = b.param_buffer(0, PG_DTYPE_FLOAT32), in = b.param_buffer(1, PG_DTYPE_FLOAT32);
  const Ref lid = b.special(PG_SPECIAL_LOCAL, 0), gid = b.special(PG_SPECIAL_GROUP, 0);
  const Ref lm = b.define_local(PG_DTYPE_FLOAT32, 256);
  const Ref at = b.binary(PG_OP_ADD, b.binary(PG_OP_MUL, gid, i32(b, 256)), lid);
  b.store(b.index(lm, lid), b.load(b.index(in, at)));
  int barrier = 0;
  if (skip != barrier++) b.barrier();
  for (int s = 128; s >= 1; s /= 2) {
    const Ref low = b.if_(b.binary(PG_OP_CMPLT, lid, i32(b, s)));
    const Ref mine = b.index(lm, lid);
    const Ref sum =
        b.binary(PG_OP_ADD, b.load(mine), b.load(b.index(lm, b.binary(PG_OP_ADD, lid, i32(b, s)))));
    b.store(mine, sum);
    b.end_if(low);
    if (skip != barrier++) b.barrier();
  }
  const Ref first = b.if_(b.binary(PG_OP_CMPEQ, lid, i32(b, 0)));
  b.store(b.index(out, gid), b.load(b.index(lm, i32(b, 0))));
  b.end_if(first);
  b.set_local_size(256, 1, 1);
  return b;
}

std::vector<float> iota(size_t n) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<float>(i);
  return v;
}

TEST(GpuEmuGroups, TreeReductionOverOneGroupOf256ThreadsAddsEveryElement) {
  Emulator emu;
  pg_buffer_t out = emu.upload(std::vector<float>(4, -1.0f)), in = emu.upload(iota(1024));
  sdk::ProgramBuilder b = tree_sum();
  emu.run_ok(b, {out, in}, {4, 1, 1}, {256, 1, 1});
  // sum of g*256 + i for i < 256 = 65536 g + 255 * 256 / 2, exact in float32
  const std::vector<float> got = emu.download<float>(out, 4);
  for (int g = 0; g < 4; ++g) EXPECT_EQ(got[g], 65536.0f * g + 32640.0f) << "group " << g;
}

TEST(GpuEmuGroups, EveryMissingBarrierOfTheTreeIsReportedAsARace) {
  Emulator emu;
  pg_buffer_t out = emu.alloc(4 * 4), in = emu.upload(iota(1024));
  // Barriers 0 to 7 order one thread's write before another's read. (Barrier 8, after the last
  // step, orders thread 0's write of element 0 before thread 0's own read: not needed.)
  for (int skip = 0; skip <= 7; ++skip) {
    sdk::ProgramBuilder b = tree_sum(skip);
    const Outcome o = emu.run(b, {out, in}, {4, 1, 1}, {256, 1, 1});
    EXPECT_EQ(o.status, PG_ERR_LAUNCH) << "barrier " << skip << " left out";
    EXPECT_NE(o.error.find("race on local memory in group (0,0,0): thread "), std::string::npos)
        << o.error;
    EXPECT_NE(o.error.find("kernel 'tree_sum' instruction "), std::string::npos) << o.error;
  }
}

TEST(GpuEmuGroups, ABarrierBetweenOneThreadsOwnWriteAndReadIsNotNeeded) {
  Emulator emu;
  pg_buffer_t out = emu.alloc(4 * 4), in = emu.upload(iota(1024));
  sdk::ProgramBuilder b = tree_sum(8);
  emu.run_ok(b, {out, in}, {4, 1, 1}, {256, 1, 1});
  EXPECT_EQ(emu.download<float>(out, 4)[3], 65536.0f * 3 + 32640.0f);
}

TEST(GpuEmuGroups, TheRaceMessageNamesBothThreadsAndTheAccesses) {
  Emulator emu;
  pg_buffer_t out = emu.alloc(4 * 4), in = emu.upload(iota(1024));
  // Without the barrier after the first stores, thread 0 reads element 128 (its partner in
  // the first step) that thread 128 wrote.
  sdk::ProgramBuilder b = tree_sum(0);
  const Outcome o = emu.run(b, {out, in}, {4, 1, 1}, {256, 1, 1});
  EXPECT_NE(o.error.find("(LOAD float32): race on local memory in group (0,0,0): thread 0 reads "
                         "element 128 of local array %4 that thread 128 wrote since the last "
                         "barrier"),
            std::string::npos)
      << o.error;
}

TEST(GpuEmuGroups, AWriteAfterAnotherThreadsReadIsARace) {
  // Thread 1 reads lm[0]; thread 0 then writes it with no barrier between.
  Emulator emu;
  sdk::ProgramBuilder b("war");
  const Ref out = b.param_buffer(0, PG_DTYPE_FLOAT32);
  const Ref lid = b.special(PG_SPECIAL_LOCAL, 0);
  const Ref lm = b.define_local(PG_DTYPE_FLOAT32, 2);
  b.store(b.index(lm, lid), b.const_f(PG_DTYPE_FLOAT32, 1.0));
  b.barrier();
  const Ref one = b.if_(b.binary(PG_OP_CMPEQ, lid, i32(b, 1)));
  b.store(b.index(out, i32(b, 0)), b.load(b.index(lm, i32(b, 0))));
  b.end_if(one);
  const Ref zero = b.if_(b.binary(PG_OP_CMPEQ, lid, i32(b, 0)));
  b.store(b.index(lm, i32(b, 0)), b.const_f(PG_DTYPE_FLOAT32, 2.0));
  b.end_if(zero);
  b.set_local_size(2, 1, 1);
  const Outcome o = emu.run(b, {emu.alloc(4)}, {1, 1, 1}, {2, 1, 1});
  EXPECT_EQ(o.status, PG_ERR_LAUNCH);
  EXPECT_NE(o.error.find("thread 0 writes element 0 of local array %2 that thread 1 read since "
                         "the last barrier"),
            std::string::npos)
      << o.error;
}

TEST(GpuEmuGroups, TwoThreadsWritingOneElementIsARace) {
  Emulator emu;
  sdk::ProgramBuilder b("waw");
  b.param_buffer(0, PG_DTYPE_INT32);
  const Ref lm = b.define_local(PG_DTYPE_INT32, 1);
  b.store(b.index(lm, i32(b, 0)), b.special(PG_SPECIAL_LOCAL, 0));
  b.set_local_size(8, 1, 1);
  const Outcome o = emu.run(b, {emu.alloc(4)}, {1, 1, 1}, {8, 1, 1});
  EXPECT_NE(o.error.find("thread 1 writes element 0 of local array %1 that thread 0 wrote"),
            std::string::npos)
      << o.error;
}

TEST(GpuEmuGroups, AtomicAddsOnLocalMemoryAreNotARace) {
  // Every thread of a group adds its id into lm[0] (after thread 0 zeroes it and a barrier),
  // then thread 0 stores the total.
  Emulator emu;
  sdk::ProgramBuilder b("local_atomic");
  const Ref out = b.param_buffer(0, PG_DTYPE_INT32);
  const Ref lid = b.special(PG_SPECIAL_LOCAL, 0), gid = b.special(PG_SPECIAL_GROUP, 0);
  const Ref lm = b.define_local(PG_DTYPE_INT32, 1);
  const Ref cell = b.index(lm, i32(b, 0));
  const Ref first = b.binary(PG_OP_CMPEQ, lid, i32(b, 0));
  Ref block = b.if_(first);
  b.store(cell, i32(b, 0));
  b.end_if(block);
  b.barrier();
  b.emit(PG_OP_ATOMIC_ADD, PG_DTYPE_INT32, {cell, lid});
  b.barrier();
  block = b.if_(first);
  b.store(b.index(out, gid), b.load(cell));
  b.end_if(block);
  b.set_local_size(64, 1, 1);
  pg_buffer_t result = emu.alloc(3 * 4);
  emu.run_ok(b, {result}, {3, 1, 1}, {64, 1, 1});
  EXPECT_EQ(emu.download<int32_t>(result, 3), (std::vector<int32_t>{2016, 2016, 2016}));
}

TEST(GpuEmuGroups, ABarrierOnlySomeThreadsOfAGroupReachIsAnError) {
  Emulator emu;
  sdk::ProgramBuilder b("divergent");
  b.param_buffer(0, PG_DTYPE_INT32);
  const Ref lid = b.special(PG_SPECIAL_LOCAL, 0);
  const Ref some = b.if_(b.binary(PG_OP_CMPLT, lid, i32(b, 100)));
  b.barrier();
  b.end_if(some);
  b.set_local_size(128, 1, 1);
  const Outcome o = emu.run(b, {emu.alloc(4)}, {2, 1, 1}, {128, 1, 1});
  EXPECT_EQ(o.status, PG_ERR_LAUNCH);
  EXPECT_NE(o.error.find("kernel 'divergent' instruction 5 (BARRIER void): divergent barrier in "
                         "group (0,0,0): thread 0 reached it and thread 100 did not"),
            std::string::npos)
      << o.error;
}

TEST(GpuEmuGroups, ABarrierReachedByWholeGroupsOnlyIsFine) {
  // Groups 0 and 2 take the branch, group 1 does not: each group is uniform.
  Emulator emu;
  sdk::ProgramBuilder b("uniform");
  const Ref out = b.param_buffer(0, PG_DTYPE_INT32);
  const Ref lid = b.special(PG_SPECIAL_LOCAL, 0), gid = b.special(PG_SPECIAL_GROUP, 0);
  const Ref even = b.if_(b.binary(PG_OP_CMPEQ, b.binary(PG_OP_MOD, gid, i32(b, 2)), i32(b, 0)));
  b.barrier();
  b.store(b.index(out, b.binary(PG_OP_ADD, b.binary(PG_OP_MUL, gid, i32(b, 4)), lid)), gid);
  b.end_if(even);
  b.set_local_size(4, 1, 1);
  pg_buffer_t result = emu.upload(std::vector<int32_t>(12, -1));
  emu.run_ok(b, {result}, {3, 1, 1}, {4, 1, 1});
  EXPECT_EQ(emu.download<int32_t>(result, 12),
            (std::vector<int32_t>{0, 0, 0, 0, -1, -1, -1, -1, 2, 2, 2, 2}));
}

TEST(GpuEmuGroups, ABarrierInALoopOfDifferentTripCountsIsAnError) {
  Emulator emu;
  sdk::ProgramBuilder b("ragged_loop");
  b.param_buffer(0, PG_DTYPE_INT32);
  const Ref lid = b.special(PG_SPECIAL_LOCAL, 0);
  const Ref loop = b.range(b.binary(PG_OP_ADD, lid, i32(b, 1)), 0);  // thread t: t + 1 trips
  b.barrier();
  b.end_range(loop);
  b.set_local_size(4, 1, 1);
  const Outcome o = emu.run(b, {emu.alloc(4)}, {1, 1, 1}, {4, 1, 1});
  EXPECT_NE(o.error.find("divergent barrier in group (0,0,0): thread 1 reached it and thread 0 "
                         "did not"),
            std::string::npos)
      << o.error;
}

TEST(GpuEmuGroups, LocalMemoryStartsAsNaNSoAMissingWriteShows) {
  Emulator emu;
  sdk::ProgramBuilder b("unwritten");
  const Ref out = b.param_buffer(0, PG_DTYPE_FLOAT32);
  const Ref lid = b.special(PG_SPECIAL_LOCAL, 0);
  const Ref lm = b.define_local(PG_DTYPE_FLOAT32, 8);
  b.store(b.index(out, lid), b.load(b.index(lm, lid)));
  b.set_local_size(8, 1, 1);
  pg_buffer_t result = emu.upload(std::vector<float>(8, 0.0f));
  emu.run_ok(b, {result}, {1, 1, 1}, {8, 1, 1});
  for (float v : emu.download<float>(result, 8)) EXPECT_TRUE(std::isnan(v));
}

TEST(GpuEmuGroups, AnAccessPastALocalArrayIsAnError) {
  Emulator emu;
  sdk::ProgramBuilder b("past_local");
  const Ref out = b.param_buffer(0, PG_DTYPE_FLOAT32);
  const Ref lid = b.special(PG_SPECIAL_LOCAL, 0);
  const Ref lm = b.define_local(PG_DTYPE_FLOAT32, 16);
  b.store(b.index(lm, b.binary(PG_OP_ADD, lid, i32(b, 1))), b.const_f(PG_DTYPE_FLOAT32, 0.0));
  b.store(b.index(out, i32(b, 0)), b.const_f(PG_DTYPE_FLOAT32, 0.0));
  b.set_local_size(16, 1, 1);
  const Outcome o = emu.run(b, {emu.alloc(4)}, {1, 1, 1}, {16, 1, 1});
  EXPECT_EQ(o.status, PG_ERR_LAUNCH);
  EXPECT_NE(o.error.find("(STORE void): group (0,0,0) thread 15 accesses elements 16..16 of local "
                         "array %2, which has 16"),
            std::string::npos)
      << o.error;
}

TEST(GpuEmuGroups, LaunchIndicesOverA3dGrid) {
  // 3 x 2 x 2 groups of 4 x 2 x 2 threads; thread (X, Y, Z) of the 12 x 4 x 4 grid writes its
  // nine indices (group, local, global in x, y, z) at 9 * (X + 12 * (Y + 4 * Z)).
  Emulator emu;
  sdk::ProgramBuilder b("indices");
  const Ref out = b.param_buffer(0, PG_DTYPE_INT32);
  const Ref gx = b.special(PG_SPECIAL_GLOBAL, 0), gy = b.special(PG_SPECIAL_GLOBAL, 1),
            gz = b.special(PG_SPECIAL_GLOBAL, 2);
  const Ref linear = b.binary(
      PG_OP_ADD, gx,
      b.binary(PG_OP_MUL, i32(b, 12), b.binary(PG_OP_ADD, gy, b.binary(PG_OP_MUL, i32(b, 4), gz))));
  const Ref base = b.binary(PG_OP_MUL, linear, i32(b, 9));
  int k = 0;
  for (pg_special_kind kind : {PG_SPECIAL_GROUP, PG_SPECIAL_LOCAL, PG_SPECIAL_GLOBAL})
    for (int d = 0; d < 3; ++d)
      b.store(b.index(out, b.binary(PG_OP_ADD, base, i32(b, k++))), b.special(kind, d));
  b.set_local_size(4, 2, 2);
  pg_buffer_t result = emu.upload(std::vector<int32_t>(12 * 4 * 4 * 9, -1));
  emu.run_ok(b, {result}, {3, 2, 2}, {4, 2, 2});
  const std::vector<int32_t> got = emu.download<int32_t>(result, 12 * 4 * 4 * 9);
  const int local[3] = {4, 2, 2};
  for (int z = 0; z < 4; ++z)
    for (int y = 0; y < 4; ++y)
      for (int x = 0; x < 12; ++x) {
        const int xyz[3] = {x, y, z};
        const size_t at = 9 * (x + 12 * (y + 4 * z));
        for (int d = 0; d < 3; ++d) {
          EXPECT_EQ(got[at + d], xyz[d] / local[d]) << x << "," << y << "," << z;
          EXPECT_EQ(got[at + 3 + d], xyz[d] % local[d]) << x << "," << y << "," << z;
          EXPECT_EQ(got[at + 6 + d], xyz[d]) << x << "," << y << "," << z;
        }
      }
}

}  // namespace
}  // namespace polygrad::test
