// Kernels built with ProgramBuilder, run on the plugin, checked against plain C++.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <limits>

#include "harness.hpp"

namespace polygrad::test {
namespace {

using sdk::ProgramBuilder;

std::map<std::string, std::string> no_cache(int threads = 2) {
  return {{"cache", "false"}, {"threads", std::to_string(threads)}};
}

/// out[i] = a[i] * b[i] + c[i], max'ed with 0 (relu of an FMA).
ProgramBuilder fma_relu_f32() {
  ProgramBuilder b("fma_relu_f32");
  auto out = b.param_buffer(0, PG_DTYPE_FLOAT32);
  auto x = b.param_buffer(1, PG_DTYPE_FLOAT32);
  auto y = b.param_buffer(2, PG_DTYPE_FLOAT32);
  auto z = b.param_buffer(3, PG_DTYPE_FLOAT32);
  auto i = b.special(PG_SPECIAL_GLOBAL, 0);
  auto v =
      b.ternary(PG_OP_MULACC, b.load(b.index(x, i)), b.load(b.index(y, i)), b.load(b.index(z, i)));
  b.store(b.index(out, i), b.binary(PG_OP_MAX, v, b.const_f(PG_DTYPE_FLOAT32, 0.0)));
  return b;
}

/// Runs fma_relu_f32 on `p` over 1000 elements: the index of the first wrong one, or -1.
int64_t fma_relu_first_wrong(Plugin& p) {
  const size_t n = 1000;
  std::vector<float> a(n), bb(n), c(n);
  for (size_t k = 0; k < n; ++k) {
    a[k] = 0.5f * static_cast<float>(k) - 100.0f;
    bb[k] = 0.25f * static_cast<float>(k % 7) - 0.5f;
    c[k] = static_cast<float>(k % 13) - 6.0f;
  }
  auto out = p.alloc(n * 4);
  auto ba = p.upload(a), bbb = p.upload(bb), bc = p.upload(c);
  auto builder = fma_relu_f32();
  p.run_once(builder, {out, ba, bbb, bc}, {}, {static_cast<uint32_t>(n), 1, 1});
  auto got = p.download<float>(out, n);
  for (size_t k = 0; k < n; ++k)
    // Every product and sum here is exact in float, so fused or not gives the same value.
    if (got[k] != std::max(a[k] * bb[k] + c[k], 0.0f)) return static_cast<int64_t>(k);
  return -1;
}

void check_fma_relu(int threads) {
  Plugin p(no_cache(threads));
  EXPECT_EQ(fma_relu_first_wrong(p), -1) << "threads " << threads;
}

TEST(CpuClangKernels, ElementwiseF32OneThread) {
  check_fma_relu(1);
}
TEST(CpuClangKernels, ElementwiseF32TwoThreads) {
  check_fma_relu(2);
}
TEST(CpuClangKernels, ElementwiseF32FourThreads) {
  check_fma_relu(4);
}

// The JIT is created on a thread of its own when the device opens: a device closed at once
// (the creation still running) and one whose first load races the creation both work.
TEST(CpuClangKernels, DevicesClosedOrUsedWhileTheirJitIsBeingCreated) {
  for (int k = 0; k < 8; ++k) Plugin closed_at_once(no_cache(1));
  for (int k = 0; k < 3; ++k) check_fma_relu(1);
}

// A child forked right after the device opens (its JIT still being created in the parent:
// the fork waits for that) compiles, links and runs a kernel, and exits.
TEST(CpuClangKernels, ChildForkedWhileTheJitIsBeingCreatedCanUseIt) {
  for (int k = 0; k < 3; ++k) {
    Plugin p(no_cache(1));
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) ::_exit(fma_relu_first_wrong(p) == -1 ? 0 : 1);
    int status = 0;
    pid_t done = 0;
    for (int waited_ms = 0; waited_ms < 60000 && done == 0; waited_ms += 10) {
      done = ::waitpid(pid, &status, WNOHANG);
      if (done == 0) ::usleep(10000);
    }
    if (done == 0) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      FAIL() << "the forked child did not finish within 60 s";
    }
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "child status " << status;
  }
}

