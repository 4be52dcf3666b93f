// A concatenation's selector axis unrolled (codegen/unroll.hpp).
#include <gtest/gtest.h>

#include <algorithm>

#include "codegen/unroll.hpp"
#include "harness.hpp"
#include "ir/graph.hpp"

namespace polygrad_test {
namespace {

using polygrad::range;

UOpRef gated_load(const UOpRef& buf, const UOpRef& offset, const UOpRef& gate) {
  UOpRef at = UOp::make(Op::INDEX, buf->dtype(), {buf, offset});
  return UOp::make(Op::LOAD, dtypes::float32,
                   {at, polygrad::const_float(dtypes::float32, 0.0), gate});
}

size_t loads(const UOpRef& v) {
  size_t n = 0;
  for (const UOp* u : polygrad::toposort(v)) n += u->op() == Op::LOAD;
  return n;
}

// out (4, 3, 16): piece p of row r is x[r, p + j] for j < 16 - p (a shifted view padded at its
// end), selected by p, as stack() builds it: a sum over the pieces of where(p == k, piece, 0).
UOpRef stacked_shifts() {
  UOpRef r = range(idx(4), 0), p = range(idx(3), 1), j = range(idx(16), 2);
  UOpRef o = global(0, dtypes::float32), x = global(1, dtypes::float32);
  UOpRef sum;
  for (int64_t k = 0; k < 3; ++k) {
    UOpRef is_k = polygrad::alu(Op::AND, {polygrad::alu(Op::CMPLT, {idx(k - 1), p}),
                                          polygrad::alu(Op::CMPLT, {p, idx(k + 1)})});
    UOpRef in = polygrad::alu(Op::CMPLT, {j, idx(16 - k)});
    UOpRef gate = polygrad::alu(Op::AND, {is_k, in});
    UOpRef v = polygrad::where(is_k, gated_load(x, r * 16 + j + k, gate),
                               polygrad::const_float(dtypes::float32, 0.0));
    sum = sum ? sum + v : v;
  }
  return sink({store(o, r * 48 + p * 16 + j, sum)});
}

TEST(Unroll, StackedPiecesLoadOnceEach) {
  UOpRef ast = stacked_shifts();
  UOpRef out = polygrad::codegen::unroll_selectors(ast);
  ASSERT_EQ(out->nsrcs(), 3u) << "one store per piece";
  for (const UOpRef& st : out->srcs()) EXPECT_EQ(loads(st), 1u);

  std::vector<float> xv(64);
  for (size_t i = 0; i < xv.size(); ++i) xv[i] = float(i) * 0.5f - 3.0f;
  std::vector<HostBuf> bufs{HostBuf::zeros<float>(4 * 48), HostBuf::of(xv)};
  lower_and_run(ast, bufs);
  const std::vector<float> got = bufs[0].as<float>();
  for (int64_t r = 0; r < 4; ++r)
    for (int64_t k = 0; k < 3; ++k)
      for (int64_t j = 0; j < 16; ++j)
        ASSERT_EQ(got[r * 48 + k * 16 + j], j < 16 - k ? xv[r * 16 + j + k] : 0.0f)
            << "row " << r << " piece " << k << " column " << j;
}

TEST(Unroll, AnAxisThatSelectsNothingStays) {
  // A padding gate on the inner axis (j < 15): unrolled, every copy would load as much as the
  // store does, so nothing changes.
  UOpRef r = range(idx(4), 0), j = range(idx(16), 1);
  UOpRef o = global(0, dtypes::float32), x = global(1, dtypes::float32);
  UOpRef in = polygrad::alu(Op::CMPLT, {j, idx(15)});
  UOpRef ast = sink({store(o, r * 16 + j, gated_load(x, r * 16 + j + 1, in))});
  EXPECT_EQ(polygrad::codegen::unroll_selectors(ast), ast);
}

size_t reduces(const UOpRef& v) {
  size_t n = 0;
  for (const UOp* u : polygrad::toposort(v)) n += u->op() == Op::REDUCE;
  return n;
}

// A 2 x 2 max pool: out[r, c] = max over (a, b) < (2, 2) of x[(2r + a) * 8 + 2c + b].
UOpRef pool_ast(int64_t window) {
  UOpRef r = range(idx(4), 0), c = range(idx(4), 1);
  UOpRef a = range(idx(window), 2), b = range(idx(2), 3);
  UOpRef o = global(0, dtypes::float32), x = global(1, dtypes::float32);
  UOpRef v = load(x, (r * 2 + a) * 8 + c * 2 + b);
  return sink({store(o, r * 4 + c, reduce(Op::MAX, v, {a, b}))});
}

TEST(Unroll, SmallReducesBecomeChains) {
  EXPECT_EQ(reduces(polygrad::codegen::unroll_small_reduces(pool_ast(2))), 0u);
  // 9 x 2 = 18 terms: over the limit, the loop stays.
  EXPECT_EQ(reduces(polygrad::codegen::unroll_small_reduces(pool_ast(9))), 1u);
  std::vector<float> xv(64);
  for (size_t i = 0; i < xv.size(); ++i) xv[i] = float((i * 37) % 64) - 20.0f;
  std::vector<HostBuf> bufs{HostBuf::zeros<float>(16), HostBuf::of(xv)};
  lower_and_run(pool_ast(2), bufs);
  const std::vector<float> got = bufs[0].as<float>();
  for (int64_t r = 0; r < 4; ++r)
    for (int64_t c = 0; c < 4; ++c) {
      float want = -1e30f;
      for (int64_t a = 0; a < 2; ++a)
        for (int64_t b = 0; b < 2; ++b) want = std::max(want, xv[(2 * r + a) * 8 + 2 * c + b]);
      ASSERT_EQ(got[r * 4 + c], want) << "row " << r << " column " << c;
    }
}

}  // namespace
}  // namespace polygrad_test

