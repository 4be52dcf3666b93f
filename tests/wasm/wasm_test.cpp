// The wasm plugin through its C tables (tests/plugin_driver): the renderer's semantics on
// hand-built programs against hand-computed values, the module format, traps, memory limits;
// every case on every engine built (v8, interp).
#include <gtest/gtest.h>

#include <sys/mman.h>

#include <csignal>
#include <cstdio>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <thread>

#include "../plugin_driver/plugin_driver.hpp"

namespace polygrad::test {
namespace {

using Ref = sdk::ProgramBuilder::Ref;

/// The v8 engine's way of compiling for this run: $POLYGRAD_WASM_COMPILE (ctest runs the
/// suite once with each), else the plugin's default.
std::string compile_mode() {
  const char* mode = std::getenv("POLYGRAD_WASM_COMPILE");
  return mode != nullptr && *mode != '\0' ? mode : "tiered";
}

class Wasm : public PluginDriver {
 public:
  explicit Wasm(const std::string& engine)
      : PluginDriver(POLYGRAD_WASM_PATH, PG_ARTIFACT_WASM,
                     {{"engine", engine}, {"compile", compile_mode()}}) {}
};

/// The engines this build has; each suite below runs on every one.
std::vector<std::string> engines() {
#if POLYGRAD_WASM_HAVE_V8
  return {"v8", "interp"};
#else
  return {"interp"};
#endif
}

class WasmRenderer : public ::testing::TestWithParam<std::string> {};
class WasmDevice : public ::testing::TestWithParam<std::string> {};
INSTANTIATE_TEST_SUITE_P(Engine, WasmRenderer, ::testing::ValuesIn(engines()),
                         [](const auto& info) { return info.param; });
INSTANTIATE_TEST_SUITE_P(Engine, WasmDevice, ::testing::ValuesIn(engines()),
                         [](const auto& info) { return info.param; });

/// out[i] = op(a[i], b[i]) over n elements of dtype T (the result dtype R).
template <typename R, typename T>
std::vector<R> binary(Wasm& w, pg_op op, pg_dtype dt, pg_dtype rdt, const std::vector<T>& a,
                      const std::vector<T>& b) {
  sdk::ProgramBuilder pb("binary");
  Ref out = pb.param_buffer(0, rdt), x = pb.param_buffer(1, dt), y = pb.param_buffer(2, dt);
  Ref i = pb.special(PG_SPECIAL_GLOBAL, 0);
  Ref v = pb.binary(op, pb.load(pb.index(x, i)), pb.load(pb.index(y, i)));
  pb.store(pb.index(out, i), v);
  pg_buffer_t bo = w.alloc(a.size() * sizeof(R)), ba = w.upload(a), bb = w.upload(b);
  w.run_once(pb, {bo, ba, bb}, {}, {static_cast<uint32_t>(a.size()), 1, 1});
  return w.download<R>(bo, a.size());
}

/// out[i] = CAST(x[i]) from F to T.
template <typename T, typename F>
std::vector<T> cast(Wasm& w, pg_dtype from, pg_dtype to, const std::vector<F>& x) {
  sdk::ProgramBuilder pb("cast");
  Ref out = pb.param_buffer(0, to), in = pb.param_buffer(1, from);
  Ref i = pb.special(PG_SPECIAL_GLOBAL, 0);
  pb.store(pb.index(out, i), pb.cast(PG_OP_CAST, to, pb.load(pb.index(in, i))));
  pg_buffer_t bo = w.alloc(x.size() * sizeof(T)), bi = w.upload(x);
  w.run_once(pb, {bo, bi}, {}, {static_cast<uint32_t>(x.size()), 1, 1});
  return w.download<T>(bo, x.size());
}

TEST_P(WasmRenderer, WritesAModuleWithOneImportedMemory) {
  Wasm w(GetParam());
  sdk::ProgramBuilder pb("copy_k");
  Ref out = pb.param_buffer(0, PG_DTYPE_FLOAT32), in = pb.param_buffer(1, PG_DTYPE_FLOAT32);
  Ref i = pb.special(PG_SPECIAL_GLOBAL, 0);
  pb.store(pb.index(out, i), pb.load(pb.index(in, i)));
  std::string bytes, error;
  ASSERT_EQ(w.render(pb, bytes, error), PG_OK) << error;
  ASSERT_GE(bytes.size(), 8u);
  EXPECT_EQ(bytes.substr(0, 8), std::string("\0asm\1\0\0\0", 8));
  EXPECT_NE(bytes.find("\3env\6memory", 0), std::string::npos);
  EXPECT_NE(bytes.find("copy_k"), std::string::npos);
}

TEST_P(WasmRenderer, IntegerDivisionTruncatesTowardZero) {
  Wasm w(GetParam());
  std::vector<int32_t> a = {7, -7, 7, -7, 0}, b = {2, 2, -2, -2, 3};
  EXPECT_EQ((binary<int32_t>(w, PG_OP_IDIV, PG_DTYPE_INT32, PG_DTYPE_INT32, a, b)),
            (std::vector<int32_t>{3, -3, -3, 3, 0}));
  EXPECT_EQ((binary<int32_t>(w, PG_OP_MOD, PG_DTYPE_INT32, PG_DTYPE_INT32, a, b)),
            (std::vector<int32_t>{1, -1, 1, -1, 0}));
  std::vector<int64_t> a64 = {-9000000000LL, 9000000000LL}, b64 = {7, -7};
  EXPECT_EQ((binary<int64_t>(w, PG_OP_IDIV, PG_DTYPE_INT64, PG_DTYPE_INT64, a64, b64)),
            (std::vector<int64_t>{-1285714285LL, -1285714285LL}));
  EXPECT_EQ((binary<int64_t>(w, PG_OP_MOD, PG_DTYPE_INT64, PG_DTYPE_INT64, a64, b64)),
            (std::vector<int64_t>{-5, 5}));
  std::vector<uint32_t> ua = {0xFFFFFFFFu}, ub = {2};  // unsigned: no sign
  EXPECT_EQ((binary<uint32_t>(w, PG_OP_IDIV, PG_DTYPE_UINT32, PG_DTYPE_UINT32, ua, ub)),
            (std::vector<uint32_t>{0x7FFFFFFFu}));
}

TEST_P(WasmRenderer, NarrowIntegersWrapAtTheirWidth) {
  Wasm w(GetParam());
  std::vector<uint8_t> a = {200, 3}, b = {100, 5};
  EXPECT_EQ((binary<uint8_t>(w, PG_OP_ADD, PG_DTYPE_UINT8, PG_DTYPE_UINT8, a, b)),
            (std::vector<uint8_t>{44, 8}));
  EXPECT_EQ((binary<uint8_t>(w, PG_OP_SUB, PG_DTYPE_UINT8, PG_DTYPE_UINT8, b, a)),
            (std::vector<uint8_t>{156, 2}));
  std::vector<int16_t> c = {30000, -30000}, d = {30000, 30000};
  EXPECT_EQ((binary<int16_t>(w, PG_OP_ADD, PG_DTYPE_INT16, PG_DTYPE_INT16, c, d)),
            (std::vector<int16_t>{-5536, 0}));
  // Comparisons see the wrapped values: (uint8)(200 + 100) = 44 < 50.
  std::vector<int8_t> e = {-128, 64}, s = {1, 1};
  EXPECT_EQ((binary<int8_t>(w, PG_OP_SHR, PG_DTYPE_INT8, PG_DTYPE_INT8, e, s)),
            (std::vector<int8_t>{-64, 32}));  // arithmetic for signed
  EXPECT_EQ(
      (binary<int8_t>(w, PG_OP_SHL, PG_DTYPE_INT8, PG_DTYPE_INT8, std::vector<int8_t>{64, 3}, s)),
      (std::vector<int8_t>{-128, 6}));
  EXPECT_EQ((binary<uint8_t>(w, PG_OP_CMPLT, PG_DTYPE_UINT8, PG_DTYPE_BOOL,
                             std::vector<uint8_t>{255, 1}, std::vector<uint8_t>{1, 255})),
            (std::vector<uint8_t>{0, 1}));
}

TEST_P(WasmRenderer, NarrowResultsAreWrappedBeforeTheyAreUsed) {
  Wasm w(GetParam());
  // out[i] = (int8)(a[i] + b[i]) < 0 and (uint16)(a16[i] * 3) / 7, the intermediates never
  // stored: 100 + 100 wraps to -56; 30000 * 3 = 90000 wraps to 24464.
  sdk::ProgramBuilder pb("wrap");
  Ref lt = pb.param_buffer(0, PG_DTYPE_BOOL), q = pb.param_buffer(1, PG_DTYPE_UINT16);
  Ref a = pb.param_buffer(2, PG_DTYPE_INT8), a16 = pb.param_buffer(3, PG_DTYPE_UINT16);
  Ref i = pb.special(PG_SPECIAL_GLOBAL, 0);
  Ref x = pb.load(pb.index(a, i));
  pb.store(pb.index(lt, i),
           pb.binary(PG_OP_CMPLT, pb.binary(PG_OP_ADD, x, x), pb.const_i(PG_DTYPE_INT8, 0)));
  Ref m = pb.binary(PG_OP_MUL, pb.load(pb.index(a16, i)), pb.const_i(PG_DTYPE_UINT16, 3));
  pb.store(pb.index(q, i), pb.binary(PG_OP_IDIV, m, pb.const_i(PG_DTYPE_UINT16, 7)));
  pg_buffer_t blt = w.alloc(2), bq = w.alloc(4);
  pg_buffer_t ba = w.upload(std::vector<int8_t>{100, 20});
  pg_buffer_t ba16 = w.upload(std::vector<uint16_t>{30000, 7});
  w.run_once(pb, {blt, bq, ba, ba16}, {}, {2, 1, 1});
  EXPECT_EQ(w.download<uint8_t>(blt, 2), (std::vector<uint8_t>{1, 0}));
  EXPECT_EQ(w.download<uint16_t>(bq, 2), (std::vector<uint16_t>{24464 / 7, 3}));
}

TEST_P(WasmRenderer, FloatMaxPropagatesNaN) {
  Wasm w(GetParam());
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> r =
      binary<float>(w, PG_OP_MAX, PG_DTYPE_FLOAT32, PG_DTYPE_FLOAT32,
                    std::vector<float>{nan, 1.0f, -2.0f}, std::vector<float>{1.0f, nan, -3.0f});
  EXPECT_TRUE(std::isnan(r[0]));
  EXPECT_TRUE(std::isnan(r[1]));
  EXPECT_EQ(r[2], -2.0f);
}

TEST_P(WasmRenderer, CastsFollowC) {
  Wasm w(GetParam());
  EXPECT_EQ((cast<int32_t, float>(w, PG_DTYPE_FLOAT32, PG_DTYPE_INT32, {-2.7f, 2.7f, -0.5f})),
            (std::vector<int32_t>{-2, 2, 0}));
  EXPECT_EQ((cast<int64_t, double>(w, PG_DTYPE_FLOAT64, PG_DTYPE_INT64, {-1e12 - 0.9})),
            (std::vector<int64_t>{-1000000000000LL}));
  EXPECT_EQ((cast<uint8_t, float>(w, PG_DTYPE_FLOAT32, PG_DTYPE_UINT8, {200.9f})),
            (std::vector<uint8_t>{200}));
  EXPECT_EQ((cast<int8_t, int32_t>(w, PG_DTYPE_INT32, PG_DTYPE_INT8, {300, -129})),
            (std::vector<int8_t>{44, 127}));
  EXPECT_EQ((cast<uint16_t, int8_t>(w, PG_DTYPE_INT8, PG_DTYPE_UINT16, {-1})),
            (std::vector<uint16_t>{65535}));
  EXPECT_EQ((cast<int64_t, uint32_t>(w, PG_DTYPE_UINT32, PG_DTYPE_INT64, {0xFFFFFFFFu})),
            (std::vector<int64_t>{4294967295LL}));
  EXPECT_EQ((cast<double, uint64_t>(w, PG_DTYPE_UINT64, PG_DTYPE_FLOAT64, {1ULL << 63})),
            (std::vector<double>{9223372036854775808.0}));
  const float nan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_EQ((cast<uint8_t, float>(w, PG_DTYPE_FLOAT32, PG_DTYPE_BOOL, {0.0f, -0.0f, 0.5f, nan})),
            (std::vector<uint8_t>{0, 0, 1, 1}));
}

TEST_P(WasmRenderer, GatedLoadDoesNotTouchMemoryWhenTheGateIsFalse) {
  Wasm w(GetParam());
  // out[i] = i < 2 ? x[i * 0x10000000] : -1: the gated-off address is 3 GiB past x, beyond
  // the memory, where an access traps.
  sdk::ProgramBuilder pb("gated");
  Ref out = pb.param_buffer(0, PG_DTYPE_FLOAT32), x = pb.param_buffer(1, PG_DTYPE_FLOAT32);
  Ref i = pb.special(PG_SPECIAL_GLOBAL, 0);
  Ref gate = pb.binary(PG_OP_CMPLT, i, pb.const_i(PG_DTYPE_INT32, 1));
  Ref far = pb.binary(PG_OP_MUL, i, pb.const_i(PG_DTYPE_INT32, 0x30000000));
  Ref v = pb.load_gated(pb.index(x, far), pb.const_f(PG_DTYPE_FLOAT32, -1.0), gate);
  pb.store(pb.index(out, i), v);
  pg_buffer_t bo = w.alloc(8), bx = w.upload(std::vector<float>{5.0f});
  w.run_once(pb, {bo, bx}, {}, {2, 1, 1});
  EXPECT_EQ(w.download<float>(bo, 2), (std::vector<float>{5.0f, -1.0f}));
}

TEST_P(WasmRenderer, VectorsAndLoopsWithARegisterAccumulator) {
  Wasm w(GetParam());
  // out[0..3] = sum over r of x[4r .. 4r+3] as one float4, with a DEFINE_REG accumulator.
  sdk::ProgramBuilder pb("vsum");
  Ref out = pb.param_buffer(0, PG_DTYPE_FLOAT32), x = pb.param_buffer(1, PG_DTYPE_FLOAT32);
  Ref acc = pb.define_reg(PG_DTYPE_FLOAT32, 4);
  Ref zero = pb.const_i(PG_DTYPE_INT32, 0);
  pb.store(pb.index(acc, zero), pb.const_f(PG_DTYPE_FLOAT32, 0.0, 4));
  Ref r = pb.range(pb.const_i(PG_DTYPE_INT32, 3), 0);
  Ref v = pb.load(pb.index(x, pb.binary(PG_OP_MUL, r, pb.const_i(PG_DTYPE_INT32, 4))), 4);
  Ref a = pb.load(pb.index(acc, zero), 4);
  pb.store(pb.index(acc, zero), pb.binary(PG_OP_ADD, a, v));
  pb.end_range(r);
  Ref s = pb.load(pb.index(acc, zero), 4);
  // Lanes reversed through GEP and VECTORIZE.
  pb.store(pb.index(out, zero),
           pb.vectorize({pb.gep(s, 3), pb.gep(s, 2), pb.gep(s, 1), pb.gep(s, 0)}));
  std::vector<float> xs(12);
  for (int k = 0; k < 12; ++k) xs[k] = float(k);
  pg_buffer_t bo = w.alloc(16), bx = w.upload(xs);
  w.run_once(pb, {bo, bx}, {}, {1, 1, 1});
  // lane l sums l, 4 + l, 8 + l = 12 + 3l.
  EXPECT_EQ(w.download<float>(bo, 4), (std::vector<float>{21, 18, 15, 12}));
}

TEST_P(WasmRenderer, ScalarParametersAndTheWholeGrid) {
  Wasm w(GetParam());
  // out[z][y][x] = x + 10 y + 100 z + s (int64) + f (float64, as a double's bits).
  sdk::ProgramBuilder pb("grid");
  Ref out = pb.param_buffer(0, PG_DTYPE_FLOAT64);
  Ref s = pb.param_scalar(0, PG_DTYPE_INT64), f = pb.param_scalar(1, PG_DTYPE_FLOAT64);
  Ref x = pb.special(PG_SPECIAL_GLOBAL, 0), y = pb.special(PG_SPECIAL_GLOBAL, 1),
      z = pb.special(PG_SPECIAL_GLOBAL, 2);
  Ref idx = pb.binary(PG_OP_ADD, x,
                      pb.binary(PG_OP_ADD, pb.binary(PG_OP_MUL, y, pb.const_i(PG_DTYPE_INT32, 3)),
                                pb.binary(PG_OP_MUL, z, pb.const_i(PG_DTYPE_INT32, 6))));
  Ref val = pb.binary(PG_OP_ADD, pb.binary(PG_OP_MUL, y, pb.const_i(PG_DTYPE_INT32, 10)), x);
  val = pb.binary(PG_OP_ADD, val, pb.binary(PG_OP_MUL, z, pb.const_i(PG_DTYPE_INT32, 100)));
  Ref v64 = pb.binary(PG_OP_ADD, pb.cast(PG_OP_CAST, PG_DTYPE_INT64, val), s);
  pb.store(pb.index(out, idx), pb.binary(PG_OP_ADD, pb.cast(PG_OP_CAST, PG_DTYPE_FLOAT64, v64), f));
  double half = 0.5;
  int64_t half_bits;
  std::memcpy(&half_bits, &half, 8);
  pg_buffer_t bo = w.alloc(12 * 8);
  w.run_once(pb, {bo}, {1000, half_bits}, {3, 2, 2});
  std::vector<double> want;
  for (int zz = 0; zz < 2; ++zz)
    for (int yy = 0; yy < 2; ++yy)
      for (int xx = 0; xx < 3; ++xx) want.push_back(xx + 10 * yy + 100 * zz + 1000 + 0.5);
  EXPECT_EQ(w.download<double>(bo, 12), want);
}

TEST_P(WasmDevice, ATrapIsALaunchErrorAndTheDeviceStaysUsable) {
  Wasm w(GetParam());
  pg_buffer_t bo = w.upload(std::vector<float>{1, 2, 3, 4});
  sdk::ProgramBuilder pb("reads_far");  // x[0x30000000]: 3 GiB past x, beyond the memory
  Ref out = pb.param_buffer(0, PG_DTYPE_FLOAT32);
  Ref far = pb.const_i(PG_DTYPE_INT32, 0x30000000);
  pb.store(pb.index(out, pb.const_i(PG_DTYPE_INT32, 0)), pb.load(pb.index(out, far)));
  pg_program_t p = w.build(pb);
  std::string error;
  EXPECT_EQ(w.launch(p, {bo}, {}, {1, 1, 1}, {1, 1, 1}, error), PG_ERR_LAUNCH);
  EXPECT_NE(error.find("'reads_far' trapped"), std::string::npos) << error;
  EXPECT_NE(error.find("out of bounds"), std::string::npos) << error;
  w.unload(p);
  // The buffer is intact and the device runs the next kernel.
  EXPECT_EQ(w.download<float>(bo, 4), (std::vector<float>{1, 2, 3, 4}));
  EXPECT_EQ((binary<float>(w, PG_OP_ADD, PG_DTYPE_FLOAT32, PG_DTYPE_FLOAT32,
                           std::vector<float>{1.5f}, std::vector<float>{2.0f})),
            (std::vector<float>{3.5f}));
}

TEST_P(WasmDevice, WritesPastTheMemoryTrapEveryTimeAndLeaveOtherBuffersIntact) {
  Wasm w(GetParam());
  pg_buffer_t keep = w.upload(std::vector<int32_t>{7, 8, 9});
  pg_buffer_t out = w.upload(std::vector<int32_t>{0, 0});
  sdk::ProgramBuilder pb("writes_far");  // out[0] = 1, then out[0x30000000] = 2: 3 GiB past out
  Ref o = pb.param_buffer(0, PG_DTYPE_INT32);
  pb.store(pb.index(o, pb.const_i(PG_DTYPE_INT32, 0)), pb.const_i(PG_DTYPE_INT32, 1));
  pb.store(pb.index(o, pb.const_i(PG_DTYPE_INT32, 0x30000000)), pb.const_i(PG_DTYPE_INT32, 2));
  pg_program_t p = w.build(pb);
  for (int k = 0; k < 20; ++k) {
    std::string error;
    ASSERT_EQ(w.launch(p, {out}, {}, {1, 1, 1}, {1, 1, 1}, error), PG_ERR_LAUNCH) << k;
    EXPECT_NE(error.find("'writes_far' trapped"), std::string::npos) << error;
  }
  w.unload(p);
  // The store before the trap happened; nothing else moved.
  EXPECT_EQ(w.download<int32_t>(out, 2), (std::vector<int32_t>{1, 0}));
  EXPECT_EQ(w.download<int32_t>(keep, 3), (std::vector<int32_t>{7, 8, 9}));
}

TEST_P(WasmDevice, OutOfMemoryAtFourGiBNamesTheSize) {
  Wasm w(GetParam());
  pg_buffer_t b = nullptr;
  pg_error err{};
  ASSERT_EQ(w.table().allocator->alloc(w.device(), (uint64_t{1} << 32) + 1, &b, &err),
            PG_ERR_OUT_OF_MEMORY);
  EXPECT_NE(std::string(err.message).find("4294967297 bytes asked"), std::string::npos)
      << err.message;
}

TEST_P(WasmDevice, FreedRangesAreReused) {
  Wasm w(GetParam());
  // Buffers are disjoint and a freed one's bytes are handed out again: a and c hold their own
  // values after b was freed and c allocated in its place.
  pg_buffer_t a = w.upload(std::vector<int32_t>(100, 1));
  pg_buffer_t b = w.upload(std::vector<int32_t>(100, 2));
  w.free(b);
  pg_buffer_t c = w.upload(std::vector<int32_t>(50, 3));
  pg_buffer_t d = w.upload(std::vector<int32_t>(100, 4));
  EXPECT_EQ(w.download<int32_t>(a, 100), std::vector<int32_t>(100, 1));
  EXPECT_EQ(w.download<int32_t>(c, 50), std::vector<int32_t>(50, 3));
  EXPECT_EQ(w.download<int32_t>(d, 100), std::vector<int32_t>(100, 4));
}

#if POLYGRAD_WASM_HAVE_V8
TEST(WasmV8, TheTrapHandlerIsOn) {
  Wasm w("v8");
  EXPECT_TRUE(w.logged(PG_LOG_INFO, "wasm: engine v8: V8 10.")) << w.logs().size();
  EXPECT_TRUE(w.logged(PG_LOG_INFO, "trap handler on"));
  EXPECT_TRUE(w.logged(PG_LOG_INFO, "compile " + compile_mode() + " ("));
}

TEST(WasmV8, ADeviceAskingTheOtherWayOfCompilingFailsNamingBoth) {
  Wasm w("v8");  // V8 is initialised for this run's way of compiling
  const std::string mode = compile_mode();
  static const std::string other = mode == "tiered" ? "optimized" : "tiered";
  // A second instance of the plugin through its C table, so that its state is shut down
  // after its device fails to open.
  pg_host_services services{};
  services.struct_size = sizeof services;
  services.abi_major = PG_PLUGIN_ABI_MAJOR;
  services.abi_minor = PG_PLUGIN_ABI_MINOR;
  services.plugin_path = POLYGRAD_WASM_PATH;
  services.log = [](void*, pg_log_level, const char*) {};
  services.get_option = [](void*, int32_t, const char* key) -> const char* {
    if (std::string(key) == "engine") return "v8";
    return std::string(key) == "compile" ? other.c_str() : nullptr;
  };
  pg_error err{};
  pg_plugin_state_t state = nullptr;
  ASSERT_EQ(w.table().init(&services, &state, &err), PG_OK) << err.message;
  pg_device_t device = nullptr;
  EXPECT_EQ(w.table().device_open(state, 0, &device, &err), PG_ERR_INVALID_ARGUMENT);
  const std::string message = err.message;
  EXPECT_NE(message.find("option compile: '" + other + "' cannot be used"), std::string::npos)
      << message;
  EXPECT_NE(message.find("already compiles '" + mode + "'"), std::string::npos) << message;
  w.table().shutdown(state);
  // The first device still runs kernels.
  std::vector<float> a = {1, 2}, b = {3, 4};
  EXPECT_EQ((binary<float>(w, PG_OP_ADD, PG_DTYPE_FLOAT32, PG_DTYPE_FLOAT32, a, b)),
            (std::vector<float>{4, 6}));
}

TEST(WasmV8, LaunchesAndTrapsFromAnotherThread) {
  Wasm w("v8");
  std::vector<float> a = {1, 2}, b = {3, 4};
  EXPECT_EQ((binary<float>(w, PG_OP_ADD, PG_DTYPE_FLOAT32, PG_DTYPE_FLOAT32, a, b)),
            (std::vector<float>{4, 6}));
  std::vector<float> sum;
  std::string error;
  std::thread other([&] {
    sum = binary<float>(w, PG_OP_MUL, PG_DTYPE_FLOAT32, PG_DTYPE_FLOAT32, a, b);
    pg_buffer_t bo = w.upload(std::vector<float>{1});
    sdk::ProgramBuilder pb("reads_far");
    Ref out = pb.param_buffer(0, PG_DTYPE_FLOAT32);
    pb.store(pb.index(out, pb.const_i(PG_DTYPE_INT32, 0)),
             pb.load(pb.index(out, pb.const_i(PG_DTYPE_INT32, 0x30000000))));
    pg_program_t p = w.build(pb);
    (void)w.launch(p, {bo}, {}, {1, 1, 1}, {1, 1, 1}, error);
    w.unload(p);
  });
  other.join();
  EXPECT_EQ(sum, (std::vector<float>{3, 8}));
  EXPECT_NE(error.find("'reads_far' trapped"), std::string::npos) << error;
  EXPECT_EQ((binary<float>(w, PG_OP_SUB, PG_DTYPE_FLOAT32, PG_DTYPE_FLOAT32, a, b)),
            (std::vector<float>{-2, -2}));
}

/// Writes to a page the process may not touch: a fault in host code, not in WebAssembly.
void fault_in_host_code() {
  void* page = mmap(nullptr, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  std::fprintf(stderr, "faulting in host code\n");
  *static_cast<volatile int*>(page) = 1;
}

void run_then_fault() {
  Wasm w("v8");
  (void)binary<float>(w, PG_OP_ADD, PG_DTYPE_FLOAT32, PG_DTYPE_FLOAT32, std::vector<float>{1},
                      std::vector<float>{2});
  fault_in_host_code();
}

TEST(WasmV8DeathTest, AFaultInHostCodeIsNotTakenForATrap) {
  // V8's SIGSEGV handler catches faults of WebAssembly code only; any other goes on to the
  // handler before it: the default action (killed by SIGSEGV), or AddressSanitizer's report.
  GTEST_FLAG_SET(death_test_style, "threadsafe");
#if defined(__SANITIZE_ADDRESS__)
  EXPECT_EXIT(run_then_fault(), ::testing::ExitedWithCode(1),
              "faulting in host code(.|\n)*AddressSanitizer: SEGV");
#else
  EXPECT_EXIT(run_then_fault(), ::testing::KilledBySignal(SIGSEGV), "faulting in host code");
#endif
}
#endif

}  // namespace
}  // namespace polygrad::test