// A program runs small launches on the calling thread once it has measured a step, and large
// ones over the threads: one program launched at row counts small and large, in turn, must
// write every row of every launch and nothing past it.
TEST(CpuClangKernels, LaunchesOfOneProgramAtSmallAndLargeRowCountsWriteEveryRow) {
  Plugin p(no_cache(2));
  const size_t n = 1 << 18;
  std::vector<float> a(n), bb(n), c(n);
  for (size_t k = 0; k < n; ++k) {
    a[k] = static_cast<float>(k % 1000) - 500.0f;
    bb[k] = 0.5f;
    c[k] = static_cast<float>(k % 3);
  }
  auto out = p.alloc(n * 4);
  auto ba = p.upload(a), bbb = p.upload(bb), bc = p.upload(c);
  auto builder = fma_relu_f32();
  pg_program_t program = p.build(builder);
  const std::vector<float> unwritten(n, -1.0f);
  for (int round = 0; round < 40; ++round) {
    for (size_t rows : {size_t{3}, n, size_t{17}, n / 2 + 1, size_t{2}}) {
      p.copy_in(out, unwritten.data(), n * 4);
      p.run(program, {out, ba, bbb, bc}, {}, {static_cast<uint32_t>(rows), 1, 1});
      auto got = p.download<float>(out, n);
      for (size_t k = 0; k < n; ++k) {
        float want = k < rows ? std::max(a[k] * 0.5f + c[k], 0.0f) : -1.0f;
        ASSERT_EQ(got[k], want) << "element " << k << " of " << rows << " rows, round " << round;
      }
    }
  }
  p.unload(program);
}

TEST(CpuClangKernels, ElementwiseI32TruncatingDivisionAndShifts) {
  Plugin p(no_cache());
  ProgramBuilder b("int_ops");
  auto out = b.param_buffer(0, PG_DTYPE_INT32);
  auto x = b.param_buffer(1, PG_DTYPE_INT32);
  auto y = b.param_buffer(2, PG_DTYPE_INT32);
  auto i = b.special(PG_SPECIAL_GLOBAL, 0);
  auto a = b.load(b.index(x, i));
  auto c = b.load(b.index(y, i));
  auto q = b.binary(PG_OP_IDIV, a, c);
  auto r = b.binary(PG_OP_MOD, a, c);
  auto shr = b.binary(PG_OP_SHR, a, b.const_i(PG_DTYPE_INT32, 2));
  // out = (a / c) * 1000 + (a % c) * 10 + (a >> 2) ^ 1
  auto t = b.binary(PG_OP_ADD, b.binary(PG_OP_MUL, q, b.const_i(PG_DTYPE_INT32, 1000)),
                    b.binary(PG_OP_MUL, r, b.const_i(PG_DTYPE_INT32, 10)));
  b.store(b.index(out, i),
          b.binary(PG_OP_ADD, t, b.binary(PG_OP_XOR, shr, b.const_i(PG_DTYPE_INT32, 1))));
  std::vector<int32_t> va = {7, -7, 7, -7, 0, 100, -100, 2147483647};
  std::vector<int32_t> vc = {2, 2, -2, -2, 5, 7, 7, 3};
  auto bo = p.alloc(va.size() * 4);
  auto ba = p.upload(va), bc = p.upload(vc);
  p.run_once(b, {bo, ba, bc}, {}, {static_cast<uint32_t>(va.size()), 1, 1});
  auto got = p.download<int32_t>(bo, va.size());
  // Hand-derived: C truncates toward zero, % takes the sign of a, >> is arithmetic.
  std::vector<int32_t> want = {
      3000 + 10 + (1 ^ 1), -3000 - 10 + (-2 ^ 1), -3000 + 10 + (1 ^ 1),    3000 - 10 + (-2 ^ 1),
      0 + 0 + (0 ^ 1),     14000 + 20 + (25 ^ 1), -14000 - 20 + (-25 ^ 1), 0};
  // The last product overflows int32 and wraps (kernels are compiled with -fwrapv).
  want[7] = static_cast<int32_t>(static_cast<uint32_t>(715827882u * 1000u) + 10u +
                                 static_cast<uint32_t>(536870911 ^ 1));
  EXPECT_EQ(got, want);
}

