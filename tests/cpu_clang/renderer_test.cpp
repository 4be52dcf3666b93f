// Renderer errors and the shape of the C it writes.
#include <gtest/gtest.h>

#include <polygrad/plugin.hpp>

#include "harness.hpp"

namespace polygrad::test {
namespace {

using sdk::ProgramBuilder;

TEST(CpuClangRenderer, UnsupportedCombinationNamesOpAndDtype) {
  Plugin p(Options{{"cache", "false"}});
  ProgramBuilder b("bad_shift");
  auto out = b.param_buffer(0, PG_DTYPE_FLOAT32);
  auto x = b.const_f(PG_DTYPE_FLOAT32, 1.0);
  b.store(b.index(out, b.const_i(PG_DTYPE_INT32, 0)), b.binary(PG_OP_SHL, x, x));
  std::string source, error;
  EXPECT_EQ(p.render(b, source, error), PG_ERR_UNSUPPORTED);
  EXPECT_NE(error.find("SHL"), std::string::npos) << error;
  EXPECT_NE(error.find("float32"), std::string::npos) << error;
}

TEST(CpuClangRenderer, ValueUsedAfterItsLoopClosedIsInvalid) {
  Plugin p(Options{{"cache", "false"}});
  ProgramBuilder b("escape");
  auto out = b.param_buffer(0, PG_DTYPE_INT32);
  auto r = b.range(b.const_i(PG_DTYPE_INT32, 4), 0);
  auto twice = b.binary(PG_OP_ADD, r, r);
  b.end_range(r);
  b.store(b.index(out, b.const_i(PG_DTYPE_INT32, 0)), twice);
  std::string source, error;
  EXPECT_EQ(p.render(b, source, error), PG_ERR_INVALID_ARGUMENT);
  EXPECT_NE(error.find("after the block defining it closed"), std::string::npos) << error;
}

TEST(CpuClangRenderer, ScalarConstantFromInsideALoopIsUsableAfterIt) {
  Plugin p(Options{{"cache", "false"}});
  ProgramBuilder b("const_escape");
  auto out = b.param_buffer(0, PG_DTYPE_INT32);
  auto r = b.range(b.const_i(PG_DTYPE_INT32, 2), 0);
  auto seven = b.const_i(PG_DTYPE_INT32, 7);
  b.end_range(r);
  b.store(b.index(out, b.const_i(PG_DTYPE_INT32, 0)), seven);
  auto bo = p.alloc(4);
  p.run_once(b, {bo}, {}, {1, 1, 1});
  EXPECT_EQ(p.download<int32_t>(bo, 1)[0], 7);
}

TEST(CpuClangRenderer, VectorsUseExtVectorTypes) {
  Plugin p(Options{{"cache", "false"}});
  ProgramBuilder b("vec_types");
  auto out = b.param_buffer(0, PG_DTYPE_INT16);
  auto v = b.const_i(PG_DTYPE_INT16, 3, 8);
  b.store(b.index(out, b.const_i(PG_DTYPE_INT32, 0)), b.binary(PG_OP_ADD, v, v));
  std::string source, error;
  ASSERT_EQ(p.render(b, source, error), PG_OK) << error;
  EXPECT_NE(source.find("ext_vector_type(8)"), std::string::npos) << source;
  EXPECT_NE(source.find("void vec_types("), std::string::npos) << source;
}

// A kernel with `tiles` 8-lane multiply-accumulates out[t] = x[t] * x[t] + x[t], t < tiles.
void build_mulaccs(ProgramBuilder& b, int tiles) {
  auto out = b.param_buffer(0, PG_DTYPE_FLOAT32);
  auto in = b.param_buffer(1, PG_DTYPE_FLOAT32);
  for (int t = 0; t < tiles; ++t) {
    auto at = b.const_i(PG_DTYPE_INT32, 8 * t);
    auto x = b.load(b.index(in, at), 8);
    b.store(b.index(out, at), b.ternary(PG_OP_MULACC, x, x, x));
  }
}

// A register-tiled kernel (4 or more vector multiply-accumulates) is compiled without clang's
// SLP vectorizer, which the renderer marks at the top of its source (the marker is part of the
// cache key); one with fewer keeps it. Both compute the same values.
TEST(CpuClangRenderer, RegisterTiledKernelsAreMarkedForNoSlp) {
  Plugin p(Options{{"cache", "false"}});
  for (int tiles : {3, 4}) {
    ProgramBuilder b("tiles_" + std::to_string(tiles));
    build_mulaccs(b, tiles);
    std::string source, error;
    ASSERT_EQ(p.render(b, source, error), PG_OK) << error;
    EXPECT_EQ(source.rfind("/* cpu_clang: no-slp */", 0) == 0, tiles >= 4) << source;
    std::vector<float> x(static_cast<size_t>(8 * tiles));
    for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i) - 5;
    auto bo = p.alloc(4 * x.size()), bi = p.upload(x);
    p.run_once(b, {bo, bi}, {}, {1, 1, 1});
    std::vector<float> got = p.download<float>(bo, x.size());
    for (size_t i = 0; i < x.size(); ++i) EXPECT_EQ(got[i], x[i] * x[i] + x[i]) << tiles;
  }
}

// relu(x) = max(x, 0) and relu'(x) * g = where(0 < x, g, 0) on 16 lanes are whole-vector
// expressions (a mask and ?:), not a literal built lane by lane from v[0] ... v[15].
TEST(CpuClangRenderer, VectorMaxCompareAndWhereAreWholeVectorExpressions) {
  Plugin p(Options{{"cache", "false"}});
  ProgramBuilder b("vec_masks");
  auto out = b.param_buffer(0, PG_DTYPE_FLOAT32);
  auto in = b.param_buffer(1, PG_DTYPE_FLOAT32);
  auto zero = b.const_i(PG_DTYPE_INT32, 0);
  auto x = b.load(b.index(in, zero), 16);
  auto fzero = b.const_f(PG_DTYPE_FLOAT32, 0.0, 16);
  auto relu = b.binary(PG_OP_MAX, x, fzero);
  auto grad = b.ternary(PG_OP_WHERE, b.binary(PG_OP_CMPLT, fzero, x), x, fzero);
  b.store(b.index(out, zero), relu);
  b.store(b.index(out, b.const_i(PG_DTYPE_INT32, 16)), grad);
  std::string source, error;
  ASSERT_EQ(p.render(b, source, error), PG_OK) << error;
  EXPECT_EQ(source.find("[15]"), std::string::npos) << source;
  EXPECT_NE(source.find("__builtin_convertvector("), std::string::npos) << source;
  EXPECT_NE(source.find(" ? "), std::string::npos) << source;
}

/// Appends to `b` one use of `op` on values a, b, c (lanes each) of dtype dt, stored to `out`.
void add_op(ProgramBuilder& b, pg_op op, pg_dtype dt, ProgramBuilder::Ref out, int slot,
            ProgramBuilder::Ref x, ProgramBuilder::Ref y, ProgramBuilder::Ref z,
            ProgramBuilder::Ref cond, uint8_t lanes) {
  ProgramBuilder::Ref r;
  int n = sdk::op_source_count(op);
  if (op == PG_OP_WHERE)
    r = b.ternary(op, cond, x, y);
  else if (n == 1)
    r = b.unary(op, x);
  else if (n == 2)
    r = b.binary(op, x, y);
  else
    r = b.ternary(op, x, y, z);
  if (b.dtype_of(r) == PG_DTYPE_BOOL && dt != PG_DTYPE_BOOL) r = b.cast(PG_OP_CAST, dt, r);
  b.store(b.index(out, b.const_i(PG_DTYPE_INT32, slot * lanes)), r);
}

// Every (ALU op, dtype) the renderer accepts, scalar and 4-lane, plus every CAST and BITCAST
// pair, must compile. Values are the conformance kit's job; this catches C the renderer writes
// that clang rejects.
TEST(CpuClangRenderer, EverythingTheRendererAcceptsCompiles) {
  Plugin p(Options{{"cache", "false"}});
  const pg_op alu_ops[] = {PG_OP_NEG,   PG_OP_NOT,   PG_OP_RECIP, PG_OP_SQRT,  PG_OP_EXP2,
                           PG_OP_LOG2,  PG_OP_SIN,   PG_OP_TRUNC, PG_OP_ADD,   PG_OP_SUB,
                           PG_OP_MUL,   PG_OP_FDIV,  PG_OP_IDIV,  PG_OP_MOD,   PG_OP_MAX,
                           PG_OP_CMPLT, PG_OP_CMPNE, PG_OP_CMPEQ, PG_OP_AND,   PG_OP_OR,
                           PG_OP_XOR,   PG_OP_SHL,   PG_OP_SHR,   PG_OP_WHERE, PG_OP_MULACC};
  int accepted = 0, refused = 0;
  for (uint32_t d = PG_DTYPE_BOOL; d < PG_DTYPE_COUNT; ++d) {
    const auto dt = static_cast<pg_dtype>(d);
    for (uint8_t lanes : {uint8_t{1}, uint8_t{4}}) {
      // First find which ops render alone, then compile all of them in one kernel.
      std::vector<pg_op> ok;
      for (pg_op op : alu_ops) {
        ProgramBuilder probe("probe");
        auto out = probe.param_buffer(0, dt);
        auto x = probe.load(probe.index(out, probe.const_i(PG_DTYPE_INT32, 0)), lanes);
        auto cond = probe.const_i(PG_DTYPE_BOOL, 1, lanes);
        add_op(probe, op, dt, out, 0, x, x, x, cond, lanes);
        std::string source, error;
        pg_status s = p.render(probe, source, error);
        ASSERT_TRUE(s == PG_OK || s == PG_ERR_UNSUPPORTED) << error;
        if (s == PG_OK) ok.push_back(op);
        (s == PG_OK ? accepted : refused)++;
      }
      ProgramBuilder b(std::string("all_") + sdk::dtype_name(dt) + "_x" + std::to_string(lanes));
      auto out = b.param_buffer(0, dt);
      auto in = b.param_buffer(1, dt);
      auto i = b.special(PG_SPECIAL_GLOBAL, 0);
      auto x = b.load(b.index(in, i), lanes);
      auto y = b.load(b.index(in, b.binary(PG_OP_ADD, i, b.const_i(PG_DTYPE_INT32, 4))), lanes);
      auto z =
          b.load_gated(b.index(in, i), x, b.binary(PG_OP_CMPLT, i, b.const_i(PG_DTYPE_INT32, 2)));
      auto cond = b.binary(PG_OP_CMPNE, x, y);
      for (size_t k = 0; k < ok.size(); ++k)
        add_op(b, ok[k], dt, out, static_cast<int>(k), x, y, z, cond, lanes);
      int slot = static_cast<int>(ok.size());
      for (uint32_t d2 = PG_DTYPE_BOOL; d2 < PG_DTYPE_COUNT; ++d2) {
        auto to = static_cast<pg_dtype>(d2);
        auto back = b.cast(PG_OP_CAST, dt, b.cast(PG_OP_CAST, to, x));
        b.store(b.index(out, b.const_i(PG_DTYPE_INT32, (slot++) * lanes)), back);
        if (sdk::dtype_size(to) == sdk::dtype_size(dt)) {
          auto bits = b.cast(PG_OP_BITCAST, dt, b.cast(PG_OP_BITCAST, to, x));
          b.store(b.index(out, b.const_i(PG_DTYPE_INT32, (slot++) * lanes)), bits);
        }
      }
      std::string source, error;
      ASSERT_EQ(p.render(b, source, error), PG_OK) << error;
      pg_program_t prog = nullptr;
      ASSERT_EQ(p.load_source(source, b.program().name, prog, error), PG_OK) << error << "\n"
                                                                             << source;
      p.unload(prog);
    }
  }
  // Sanity of the split: floats refuse bit ops, bools refuse division, and so on.
  EXPECT_GT(accepted, 200);
  EXPECT_GT(refused, 50);
}

}  // namespace
}  // namespace polygrad::test
