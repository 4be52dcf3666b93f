// The wasm renderer's SIMD128 code: programs shaped as the host's CPU strategy lowers them
// (float4 elementwise kernels, vector accumulators summed across lanes, register-blocked
// matmuls, masks) must run as v128 instructions, and give the hand-computed values.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "../plugin_driver/plugin_driver.hpp"
#include "opcode_counts.hpp"

namespace polygrad::test {
namespace {

using Ref = sdk::ProgramBuilder::Ref;

class Wasm : public PluginDriver {
 public:
  Wasm() : PluginDriver(POLYGRAD_WASM_PATH, PG_ARTIFACT_WASM) {}
  /// The instructions of the module `pb` renders to.
  std::map<std::string, size_t> ops(sdk::ProgramBuilder& pb) {
    std::string bytes, error;
    EXPECT_EQ(render(pb, bytes, error), PG_OK) << error;
    return opcode_counts(bytes);
  }
};

/// The element offset i * n of launch index i.
Ref scaled(sdk::ProgramBuilder& pb, Ref i, int64_t n) {
  return pb.binary(PG_OP_MUL, i, pb.const_i(PG_DTYPE_INT32, n));
}

TEST(WasmSimd, ElementwiseFloatsRunAsF32x4) {
  Wasm w;
  // out[4i .. 4i+3] = a * b + c, one float4 per launch index.
  sdk::ProgramBuilder pb("fma4");
  Ref out = pb.param_buffer(0, PG_DTYPE_FLOAT32), a = pb.param_buffer(1, PG_DTYPE_FLOAT32),
      b = pb.param_buffer(2, PG_DTYPE_FLOAT32), c = pb.param_buffer(3, PG_DTYPE_FLOAT32);
  Ref at = scaled(pb, pb.special(PG_SPECIAL_GLOBAL, 0), 4);
  Ref ab = pb.binary(PG_OP_MUL, pb.load(pb.index(a, at), 4), pb.load(pb.index(b, at), 4));
  pb.store(pb.index(out, at), pb.binary(PG_OP_ADD, ab, pb.load(pb.index(c, at), 4)));
  auto ops = w.ops(pb);
  EXPECT_EQ(ops["v128.load"], 3u);
  EXPECT_EQ(ops["f32x4.mul"], 1u);
  EXPECT_EQ(ops["f32x4.add"], 1u);
  EXPECT_EQ(ops["v128.store"], 1u);
  EXPECT_EQ(ops["f32.load"] + ops["f32.mul"] + ops["f32.add"] + ops["f32x4.extract_lane"], 0u);

  std::vector<float> xa(12), xb(12), xc(12), want(12);
  for (int k = 0; k < 12; ++k) {
    xa[k] = 0.5f * k;
    xb[k] = 3.0f - k;
    xc[k] = float(k * k);
    want[k] = xa[k] * xb[k] + xc[k];
  }
  pg_buffer_t bo = w.alloc(48), ba = w.upload(xa), bb = w.upload(xb), bc = w.upload(xc);
  w.run_once(pb, {bo, ba, bb, bc}, {}, {3, 1, 1});
  EXPECT_EQ(w.download<float>(bo, 12), want);
}

TEST(WasmSimd, ASumRunsInAVectorAccumulatorThenAcrossLanes) {
  Wasm w;
  // out[0] = sum of x[0 .. 63]: a float4 accumulator (a DEFINE_REG, held in a local) over 16
  // vector loads, then its lanes summed by two shuffles and adds, as the linearizer writes it.
  sdk::ProgramBuilder pb("vsum");
  Ref out = pb.param_buffer(0, PG_DTYPE_FLOAT32), x = pb.param_buffer(1, PG_DTYPE_FLOAT32);
  Ref acc = pb.define_reg(PG_DTYPE_FLOAT32, 4);
  Ref zero = pb.const_i(PG_DTYPE_INT32, 0);
  pb.store(pb.index(acc, zero), pb.const_f(PG_DTYPE_FLOAT32, 0.0, 4));
  Ref r = pb.range(pb.const_i(PG_DTYPE_INT32, 16), 0);
  Ref v = pb.load(pb.index(x, scaled(pb, r, 4)), 4);
  pb.store(pb.index(acc, zero), pb.binary(PG_OP_ADD, pb.load(pb.index(acc, zero), 4), v));
  pb.end_range(r);
  Ref s = pb.load(pb.index(acc, zero), 4);
  Ref t = pb.binary(PG_OP_ADD, s,
                    pb.vectorize({pb.gep(s, 2), pb.gep(s, 3), pb.gep(s, 0), pb.gep(s, 1)}));
  Ref u = pb.binary(PG_OP_ADD, t,
                    pb.vectorize({pb.gep(t, 1), pb.gep(t, 0), pb.gep(t, 3), pb.gep(t, 2)}));
  pb.store(pb.index(out, zero), pb.gep(u, 0));
  auto ops = w.ops(pb);
  EXPECT_EQ(ops["v128.load"], 1u);  // x only: the accumulator is a local
  EXPECT_EQ(ops["f32x4.add"], 3u);
  EXPECT_EQ(ops["i8x16.shuffle"], 2u);
  EXPECT_EQ(ops["f32x4.extract_lane"], 1u);
  EXPECT_EQ(ops["f32.add"] + ops["f32.load"], 0u);

  std::vector<float> xs(64);
  for (int k = 0; k < 64; ++k) xs[k] = float(k);
  pg_buffer_t bo = w.alloc(4), bx = w.upload(xs);
  w.run_once(pb, {bo, bx}, {}, {1, 1, 1});
  EXPECT_EQ(w.download<float>(bo, 1), (std::vector<float>{2016.0f}));  // 63 * 64 / 2
}

TEST(WasmSimd, AMaxReduceKeepsItsLanesInOneVectorAccumulator) {
  Wasm w;
  // out[0] = max of x[0 .. 31], as the linearizer writes a row max on an explicit-SIMD target:
  // the accumulator's lanes set one by one, a float4 max per step, then its lanes read one by
  // one and combined. Every access is at a constant offset: the array is one v128 local.
  sdk::ProgramBuilder pb("vmax");
  Ref out = pb.param_buffer(0, PG_DTYPE_FLOAT32), x = pb.param_buffer(1, PG_DTYPE_FLOAT32);
  Ref acc = pb.define_reg(PG_DTYPE_FLOAT32, 4);
  Ref lanes[4], ninf = pb.const_f(PG_DTYPE_FLOAT32, -INFINITY);
  for (int l = 0; l < 4; ++l) {
    lanes[l] = pb.index(acc, pb.const_i(PG_DTYPE_INT32, l));
    pb.store(lanes[l], ninf);
  }
  Ref r = pb.range(pb.const_i(PG_DTYPE_INT32, 8), 0);
  Ref v = pb.load(pb.index(x, scaled(pb, r, 4)), 4);
  pb.store(lanes[0], pb.binary(PG_OP_MAX, pb.load(lanes[0], 4), v));
  pb.end_range(r);
  Ref m = pb.load(lanes[0]);
  for (int l = 1; l < 4; ++l) m = pb.binary(PG_OP_MAX, m, pb.load(lanes[l]));
  pb.store(pb.index(out, pb.const_i(PG_DTYPE_INT32, 0)), m);
  auto ops = w.ops(pb);
  EXPECT_EQ(ops["v128.load"], 1u);  // x only
  EXPECT_EQ(ops["f32x4.max"], 0u);  // two pmax and an or (FloatVectorMaxPropagatesNaN)
  EXPECT_EQ(ops["f32x4.pmax"], 2u);
  EXPECT_EQ(ops["v128.or"], 1u);
  EXPECT_EQ(ops["f32x4.replace_lane"], 4u);
  EXPECT_EQ(ops["f32x4.extract_lane"], 4u);
  EXPECT_EQ(ops["f32.max"], 3u);
  EXPECT_EQ(ops["f32.store"], 1u);  // out[0]; no scratch memory
  EXPECT_EQ(ops["f32.load"] + ops["v128.store"], 0u);

  std::vector<float> xs(32);
  for (int k = 0; k < 32; ++k) xs[k] = float((k * 11) % 32) - 40.0f;  // the max, -9, at k = 31
  pg_buffer_t bo = w.alloc(4), bx = w.upload(xs);
  w.run_once(pb, {bo, bx}, {}, {1, 1, 1});
  EXPECT_EQ(w.download<float>(bo, 1), (std::vector<float>{-9.0f}));
}

TEST(WasmSimd, FloatVectorMaxPropagatesNaN) {
  // out = max(a, b) on float4 and double2 vectors: NaN when either is NaN (in either
  // operand), else the larger, infinities included.
  const float nan = NAN, inf = INFINITY;
  for (pg_dtype dt : {PG_DTYPE_FLOAT32, PG_DTYPE_FLOAT64}) {
    Wasm w;
    const uint32_t lanes = dt == PG_DTYPE_FLOAT32 ? 4 : 2;
    sdk::ProgramBuilder pb("vmax2");
    Ref out = pb.param_buffer(0, dt), a = pb.param_buffer(1, dt), b = pb.param_buffer(2, dt);
    Ref at = scaled(pb, pb.special(PG_SPECIAL_GLOBAL, 0), lanes);
    pb.store(pb.index(out, at), pb.binary(PG_OP_MAX, pb.load(pb.index(a, at), lanes),
                                          pb.load(pb.index(b, at), lanes)));
    auto ops = w.ops(pb);
    EXPECT_EQ(ops[dt == PG_DTYPE_FLOAT32 ? "f32x4.pmax" : "f64x2.pmax"], 2u);
    std::vector<double> xa = {nan, 1, 2, nan, -inf, 5, -3, inf};
    std::vector<double> xb = {1, nan, -2, nan, 4, inf, -7, -inf};
    std::vector<double> want = {nan, nan, 2, nan, 4, inf, -3, inf};
    pg_buffer_t bo = w.alloc(8 * 8);
    std::vector<double> got(8);
    if (dt == PG_DTYPE_FLOAT32) {
      pg_buffer_t ba = w.upload(std::vector<float>(xa.begin(), xa.end()));
      pg_buffer_t bb = w.upload(std::vector<float>(xb.begin(), xb.end()));
      w.run_once(pb, {bo, ba, bb}, {}, {2, 1, 1});
      std::vector<float> f = w.download<float>(bo, 8);
      got.assign(f.begin(), f.end());
    } else {
      pg_buffer_t ba = w.upload(xa), bb = w.upload(xb);
      w.run_once(pb, {bo, ba, bb}, {}, {4, 1, 1});
      got = w.download<double>(bo, 8);
    }
    for (int k = 0; k < 8; ++k) {
      if (std::isnan(want[k]))
        EXPECT_TRUE(std::isnan(got[k]))
            << (dt == PG_DTYPE_FLOAT32 ? "float32" : "float64") << " lane " << k << ": " << got[k];
      else
        EXPECT_EQ(got[k], want[k])
            << (dt == PG_DTYPE_FLOAT32 ? "float32" : "float64") << " lane " << k;
    }
  }
}

TEST(WasmSimd, ARegisterBlockedMatmulRunsOnVectorAccumulators) {
  Wasm w;
  // out (4 x 4) = a (4 x 3) @ b (3 x 4): each launch index computes two rows, each a float4
  // accumulator, with a row's a[k] broadcast (VECTORIZE of one value) times b's row k.
  constexpr int M = 4, K = 3, N = 4;
  sdk::ProgramBuilder pb("mm");
  Ref out = pb.param_buffer(0, PG_DTYPE_FLOAT32), a = pb.param_buffer(1, PG_DTYPE_FLOAT32),
      b = pb.param_buffer(2, PG_DTYPE_FLOAT32);
  Ref row0 = scaled(pb, pb.special(PG_SPECIAL_GLOBAL, 0), 2);
  Ref row1 = pb.binary(PG_OP_ADD, row0, pb.const_i(PG_DTYPE_INT32, 1));
  Ref zero = pb.const_i(PG_DTYPE_INT32, 0);
  Ref acc[2] = {pb.define_reg(PG_DTYPE_FLOAT32, 4), pb.define_reg(PG_DTYPE_FLOAT32, 4)};
  for (Ref r : acc) pb.store(pb.index(r, zero), pb.const_f(PG_DTYPE_FLOAT32, 0.0, 4));
  Ref k = pb.range(pb.const_i(PG_DTYPE_INT32, K), 0);
  Ref bv = pb.load(pb.index(b, scaled(pb, k, N)), 4);
  Ref rows[2] = {row0, row1};
  for (int r = 0; r < 2; ++r) {
    Ref x = pb.load(pb.index(a, pb.binary(PG_OP_ADD, scaled(pb, rows[r], K), k)));
    Ref cur = pb.load(pb.index(acc[r], zero), 4);
    Ref next = pb.ternary(PG_OP_MULACC, pb.vectorize({x, x, x, x}), bv, cur);
    pb.store(pb.index(acc[r], zero), next);
  }
  pb.end_range(k);
  for (int r = 0; r < 2; ++r)
    pb.store(pb.index(out, scaled(pb, rows[r], N)), pb.load(pb.index(acc[r], zero), 4));
  auto ops = w.ops(pb);
  EXPECT_EQ(ops["v128.load"], 1u);  // b's row; the accumulators are locals
  EXPECT_EQ(ops["f32x4.splat"], 2u);
  EXPECT_EQ(ops["f32x4.mul"], 2u);
  EXPECT_EQ(ops["f32x4.add"], 2u);
  EXPECT_EQ(ops["v128.store"], 2u);
  EXPECT_EQ(ops["f32.mul"] + ops["f32.add"], 0u);

  std::vector<float> xa(M * K), xb(K * N), want(M * N, 0.0f);
  for (int e = 0; e < M * K; ++e) xa[e] = float(e % 5) - 2.0f;
  for (int e = 0; e < K * N; ++e) xb[e] = float(e) * 0.25f;
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j)
      for (int kk = 0; kk < K; ++kk) want[i * N + j] += xa[i * K + kk] * xb[kk * N + j];
  pg_buffer_t bo = w.alloc(M * N * 4), ba = w.upload(xa), bb = w.upload(xb);
  w.run_once(pb, {bo, ba, bb}, {}, {M / 2, 1, 1});
  EXPECT_EQ(w.download<float>(bo, M * N), want);
}

TEST(WasmSimd, ConstantOffsetsBecomeMemargOffsetsOfOneAddress) {
  Wasm w;
  // out[8i .. 8i+7] = x[8i + 4 ..] and x[8i ..] swapped: the four INDEXes share the addresses
  // of 8i (one for x, one for out), the + 4 is an offset of 16 bytes in the access.
  sdk::ProgramBuilder pb("swap");
  Ref out = pb.param_buffer(0, PG_DTYPE_FLOAT32), x = pb.param_buffer(1, PG_DTYPE_FLOAT32);
  Ref at = scaled(pb, pb.special(PG_SPECIAL_GLOBAL, 0), 8);
  Ref at4 = pb.binary(PG_OP_ADD, at, pb.const_i(PG_DTYPE_INT32, 4));
  Ref lo = pb.load(pb.index(x, at), 4), hi = pb.load(pb.index(x, at4), 4);
  pb.store(pb.index(out, at), hi);
  pb.store(pb.index(out, at4), lo);
  auto ops = w.ops(pb);
  EXPECT_EQ(ops["v128.load offset=0"], 1u);
  EXPECT_EQ(ops["v128.load offset=16"], 1u);
  EXPECT_EQ(ops["v128.store offset=0"], 1u);
  EXPECT_EQ(ops["v128.store offset=16"], 1u);
  EXPECT_EQ(ops["i32.mul"], 3u);  // 8i, and one address each for x and out

  std::vector<float> xs(16), want(16);
  for (int k = 0; k < 16; ++k) xs[k] = float(k);
  for (int k = 0; k < 16; ++k) want[k] = xs[(k / 8) * 8 + (k % 8 + 4) % 8];
  pg_buffer_t bo = w.alloc(64), bx = w.upload(xs);
  w.run_once(pb, {bo, bx}, {}, {2, 1, 1});
  EXPECT_EQ(w.download<float>(bo, 16), want);
}

TEST(WasmSimd, RowBasesOfAddressesAreComputedOutsideTheLoop) {
  Wasm w;
  // Rows i of 16 floats, a loop over r: out[8i + 4r ..] = x[16i + 4r ..] + x[16i + s + 4r ..]
  // + x[16i + t + (4r + 4) ..] (s = 8, t = -4: a row base below 0 for i = 0). Each offset is
  // a row base from outside the loop plus the loop's part: the address of the row base is
  // computed before the loop, and in the loop each access adds the loop's part times 4, once
  // per distinct part (4r, 4r + 4), to it.
  sdk::ProgramBuilder pb("rows");
  Ref out = pb.param_buffer(0, PG_DTYPE_FLOAT32), x = pb.param_buffer(1, PG_DTYPE_FLOAT32);
  Ref s = pb.param_scalar(0, PG_DTYPE_INT32), t = pb.param_scalar(1, PG_DTYPE_INT32);
  Ref i = pb.special(PG_SPECIAL_GLOBAL, 0);
  Ref a0 = scaled(pb, i, 16), o0 = scaled(pb, i, 8);
  Ref a1 = pb.binary(PG_OP_ADD, a0, s), a2 = pb.binary(PG_OP_ADD, a0, t);
  Ref r = pb.range(pb.const_i(PG_DTYPE_INT32, 2), 0);
  Ref b = scaled(pb, r, 4);
  Ref b4 = pb.binary(PG_OP_ADD, b, pb.const_i(PG_DTYPE_INT32, 4));
  Ref v0 = pb.load(pb.index(x, pb.binary(PG_OP_ADD, a0, b)), 4);
  Ref v1 = pb.load(pb.index(x, pb.binary(PG_OP_ADD, a1, b)), 4);
  Ref v2 = pb.load(pb.index(x, pb.binary(PG_OP_ADD, a2, b4)), 4);
  pb.store(pb.index(out, pb.binary(PG_OP_ADD, o0, b)),
           pb.binary(PG_OP_ADD, pb.binary(PG_OP_ADD, v0, v1), v2));
  pb.end_range(r);
  auto ops = w.ops(pb);
  // In the loop (inside the grid's three): 4r, and 4r and 4r + 4 scaled to bytes; no
  // address multiplies its whole offset there.
  EXPECT_EQ(ops["i32.mul @4"], 3u);
  EXPECT_EQ(ops["v128.load"], 3u);

  std::vector<float> xs(32), want(16);
  for (int k = 0; k < 32; ++k) xs[k] = float(k);
  for (int row = 0; row < 2; ++row)
    for (int k = 0; k < 8; ++k) want[8 * row + k] = 2 * xs[16 * row + k] + xs[16 * row + 8 + k];
  pg_buffer_t bo = w.alloc(64), bx = w.upload(xs);
  w.run_once(pb, {bo, bx}, {8, -4}, {2, 1, 1});
  EXPECT_EQ(w.download<float>(bo, 16), want);
}

TEST(WasmSimd, ComparisonsAreMasksAndWhereIsABitselect) {
  Wasm w;
  // out = a < b ? a : b * 2, and lt = (a < b) stored as bytes, over float4s.
  sdk::ProgramBuilder pb("where4");
  Ref out = pb.param_buffer(0, PG_DTYPE_FLOAT32), lt = pb.param_buffer(1, PG_DTYPE_BOOL),
      a = pb.param_buffer(2, PG_DTYPE_FLOAT32), b = pb.param_buffer(3, PG_DTYPE_FLOAT32);
  Ref at = scaled(pb, pb.special(PG_SPECIAL_GLOBAL, 0), 4);
  Ref va = pb.load(pb.index(a, at), 4), vb = pb.load(pb.index(b, at), 4);
  Ref m = pb.binary(PG_OP_CMPLT, va, vb);
  Ref twice = pb.binary(PG_OP_MUL, vb, pb.const_f(PG_DTYPE_FLOAT32, 2.0, 4));
  pb.store(pb.index(out, at), pb.ternary(PG_OP_WHERE, m, va, twice));
  pb.store(pb.index(lt, at), m);
  auto ops = w.ops(pb);
  EXPECT_EQ(ops["f32x4.lt"], 1u);
  EXPECT_EQ(ops["v128.bitselect"], 1u);
  EXPECT_EQ(ops["f32.lt"] + ops["select"], 0u);

  const float nan = std::nanf("");
  std::vector<float> xa = {1, 5, -2, nan, 0, 7, 3, -1}, xb = {2, 4, -2, 1, -0.5f, 8, 3, -3};
  std::vector<float> want;
  std::vector<uint8_t> want_lt;
  for (size_t k = 0; k < xa.size(); ++k) {
    want.push_back(xa[k] < xb[k] ? xa[k] : xb[k] * 2);
    want_lt.push_back(xa[k] < xb[k]);
  }
  pg_buffer_t bo = w.alloc(32), bl = w.alloc(8), ba = w.upload(xa), bb = w.upload(xb);
  w.run_once(pb, {bo, bl, ba, bb}, {}, {2, 1, 1});
  EXPECT_EQ(w.download<float>(bo, 8), want);
  EXPECT_EQ(w.download<uint8_t>(bl, 8), want_lt);
}

TEST(WasmSimd, ExpStyleIntegerBitsRunAsI32x4) {
  Wasm w;
  // out = bitcast<float>((int(x) + 127) << 23) = 2^int(x): the float -> int cast, integer add,
  // shift by a constant and bitcast of a decomposed exp2, all as i32x4 and f32x4 code.
  sdk::ProgramBuilder pb("pow2");
  Ref out = pb.param_buffer(0, PG_DTYPE_FLOAT32), x = pb.param_buffer(1, PG_DTYPE_FLOAT32);
  Ref at = scaled(pb, pb.special(PG_SPECIAL_GLOBAL, 0), 4);
  Ref n = pb.cast(PG_OP_CAST, PG_DTYPE_INT32, pb.load(pb.index(x, at), 4));
  Ref biased = pb.binary(PG_OP_ADD, n, pb.const_i(PG_DTYPE_INT32, 127, 4));
  Ref bits = pb.binary(PG_OP_SHL, biased, pb.const_i(PG_DTYPE_INT32, 23, 4));
  pb.store(pb.index(out, at), pb.cast(PG_OP_BITCAST, PG_DTYPE_FLOAT32, bits));
  auto ops = w.ops(pb);
  EXPECT_EQ(ops["i32x4.trunc_sat_f32x4_s"], 1u);
  EXPECT_EQ(ops["i32x4.add"], 1u);
  EXPECT_EQ(ops["i32x4.shl"], 1u);
  EXPECT_EQ(ops["i32.shl"] + ops["i32.trunc_sat_f32_s"] + ops["f32.reinterpret_i32"], 0u);

  std::vector<float> xs = {0.0f, 1.9f, -3.5f, 10.0f};
  pg_buffer_t bo = w.alloc(16), bx = w.upload(xs);
  w.run_once(pb, {bo, bx}, {}, {1, 1, 1});
  EXPECT_EQ(w.download<float>(bo, 4), (std::vector<float>{1.0f, 2.0f, 0.125f, 1024.0f}));
}

TEST(WasmSimd, NarrowAndWideLanes) {
  Wasm w;
  // uint8 x16 adds wrap at 8 bits; int64 x2 and float64 x2 run as i64x2 and f64x2.
  sdk::ProgramBuilder pb("lanes");
  Ref o8 = pb.param_buffer(0, PG_DTYPE_UINT8), a8 = pb.param_buffer(1, PG_DTYPE_UINT8);
  Ref o64 = pb.param_buffer(2, PG_DTYPE_INT64), a64 = pb.param_buffer(3, PG_DTYPE_INT64);
  Ref od = pb.param_buffer(4, PG_DTYPE_FLOAT64), ad = pb.param_buffer(5, PG_DTYPE_FLOAT64);
  Ref zero = pb.const_i(PG_DTYPE_INT32, 0);
  Ref v8 = pb.load(pb.index(a8, zero), 16);
  pb.store(pb.index(o8, zero), pb.binary(PG_OP_ADD, v8, pb.const_i(PG_DTYPE_UINT8, 100, 16)));
  Ref v64 = pb.load(pb.index(a64, zero), 2);
  pb.store(pb.index(o64, zero), pb.binary(PG_OP_MAX, pb.unary(PG_OP_NEG, v64), v64));
  Ref vd = pb.load(pb.index(ad, zero), 2);
  pb.store(pb.index(od, zero), pb.unary(PG_OP_RECIP, pb.unary(PG_OP_SQRT, vd)));
  auto ops = w.ops(pb);
  EXPECT_EQ(ops["i8x16.add"], 1u);
  EXPECT_EQ(ops["i64x2.neg"], 1u);
  EXPECT_EQ(ops["i64x2.gt_s"], 1u);
  EXPECT_EQ(ops["f64x2.sqrt"], 1u);
  EXPECT_EQ(ops["f64x2.div"], 1u);

  std::vector<uint8_t> x8(16), want8(16);
  for (int k = 0; k < 16; ++k) {
    x8[k] = static_cast<uint8_t>(k * 13);
    want8[k] = static_cast<uint8_t>(k * 13 + 100);
  }
  pg_buffer_t b8 = w.alloc(16), i8 = w.upload(x8);
  pg_buffer_t b64 = w.alloc(16), i64 = w.upload(std::vector<int64_t>{-5000000000LL, 7});
  pg_buffer_t bd = w.alloc(16), id = w.upload(std::vector<double>{4.0, 0.25});
  w.run_once(pb, {b8, i8, b64, i64, bd, id}, {}, {1, 1, 1});
  EXPECT_EQ(w.download<uint8_t>(b8, 16), want8);
  EXPECT_EQ(w.download<int64_t>(b64, 2), (std::vector<int64_t>{5000000000LL, 7}));
  EXPECT_EQ(w.download<double>(bd, 2), (std::vector<double>{0.5, 2.0}));
}

TEST(WasmSimd, OpsWithoutASimdFormRunLaneByLane) {
  Wasm w;
  // int32 x4 division has no SIMD128 instruction: extract, i32.div_s, replace; the result is
  // still a v128 that the following add and store use.
  sdk::ProgramBuilder pb("div4");
  Ref out = pb.param_buffer(0, PG_DTYPE_INT32), a = pb.param_buffer(1, PG_DTYPE_INT32),
      b = pb.param_buffer(2, PG_DTYPE_INT32);
  Ref zero = pb.const_i(PG_DTYPE_INT32, 0);
  Ref q = pb.binary(PG_OP_IDIV, pb.load(pb.index(a, zero), 4), pb.load(pb.index(b, zero), 4));
  pb.store(pb.index(out, zero), pb.binary(PG_OP_ADD, q, pb.const_i(PG_DTYPE_INT32, 1, 4)));
  auto ops = w.ops(pb);
  EXPECT_EQ(ops["i32.div_s"], 4u);
  EXPECT_EQ(ops["i32x4.replace_lane"], 3u);
  EXPECT_EQ(ops["i32x4.add"], 1u);
  EXPECT_EQ(ops["v128.store"], 1u);

  pg_buffer_t bo = w.alloc(16), ba = w.upload(std::vector<int32_t>{7, -7, 9, 100});
  pg_buffer_t bb = w.upload(std::vector<int32_t>{2, 2, -4, 7});
  w.run_once(pb, {bo, ba, bb}, {}, {1, 1, 1});
  EXPECT_EQ(w.download<int32_t>(bo, 4), (std::vector<int32_t>{4, -2, -1, 15}));
}

}  // namespace
}  // namespace polygrad::test