TEST(CpuClangKernels, ReductionWithRangeAndRegisterAccumulator) {
  Plugin p(no_cache());
  const int rows = 37, cols = 129;
  ProgramBuilder b("row_sum");
  auto out = b.param_buffer(0, PG_DTYPE_FLOAT64);
  auto x = b.param_buffer(1, PG_DTYPE_FLOAT64);
  auto row = b.special(PG_SPECIAL_GLOBAL, 0);
  auto acc = b.define_reg(PG_DTYPE_FLOAT64, 1);
  auto zero = b.const_i(PG_DTYPE_INT32, 0);
  b.store(b.index(acc, zero), b.const_f(PG_DTYPE_FLOAT64, 0.0));
  auto j = b.range(b.const_i(PG_DTYPE_INT32, cols), 0);
  auto idx = b.binary(PG_OP_ADD, b.binary(PG_OP_MUL, row, b.const_i(PG_DTYPE_INT32, cols)), j);
  auto sum = b.binary(PG_OP_ADD, b.load(b.index(acc, zero)), b.load(b.index(x, idx)));
  b.store(b.index(acc, zero), sum);
  b.end_range(j);
  b.store(b.index(out, row), b.load(b.index(acc, zero)));
  std::vector<double> vx(rows * cols);
  for (size_t k = 0; k < vx.size(); ++k) vx[k] = std::sin(static_cast<double>(k));
  auto bo = p.alloc(rows * 8);
  auto bx = p.upload(vx);
  p.run_once(b, {bo, bx}, {}, {rows, 1, 1});
  auto got = p.download<double>(bo, rows);
  for (int r = 0; r < rows; ++r) {
    double want = 0;
    for (int c = 0; c < cols; ++c) want += vx[r * cols + c];
    EXPECT_NEAR(got[r], want, 1e-12) << "row " << r;
  }
}

TEST(CpuClangKernels, VectorLoadStore) {
  Plugin p(no_cache());
  ProgramBuilder b("vec4_scale");
  auto out = b.param_buffer(0, PG_DTYPE_FLOAT32);
  auto x = b.param_buffer(1, PG_DTYPE_FLOAT32);
  auto i = b.special(PG_SPECIAL_GLOBAL, 0);
  auto base = b.binary(PG_OP_MUL, i, b.const_i(PG_DTYPE_INT32, 4));
  auto v = b.load(b.index(x, base), 4);
  auto two = b.const_f(PG_DTYPE_FLOAT32, 2.0, 4);
  auto scaled = b.binary(PG_OP_MUL, v, two);
  // Reverse the lanes with GEP + VECTORIZE, then add lane 0 of the original to each.
  auto rev = b.vectorize({b.gep(scaled, 3), b.gep(scaled, 2), b.gep(scaled, 1), b.gep(scaled, 0)});
  b.store(
      b.index(out, base),
      b.binary(PG_OP_ADD, rev, b.vectorize({b.gep(v, 0), b.gep(v, 0), b.gep(v, 0), b.gep(v, 0)})));
  const uint32_t groups = 25;
  std::vector<float> vx(groups * 4);
  for (size_t k = 0; k < vx.size(); ++k) vx[k] = static_cast<float>(k) * 0.5f;
  auto bo = p.alloc(vx.size() * 4);
  auto bx = p.upload(vx);
  p.run_once(b, {bo, bx}, {}, {groups, 1, 1});
  auto got = p.download<float>(bo, vx.size());
  for (uint32_t g = 0; g < groups; ++g)
    for (int l = 0; l < 4; ++l)
      EXPECT_EQ(got[g * 4 + l], vx[g * 4 + (3 - l)] * 2.0f + vx[g * 4]) << g << "," << l;
}

// A STORE hinted PG_STORE_STREAM is a non-temporal store when the address is aligned to the
// vector and an ordinary one otherwise (scalar 0 shifts every vector by that many elements).
TEST(CpuClangKernels, StreamingStoreWritesAlignedAndUnalignedVectors) {
  Plugin p(no_cache());
  ProgramBuilder b("stream16");
  auto out = b.param_buffer(0, PG_DTYPE_FLOAT32);
  auto x = b.param_buffer(1, PG_DTYPE_FLOAT32);
  auto shift = b.param_scalar(0, PG_DTYPE_INT32);
  auto i = b.special(PG_SPECIAL_GLOBAL, 0);
  auto base = b.binary(PG_OP_MUL, i, b.const_i(PG_DTYPE_INT32, 16));
  auto v = b.load(b.index(x, base), 16);
  auto y = b.binary(PG_OP_ADD, v, b.const_f(PG_DTYPE_FLOAT32, 1.0, 16));
  b.store(b.index(out, b.binary(PG_OP_ADD, base, shift)), y, PG_STORE_STREAM);
  std::string source, error;
  ASSERT_EQ(p.render(b, source, error), PG_OK) << error;
  EXPECT_NE(source.find("__builtin_nontemporal_store"), std::string::npos) << source;
  const uint32_t groups = 40;
  std::vector<float> vx(groups * 16);
  for (size_t k = 0; k < vx.size(); ++k) vx[k] = static_cast<float>(k % 97) * 0.25f;
  for (int64_t s : {0, 1, 3}) {
    auto bx = p.upload(vx);
    auto bo = p.upload(std::vector<float>(vx.size() + 16, -5.0f));
    p.run_once(b, {bo, bx}, {s}, {groups, 1, 1});
    auto got = p.download<float>(bo, vx.size() + 16);
    for (size_t k = 0; k < got.size(); ++k) {
      const bool written = k >= static_cast<size_t>(s) && k < vx.size() + s;
      ASSERT_EQ(got[k], written ? vx[k - s] + 1.0f : -5.0f) << "shift " << s << " element " << k;
    }
  }
}

