// The innermost loop of an elementwise kernel moves to the range its accesses are most
// contiguous along (codegen/loop_order.hpp); values against plain C++ loops either way.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "codegen/loop_order.hpp"
#include "harness.hpp"
#include "ir/graph.hpp"

namespace polygrad_test {
namespace {

using polygrad::range;

/// The RANGE with the largest id in `sink` (the innermost loop).
const polygrad::UOp* innermost(const UOpRef& sink) {
  const polygrad::UOp* best = nullptr;
  for (const polygrad::UOp* u : polygrad::toposort(sink))
    if (u->op() == Op::RANGE && (best == nullptr || u->arg_int() > best->arg_int())) best = u;
  return best;
}

constexpr int64_t kB = 3, kC = 8, kX = 18, kT = 3;

// A convolution's input gradient in miniature: out[b, c, x] = sum over t of
// in[b, x, c * T + t], three loads 3 floats apart along c and a row of C * T apart along x.
UOpRef gather_ast() {
  UOpRef b = range(idx(kB), 0), c = range(idx(kC), 1), x = range(idx(kX), 2);
  UOpRef o = global(0, dtypes::float32), in = global(1, dtypes::float32);
  UOpRef v = load(in, (b * kX + x) * (kC * kT) + c * kT);
  for (int64_t t = 1; t < kT; ++t) v = v + load(in, (b * kX + x) * (kC * kT) + c * kT + t);
  return sink({store(o, (b * kC + c) * kX + x, v)});
}

TEST(LoopOrder, TheMostContiguousRangeGoesInnermost) {
  const UOpRef ast = gather_ast();
  const UOpRef reordered = polygrad::codegen::order_loops(ast);
  ASSERT_NE(reordered.get(), ast.get());
  EXPECT_EQ(innermost(reordered)->src(0)->arg_int(), kC);
  std::vector<float> in = exact_ints(kB * kX * kC * kT, 3);
  std::vector<float> want(static_cast<size_t>(kB * kC * kX));
  for (int64_t b = 0; b < kB; ++b)
    for (int64_t c = 0; c < kC; ++c)
      for (int64_t x = 0; x < kX; ++x) {
        float s = 0;
        for (int64_t t = 0; t < kT; ++t) s += in[((b * kX + x) * kC + c) * kT + t];
        want[(b * kC + c) * kX + x] = s;
      }
  for (const UOpRef& a : {ast, reordered}) {
    std::vector<HostBuf> bufs{HostBuf::zeros<float>(kB * kC * kX), HostBuf::of(in)};
    run(compile(a), bufs);
    EXPECT_EQ(bufs[0].as<float>(), want);
  }
}

// A batch norm's scale and shift: the activations and the output run along the positions,
// three per-channel parameters along the channels. The parameters are small (weighted by
// their footprint), so the positions stay innermost.
TEST(LoopOrder, SmallOperandsDoNotMoveTheLoops) {
  UOpRef b = range(idx(4), 0), c = range(idx(64), 1), p = range(idx(256), 2);
  UOpRef o = global(0, dtypes::float32), x = global(1, dtypes::float32);
  UOpRef g = global(2, dtypes::float32), h = global(3, dtypes::float32);
  UOpRef m = global(4, dtypes::float32);
  UOpRef at = (b * 64 + c) * 256 + p;
  const UOpRef ast = sink({store(o, at, (load(x, at) - load(m, c)) * load(g, c) + load(h, c))});
  EXPECT_EQ(polygrad::codegen::order_loops(ast).get(), ast.get());
}

// A transpose stores contiguously along one range and loads along the other: a tie, so the
// loops stay; a kernel with a REDUCE is left alone.
TEST(LoopOrder, TiesAndReducesKeepTheirOrder) {
  UOpRef b = range(idx(2), 0), i = range(idx(16), 1), j = range(idx(16), 2);
  UOpRef o = global(0, dtypes::float32), in = global(1, dtypes::float32);
  const UOpRef transpose = sink({store(o, (b * 16 + i) * 16 + j, load(in, (b * 16 + j) * 16 + i))});
  EXPECT_EQ(polygrad::codegen::order_loops(transpose).get(), transpose.get());
  UOpRef k = range(idx(4), 3);
  const UOpRef summed = sink({store(
      o, (b * 16 + i) * 16 + j, reduce(Op::ADD, load(in, ((b * 16 + j) * 16 + i) * 4 + k), {k}))});
  EXPECT_EQ(polygrad::codegen::order_loops(summed).get(), summed.get());
}

// A transpose out[i, j] = in[j, i] in tiles of 16 x 16: four loops, the last tiles partial
// (37 x 45 and 16 x 3: the short range is not tiled, nothing is), values as plain C++.
TEST(LoopOrder, TransposesRunInTiles) {
  for (auto [m, n] : {std::pair<int64_t, int64_t>{37, 45}, {64, 32}, {16, 3}}) {
    UOpRef i = range(idx(m), 0), j = range(idx(n), 1);
    UOpRef o = global(0, dtypes::float32), in = global(1, dtypes::float32);
    const UOpRef ast = sink({store(o, i * n + j, load(in, j * m + i))});
    const UOpRef tiled = polygrad::codegen::tile_transposes(ast);
    int ranges = 0;
    for (const polygrad::UOp* u : polygrad::toposort(tiled)) ranges += u->op() == Op::RANGE;
    EXPECT_EQ(ranges, n >= 16 ? 4 : 2) << m << "x" << n;
    std::vector<float> src = exact_ints(m * n, 7), want(static_cast<size_t>(m * n));
    for (int64_t r = 0; r < m; ++r)
      for (int64_t c = 0; c < n; ++c) want[r * n + c] = src[c * m + r];
    // One spare element past the end: the gated stores of partial tiles leave it alone.
    std::vector<HostBuf> bufs{HostBuf::of(std::vector<float>(static_cast<size_t>(m * n + 1), 5)),
                              HostBuf::of(src)};
    run(compile(tiled), bufs);
    want.push_back(5);
    EXPECT_EQ(bufs[0].as<float>(), want) << m << "x" << n;
  }
}

}  // namespace
}  // namespace polygrad_test
