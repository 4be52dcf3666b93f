// The device and its launches: capabilities, memory the host cannot address, launch checks,
// aligned vectors, atomics, and results that do not depend on the worker threads.
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>

#include "harness.hpp"

namespace polygrad::test {
namespace {

using Ref = sdk::ProgramBuilder::Ref;

sdk::ProgramBuilder vector_axpy(int offset);

TEST(GpuEmuDevice, DeclaresAGroupTargetWithEveryDtype) {
  Emulator emu(Options{{"threads", "3"}});
  const pg_device_properties& p = emu.properties();
  EXPECT_STREQ(p.target, "gpu_emu");
  EXPECT_NE(std::string(p.name).find("3 host threads"), std::string::npos) << p.name;
  const pg_capabilities& c = p.caps;
  EXPECT_EQ(c.flags, uint32_t{PG_CAP_GROUPS | PG_CAP_LOCAL_MEMORY | PG_CAP_ALIGNED_VECTORS |
                              PG_CAP_ATOMIC_ADD | PG_CAP_ASYNC});
  EXPECT_EQ(c.dtype_mask, ((uint64_t{1} << PG_DTYPE_COUNT) - 1) & ~uint64_t{1});  // all but void
  EXPECT_EQ(c.vector_width_bytes, 16u);
  EXPECT_EQ(c.max_vector_lanes, 8u);
  EXPECT_EQ(c.subgroup_size, 32u);
  EXPECT_EQ(c.max_threads_per_group, 1024u);
  EXPECT_EQ(c.max_local_dims[2], 64u);
  EXPECT_EQ(c.max_global_dims[0], 2147483647u);
  EXPECT_EQ(c.local_memory_bytes, 49152u);
  EXPECT_EQ(c.index_bits, 32u);
  EXPECT_EQ(c.compute_units, 3u);
}

TEST(GpuEmuDevice, RendersForItsTargetWithNoDeviceOpen) {
  Emulator emu;
  const pg_compiler_api* compiler = emu.table().compiler;
  ASSERT_NE(compiler, nullptr);
  pg_target target{};
  target.struct_size = sizeof target;
  target.caps.struct_size = sizeof target.caps;
  pg_error err{};
  ASSERT_EQ(compiler->describe_target(emu.state(), "", &target, &err), PG_OK) << err.message;
  EXPECT_STREQ(target.arch, "gpu_emu");
  EXPECT_EQ(target.caps.tensor_core_count, 2u);
  sdk::ProgramBuilder b = vector_axpy(0);
  std::string bytes;
  pg_byte_sink sink{&bytes, [](void* ctx, const void* data, uint64_t n) {
                      static_cast<std::string*>(ctx)->append(static_cast<const char*>(data), n);
                      return 0;
                    }};
  ASSERT_EQ(compiler->render(emu.state(), &target, &b.program(), &sink, &err), PG_OK)
      << err.message;
  std::string from_device;
  ASSERT_TRUE(emu.render(b, from_device).ok());
  EXPECT_EQ(bytes, from_device);
  EXPECT_EQ(compiler->describe_target(emu.state(), "sm_90", &target, &err), PG_ERR_UNSUPPORTED);
  EXPECT_NE(std::string(err.message).find("gpu_emu compiles for 'gpu_emu' only, not 'sm_90'"),
            std::string::npos)
      << err.message;
  // op_support: ATOMIC_ADD on 32- and 64-bit types, WMMA on the accumulator's float32 x4.
  EXPECT_EQ(compiler->op_support(emu.state(), &target, PG_OP_ATOMIC_ADD, PG_DTYPE_FLOAT32, 1), 1);
  EXPECT_EQ(compiler->op_support(emu.state(), &target, PG_OP_ATOMIC_ADD, PG_DTYPE_INT16, 1), 0);
  EXPECT_EQ(compiler->op_support(emu.state(), &target, PG_OP_WMMA, PG_DTYPE_FLOAT32, 4), 1);
  EXPECT_EQ(compiler->op_support(emu.state(), &target, PG_OP_WMMA, PG_DTYPE_FLOAT16, 4), 0);
  EXPECT_EQ(compiler->op_support(emu.state(), &target, PG_OP_ADD, PG_DTYPE_FLOAT16, 8), 1);
  EXPECT_EQ(compiler->op_support(emu.state(), &target, PG_OP_ADD, PG_DTYPE_FLOAT16, 16), 0);
}

TEST(GpuEmuDevice, TheHostReachesMemoryOnlyThroughCopies) {
  Emulator emu;
  EXPECT_EQ(emu.table().allocator->host_pointer, nullptr);
  EXPECT_EQ(emu.table().allocator->wrap_host, nullptr);
  EXPECT_EQ(emu.table().allocator->alignment, 256u);
  EXPECT_EQ(emu.properties().caps.flags & PG_CAP_HOST_MEMORY, 0u);
  pg_buffer_t b = emu.upload(std::vector<int32_t>{1, 2, 3});
  EXPECT_EQ(emu.download<int32_t>(b, 3), (std::vector<int32_t>{1, 2, 3}));
}

TEST(GpuEmuDevice, AnAllocationBeyondTheLargestIsRefused) {
  Emulator emu;
  pg_buffer_t b = nullptr;
  pg_error err{};
  EXPECT_EQ(emu.table().allocator->alloc(emu.device(), uint64_t{5} << 30, &b, &err),
            PG_ERR_OUT_OF_MEMORY);
  EXPECT_NE(std::string(err.message).find("exceeds the device's largest, 4294967296"),
            std::string::npos)
      << err.message;
}

/// out[i] = a[i] * 2 + 1 over float4 vectors from element `offset` of a: thread i handles
/// elements offset + 4i .. offset + 4i + 3.
sdk::ProgramBuilder vector_axpy(int offset) {
  sdk::ProgramBuilder b("axpy4");
  const Ref out = b.param_buffer(0, PG_DTYPE_FLOAT32), a = b.param_buffer(1, PG_DTYPE_FLOAT32);
  const Ref i = b.binary(PG_OP_MUL, b.special(PG_SPECIAL_GLOBAL, 0), b.const_i(PG_DTYPE_INT32, 4));
  const Ref x = b.load(b.index(a, b.binary(PG_OP_ADD, i, b.const_i(PG_DTYPE_INT32, offset))), 4);
  const Ref y = b.ternary(PG_OP_MULACC, x, b.const_f(PG_DTYPE_FLOAT32, 2.0, 4),
                          b.const_f(PG_DTYPE_FLOAT32, 1.0, 4));
  b.store(b.index(out, i), y);
  return b;
}

TEST(GpuEmuLaunch, AlignedVectorAccessesOverManyGroupsAndWorkers) {
  Emulator emu(Options{{"threads", "2"}});
  const size_t n = 4 * 1000;
  std::vector<float> a(n);
  for (size_t i = 0; i < n; ++i) a[i] = static_cast<float>(i) * 0.5f;
  pg_buffer_t out = emu.alloc(n * 4), in = emu.upload(a);
  sdk::ProgramBuilder b = vector_axpy(0);
  emu.run_ok(b, {out, in}, {1000, 1, 1});
  const std::vector<float> got = emu.download<float>(out, n);
  for (size_t i = 0; i < n; ++i) ASSERT_EQ(got[i], a[i] * 2 + 1) << i;
}

TEST(GpuEmuLaunch, AMisalignedVectorAccessIsAnErrorUnlessTheCheckIsOff) {
  std::vector<float> a(4 * 9, 1.0f);
  {
    Emulator emu;
    sdk::ProgramBuilder b = vector_axpy(1);
    const Outcome o = emu.run(b, {emu.alloc(4 * 32), emu.upload(a)}, {8, 1, 1});
    EXPECT_EQ(o.status, PG_ERR_LAUNCH);
    EXPECT_NE(o.error.find("(LOAD float32): group (0,0,0) thread 0 makes a 16-byte vector access "
                           "at element 1 of buffer 1, not aligned to 16 bytes"),
              std::string::npos)
        << o.error;
  }
  Emulator emu(Options{{"check_alignment", "false"}});
  sdk::ProgramBuilder b = vector_axpy(1);
  pg_buffer_t out = emu.alloc(4 * 32);
  emu.run_ok(b, {out, emu.upload(a)}, {8, 1, 1});
  EXPECT_EQ(emu.download<float>(out, 32), std::vector<float>(32, 3.0f));
}

TEST(GpuEmuLaunch, AnAccessPastABufferNamesTheThreadAndTheBuffer) {
  Emulator emu;
  sdk::ProgramBuilder b = vector_axpy(0);
  const Outcome o = emu.run(b, {emu.alloc(4 * 16), emu.alloc(4 * 14)}, {4, 1, 1});
  EXPECT_EQ(o.status, PG_ERR_LAUNCH);
  EXPECT_NE(o.error.find("group (3,0,0) thread 0 accesses elements 12..15 of buffer 1, which has "
                         "14"),
            std::string::npos)
      << o.error;
}

TEST(GpuEmuLaunch, AnAccessPastARegisterArrayIsAnError) {
  Emulator emu;
  sdk::ProgramBuilder b("past_reg");
  const Ref out = b.param_buffer(0, PG_DTYPE_INT32);
  const Ref i = b.special(PG_SPECIAL_GLOBAL, 0);
  const Ref regs = b.define_reg(PG_DTYPE_INT32, 4);
  b.store(b.index(regs, i), i);
  b.store(b.index(out, i), b.load(b.index(regs, i)));
  const Outcome o = emu.run(b, {emu.alloc(8 * 4)}, {8, 1, 1});
  EXPECT_EQ(o.status, PG_ERR_LAUNCH);
  EXPECT_NE(o.error.find("kernel 'past_reg' instruction 4 (STORE void): group (4,0,0) thread 0 "
                         "accesses elements 4..4 of register array %2, which has 4"),
            std::string::npos)
      << o.error;
}

TEST(GpuEmuLaunch, IntegerDivisionByZeroIsAnError) {
  Emulator emu;
  sdk::ProgramBuilder b("divide");
  const Ref out = b.param_buffer(0, PG_DTYPE_INT32);
  const Ref i = b.special(PG_SPECIAL_GLOBAL, 0);
  b.store(b.index(out, i), b.binary(PG_OP_IDIV, b.const_i(PG_DTYPE_INT32, 7),
                                    b.binary(PG_OP_SUB, i, b.const_i(PG_DTYPE_INT32, 2))));
  const Outcome o = emu.run(b, {emu.alloc(16)}, {4, 1, 1});
  EXPECT_NE(o.error.find("kernel 'divide' instruction 5 (IDIV int32): integer division by zero in "
                         "group (2,0,0) thread 0"),
            std::string::npos)
      << o.error;
}

TEST(GpuEmuLaunch, AProgramRunsOnlyWithTheLocalSizeItWasWrittenFor) {
  Emulator emu;
  sdk::ProgramBuilder b("sized");
  b.param_buffer(0, PG_DTYPE_INT32);
  b.set_local_size(64, 1, 1);
  const Outcome o = emu.run(b, {emu.alloc(4)}, {1, 1, 1}, {32, 1, 1});
  EXPECT_EQ(o.status, PG_ERR_LAUNCH);
  EXPECT_NE(o.error.find("the program was written for groups of (64,1,1) threads"),
            std::string::npos)
      << o.error;
}

TEST(GpuEmuLaunch, GroupsBeyondTheDeviceLimitsAreRefused) {
  Emulator emu;
  sdk::ProgramBuilder b("big");
  b.param_buffer(0, PG_DTYPE_INT32);
  b.set_local_size(0, 0, 0);  // any
  Outcome o = emu.run(b, {emu.alloc(4)}, {1, 1, 1}, {512, 4, 1});
  EXPECT_NE(o.error.find("a group holds at most 1024 threads"), std::string::npos) << o.error;
  o = emu.run(b, {emu.alloc(4)}, {1, 1, 1}, {1, 1, 65});
  EXPECT_NE(o.error.find("local size 2 must be 1 to 64"), std::string::npos) << o.error;
  o = emu.run(b, {emu.alloc(4)}, {1, 70000, 1}, {1, 1, 1});
  EXPECT_NE(o.error.find("the grid takes at most 65535 groups in dim 1"), std::string::npos)
      << o.error;
}

/// out[0] += in[i] over every launch index i, with ATOMIC_ADD of `dt`.
sdk::ProgramBuilder accumulate(pg_dtype dt) {
  sdk::ProgramBuilder b("accumulate");
  const Ref out = b.param_buffer(0, dt), in = b.param_buffer(1, dt);
  const Ref i = b.special(PG_SPECIAL_GLOBAL, 0);
  b.emit(PG_OP_ATOMIC_ADD, dt,
         {b.index(out, b.const_i(PG_DTYPE_INT32, 0)), b.load(b.index(in, i))});
  return b;
}

TEST(GpuEmuLaunch, FloatAtomicsAddInLaunchOrderSoEveryRunAgrees) {
  // Large and small terms: the float sum depends on the order of the additions.
  const size_t n = 20000;
  std::vector<float> in(n);
  for (size_t i = 0; i < n; ++i) in[i] = i % 3 == 0 ? 1e7f : (i % 3 == 1 ? 0.37f : -1e7f);
  float serial = 0.0f;
  for (float v : in) serial += v;
  Emulator emu(Options{{"threads", "2"}});
  for (int run = 0; run < 3; ++run) {
    pg_buffer_t out = emu.upload(std::vector<float>{0.0f});
    sdk::ProgramBuilder b = accumulate(PG_DTYPE_FLOAT32);
    emu.run_ok(b, {out, emu.upload(in)}, {static_cast<uint32_t>(n), 1, 1});
    EXPECT_EQ(emu.download<float>(out, 1)[0], serial) << "run " << run;
  }
}

TEST(GpuEmuLaunch, IntegerAtomicsFromTwoWorkersLoseNoUpdate) {
  const size_t n = 100000;
  std::vector<int64_t> in(n);
  std::iota(in.begin(), in.end(), 1);
  Emulator emu(Options{{"threads", "2"}});
  pg_buffer_t out = emu.upload(std::vector<int64_t>{5});
  sdk::ProgramBuilder b = accumulate(PG_DTYPE_INT64);
  emu.run_ok(b, {out, emu.upload(in)}, {static_cast<uint32_t>(n), 1, 1});
  EXPECT_EQ(emu.download<int64_t>(out, 1)[0], 5 + int64_t{n} * (n + 1) / 2);
}

TEST(GpuEmuLaunch, Float16ArithmeticRoundsAfterEveryOp) {
  // 2048 + 1 is not a float16 (spacing 2 there): each add rounds back to 2048 (ties to even),
  // so four adds of 1 leave 2048, where one rounding at the end would give 2052.
  Emulator emu;
  sdk::ProgramBuilder b("half_sum");
  const Ref out = b.param_buffer(0, PG_DTYPE_FLOAT16);
  Ref v = b.const_f(PG_DTYPE_FLOAT16, 2048.0);
  const Ref one = b.const_f(PG_DTYPE_FLOAT16, 1.0);
  for (int k = 0; k < 4; ++k) v = b.binary(PG_OP_ADD, v, one);
  b.store(b.index(out, b.const_i(PG_DTYPE_INT32, 0)), v);
  pg_buffer_t result = emu.alloc(2);
  emu.run_ok(b, {result}, {1, 1, 1});
  EXPECT_EQ(emu.download<uint16_t>(result, 1)[0], 0x6800);  // 2048
}

TEST(GpuEmuLaunch, LoopsWhoseTripCountsDifferPerThreadRunEachThreadsOwnCount) {
  // Thread i sums 0 .. i - 1 in a loop of i trips, inside an IF that skips odd threads.
  Emulator emu;
  sdk::ProgramBuilder b("triangle");
  const Ref out = b.param_buffer(0, PG_DTYPE_INT64);
  const Ref i = b.cast(PG_OP_CAST, PG_DTYPE_INT64, b.special(PG_SPECIAL_GLOBAL, 0));
  const Ref acc = b.define_reg(PG_DTYPE_INT64, 1);
  const Ref cell = b.index(acc, b.const_i(PG_DTYPE_INT64, 0));
  b.store(cell, b.const_i(PG_DTYPE_INT64, 0));
  const Ref even = b.if_(b.binary(PG_OP_CMPEQ, b.binary(PG_OP_MOD, i, b.const_i(PG_DTYPE_INT64, 2)),
                                  b.const_i(PG_DTYPE_INT64, 0)));
  const Ref k = b.range(i, 0);
  b.store(cell, b.binary(PG_OP_ADD, b.load(cell), k));
  b.end_range(k);
  b.end_if(even);
  b.store(b.index(out, i), b.load(cell));
  pg_buffer_t result = emu.alloc(300 * 8);
  emu.run_ok(b, {result}, {300, 1, 1});
  const std::vector<int64_t> got = emu.download<int64_t>(result, 300);
  for (int64_t t = 0; t < 300; ++t) EXPECT_EQ(got[t], t % 2 ? 0 : t * (t - 1) / 2) << t;
}

TEST(GpuEmuLaunch, GarbageIsNotAnArtifact) {
  Emulator emu;
  pg_program_t program = nullptr;
  pg_error err{};
  const std::string garbage = "PGEMU001 and then nothing that parses";
  EXPECT_EQ(
      emu.table().loader->load(emu.device(), garbage.data(), garbage.size(), "k", &program, &err),
      PG_ERR_COMPILE);
  EXPECT_NE(std::string(err.message).find("gpu_emu: artifact"), std::string::npos) << err.message;
}

}  // namespace
}  // namespace polygrad::test