TEST(CpuClangKernels, GatedLoadGivesAlternativeAndGatedStoreSkips) {
  Plugin p(no_cache());
  ProgramBuilder b("gated");
  auto out = b.param_buffer(0, PG_DTYPE_INT32);
  auto x = b.param_buffer(1, PG_DTYPE_INT32);
  auto n = b.param_scalar(0, PG_DTYPE_INT32);
  auto i = b.special(PG_SPECIAL_GLOBAL, 0);
  auto in_bounds = b.binary(PG_OP_CMPLT, i, n);
  auto v = b.load_gated(b.index(x, i), b.const_i(PG_DTYPE_INT32, -1), in_bounds);
  b.store(b.index(out, i), v);
  // A second output written only where i is even.
  auto out2 = b.param_buffer(2, PG_DTYPE_INT32);
  auto even = b.binary(PG_OP_CMPEQ, b.binary(PG_OP_MOD, i, b.const_i(PG_DTYPE_INT32, 2)),
                       b.const_i(PG_DTYPE_INT32, 0));
  b.store_gated(b.index(out2, i), i, even);
  const int valid = 5, total = 12;
  std::vector<int32_t> vx = {10, 11, 12, 13, 14};  // exactly `valid` elements: no reads past it
  auto bx = p.upload(vx);
  auto bo = p.alloc(total * 4);
  auto bo2 = p.upload(std::vector<int32_t>(total, 77));
  p.run_once(b, {bo, bx, bo2}, {valid}, {total, 1, 1});
  auto got = p.download<int32_t>(bo, total);
  auto got2 = p.download<int32_t>(bo2, total);
  for (int k = 0; k < total; ++k) {
    EXPECT_EQ(got[k], k < valid ? 10 + k : -1) << k;
    EXPECT_EQ(got2[k], k % 2 == 0 ? k : 77) << k;
  }
}

TEST(CpuClangKernels, MultiDimGlobalLaunch) {
  Plugin p(no_cache());
  ProgramBuilder b("grid3");
  auto out = b.param_buffer(0, PG_DTYPE_INT32);
  auto g0 = b.special(PG_SPECIAL_GLOBAL, 0);
  auto g1 = b.special(PG_SPECIAL_GROUP, 1);
  auto g2 = b.special(PG_SPECIAL_GLOBAL, 2);
  auto l0 = b.special(PG_SPECIAL_LOCAL, 0);
  auto c = [&](int v) { return b.const_i(PG_DTYPE_INT32, v); };
  auto idx = b.binary(
      PG_OP_ADD, b.binary(PG_OP_MUL, b.binary(PG_OP_ADD, b.binary(PG_OP_MUL, g0, c(3)), g1), c(5)),
      g2);
  auto value =
      b.binary(PG_OP_ADD,
               b.binary(PG_OP_ADD, b.binary(PG_OP_MUL, g0, c(100)), b.binary(PG_OP_MUL, g1, c(10))),
               b.binary(PG_OP_ADD, g2, b.binary(PG_OP_MUL, l0, c(1000))));
  b.store(b.index(out, idx), value);
  auto bo = p.upload(std::vector<int32_t>(4 * 3 * 5, -1));
  p.run_once(b, {bo}, {}, {4, 3, 5});
  auto got = p.download<int32_t>(bo, 4 * 3 * 5);
  for (int a = 0; a < 4; ++a)
    for (int q = 0; q < 3; ++q)
      for (int r = 0; r < 5; ++r) EXPECT_EQ(got[(a * 3 + q) * 5 + r], a * 100 + q * 10 + r);
}