namespace polygrad_test {
namespace {

// out (4, 256): the concatenation of four (4, 64) pieces along the columns (chunk's gradient),
// piece k selected by 64k - 1 < j < 64(k + 1), its load gated the same way.
UOpRef four_chunks() {
  UOpRef r = range(idx(4), 0), j = range(idx(256), 1);
  UOpRef o = global(0, dtypes::float32);
  UOpRef sum;
  for (int64_t k = 0; k < 4; ++k) {
    UOpRef x = global(static_cast<int>(k + 1), dtypes::float32);
    UOpRef in = polygrad::alu(Op::AND, {polygrad::alu(Op::CMPLT, {idx(64 * k - 1), j}),
                                        polygrad::alu(Op::CMPLT, {j, idx(64 * (k + 1))})});
    UOpRef v = polygrad::where(in, gated_load(x, r * 64 + j - idx(64 * k), in),
                               polygrad::const_float(dtypes::float32, 0.0));
    sum = sum ? sum + v : v;
  }
  return sink({store(o, r * 256 + j, sum)});
}

TEST(Unroll, ChunksOfALongAxisSplitIntoSegments) {
  // 256 columns: too many to unroll one by one; the comparisons change at 64, 128 and 192, so
  // four stores over 64 columns each, one load apiece.
  UOpRef ast = four_chunks();
  EXPECT_EQ(polygrad::codegen::unroll_selectors(ast), ast);
  UOpRef out = polygrad::codegen::unroll_segments(ast);
  ASSERT_EQ(out->nsrcs(), 4u) << "one store per segment";
  for (const UOpRef& st : out->srcs()) EXPECT_EQ(loads(st), 1u);

  std::vector<HostBuf> bufs{HostBuf::zeros<float>(4 * 256)};
  std::vector<std::vector<float>> xs(4, std::vector<float>(256));
  for (size_t k = 0; k < 4; ++k) {
    for (size_t i = 0; i < 256; ++i) xs[k][i] = float(k * 1000 + i);
    bufs.push_back(HostBuf::of(xs[k]));
  }
  lower_and_run(ast, bufs);
  const std::vector<float> got = bufs[0].as<float>();
  for (int64_t r = 0; r < 4; ++r)
    for (int64_t j = 0; j < 256; ++j)
      ASSERT_EQ(got[r * 256 + j], xs[j / 64][r * 64 + j % 64]) << "row " << r << " column " << j;
}

// A stride-2, 3-tap transposed convolution (a strided convolution's input gradient), padding
// 1: out[r, y] = sum over k of g[r, (y + 1 - k) / 2] where y + 1 - k is even and in 0..15.
UOpRef strided_gradient() {
  UOpRef r = range(idx(4), 0), y = range(idx(16), 1);
  UOpRef o = global(0, dtypes::float32), g = global(1, dtypes::float32);
  UOpRef sum;
  for (int64_t k = 0; k < 3; ++k) {
    UOpRef t = k == 1 ? y : y + idx(1 - k);
    UOpRef even = polygrad::alu(Op::CMPLT, {t % idx(2), idx(1)});
    UOpRef in = polygrad::alu(
        Op::AND, {polygrad::alu(Op::CMPLT, {idx(-1), t}), polygrad::alu(Op::CMPLT, {t, idx(16)})});
    UOpRef gate = polygrad::alu(Op::AND, {even, in});
    UOpRef v = polygrad::where(gate, gated_load(g, r * 8 + t / idx(2), gate),
                               polygrad::const_float(dtypes::float32, 0.0));
    sum = sum ? sum + v : v;
  }
  return sink({store(o, r * 16 + y, sum)});
}

TEST(Unroll, StridedReadsSplitByTheirRemainder) {
  // Per element: three pieces' divisions, remainders and gates. Split y = 2y' + p: an odd y
  // reads two pieces, an even y one (y / 2) and keeps one gated load, of t = 2y' - 1, whose
  // remainder is -1 at y' = 0 in C's division, so the engine cannot fold that gate to false
  // (it is, by its t >= 0 clause): 4 loads for the two stores, not 6.
  UOpRef ast = strided_gradient();
  UOpRef out = polygrad::codegen::unroll_strides(ast);
  ASSERT_EQ(out->nsrcs(), 2u) << "one store per remainder";
  EXPECT_EQ(loads(out->src(0)) + loads(out->src(1)), 4u);

  std::vector<float> gv(32);
  for (size_t i = 0; i < gv.size(); ++i) gv[i] = float(i) * 0.25f - 2.0f;
  std::vector<HostBuf> bufs{HostBuf::zeros<float>(64), HostBuf::of(gv)};
  lower_and_run(ast, bufs);
  const std::vector<float> got = bufs[0].as<float>();
  for (int64_t r = 0; r < 4; ++r)
    for (int64_t y = 0; y < 16; ++y) {
      float want = 0.0f;
      for (int64_t k = 0; k < 3; ++k) {
        const int64_t t = y + 1 - k;
        if (t >= 0 && t < 16 && t % 2 == 0) want += gv[r * 8 + t / 2];
      }
      ASSERT_EQ(got[r * 16 + y], want) << "row " << r << " y " << y;
    }
}

}  // namespace
}  // namespace polygrad_test