TEST(CpuClangKernels, ScalarParameters) {
  Plugin p(no_cache());
  ProgramBuilder b("axpb");
  auto out = b.param_buffer(0, PG_DTYPE_FLOAT32);
  auto x = b.param_buffer(1, PG_DTYPE_FLOAT32);
  auto alpha = b.param_scalar(0, PG_DTYPE_FLOAT32);
  auto beta = b.param_scalar(1, PG_DTYPE_INT64);
  auto i = b.special(PG_SPECIAL_GLOBAL, 0);
  auto ax = b.binary(PG_OP_MUL, b.load(b.index(x, i)), alpha);
  b.store(b.index(out, i), b.binary(PG_OP_ADD, ax, b.cast(PG_OP_CAST, PG_DTYPE_FLOAT32, beta)));
  std::vector<float> vx = {1.0f, -2.0f, 0.5f, 3.0f};
  auto bx = p.upload(vx);
  auto bo = p.alloc(vx.size() * 4);
  p.run_once(b, {bo, bx}, {f64_bits(1.5), -7}, {4, 1, 1});
  auto got = p.download<float>(bo, 4);
  for (size_t k = 0; k < vx.size(); ++k) EXPECT_EQ(got[k], vx[k] * 1.5f - 7.0f) << k;
}

TEST(CpuClangKernels, HalfPrecisionRoundsToNearestEven) {
  Plugin p(no_cache());
  ProgramBuilder b("half_add");
  auto out = b.param_buffer(0, PG_DTYPE_FLOAT16);
  auto x = b.param_buffer(1, PG_DTYPE_FLOAT16);
  auto y = b.param_buffer(2, PG_DTYPE_FLOAT16);
  auto i = b.special(PG_SPECIAL_GLOBAL, 0);
  b.store(b.index(out, i), b.binary(PG_OP_ADD, b.load(b.index(x, i)), b.load(b.index(y, i))));
  // Bit patterns (hand-derived): 1.0 = 0x3c00, 2.0 = 0x4000, 3.0 = 0x4200, 2^-10 = 0x1400,
  // 2^-11 = 0x1000, 65504 = 0x7bff, 32 = 0x5000, inf = 0x7c00, 1 + 2^-10 = 0x3c01.
  std::vector<uint16_t> vx = {0x3c00, 0x3c00, 0x3c00, 0x7bff, 0x3c01};
  std::vector<uint16_t> vy = {0x4000, 0x1400, 0x1000, 0x5000, 0x1000};
  // 1+2^-11 ties to even (1.0); 65504+32 = 65536 overflows to inf; 1+2^-10+2^-11 ties up.
  std::vector<uint16_t> want = {0x4200, 0x3c01, 0x3c00, 0x7c00, 0x3c02};
  auto bx = p.upload(vx), by = p.upload(vy);
  auto bo = p.alloc(vx.size() * 2);
  p.run_once(b, {bo, bx, by}, {}, {static_cast<uint32_t>(vx.size()), 1, 1});
  EXPECT_EQ(p.download<uint16_t>(bo, vx.size()), want);
}

TEST(CpuClangKernels, LocalArrayAndBarrierWithLocalSizeOne) {
  Plugin p(no_cache());
  ProgramBuilder b("local_roundtrip");
  auto out = b.param_buffer(0, PG_DTYPE_INT32);
  auto i = b.special(PG_SPECIAL_GLOBAL, 0);
  auto lid = b.special(PG_SPECIAL_LOCAL, 0);
  auto local = b.define_local(PG_DTYPE_INT32, 4);
  b.store(b.index(local, lid), b.binary(PG_OP_MUL, i, i));
  b.barrier();
  b.store(b.index(out, i), b.load(b.index(local, lid)));
  auto bo = p.alloc(6 * 4);
  auto prog = p.build(b);
  p.run(prog, {bo}, {}, {6, 1, 1});
  EXPECT_EQ(p.download<int32_t>(bo, 6), (std::vector<int32_t>{0, 1, 4, 9, 16, 25}));
  std::string error;
  EXPECT_EQ(p.launch(prog, {bo}, {}, {6, 1, 1}, {2, 1, 1}, error), PG_ERR_UNSUPPORTED);
  EXPECT_NE(error.find("local_size"), std::string::npos) << error;
  p.unload(prog);
}

TEST(CpuClangKernels, TooFewBuffersIsRejected) {
  Plugin p(no_cache());
  auto builder = fma_relu_f32();
  auto prog = p.build(builder);
  auto bo = p.alloc(16);
  std::string error;
  EXPECT_EQ(p.launch(prog, {bo}, {}, {4, 1, 1}, {1, 1, 1}, error), PG_ERR_INVALID_ARGUMENT);
  EXPECT_NE(error.find("takes 4 buffers"), std::string::npos) << error;
  p.unload(prog);
}

}  // namespace
}  // namespace polygrad::test
