// Writes through a view (Tensor::assign on a slice or transpose of a realised tensor, and the
// lazy detail::assign_through_view the GPT-2 decode step uses): only the view's elements of
// the buffer change. Values against plain C++ arrays; compiles counted through
// runtime::compiled_kernel_count.
#include "random_values.hpp"
#include "runtime/runtime.hpp"
#include "tensor/tensor_impl.hpp"

#include <polygrad/error.hpp>
#include <polygrad/symbolic.hpp>
#include <polygrad/tensor.hpp>

#include <gtest/gtest.h>

namespace polygrad {
namespace {

constexpr int64_t kRows = 6, kCols = 7;

std::vector<float> uniform(size_t n, unsigned seed) {
  return testgraph::random_floats(n, seed, -1, 1);
}

// `base` (kRows, kCols) with the block [r0, r1) x [c0, c1) replaced by `value` (row-major).
std::vector<float> with_block(std::vector<float> base, int64_t r0, int64_t r1, int64_t c0,
                              int64_t c1, const std::vector<float>& value) {
  for (int64_t r = r0; r < r1; ++r)
    for (int64_t c = c0; c < c1; ++c)
      base[size_t(r * kCols + c)] = value[size_t((r - r0) * (c1 - c0) + (c - c0))];
  return base;
}

struct Block {
  int64_t r0, r1, c0, c1;
};

class AssignViewTest : public ::testing::TestWithParam<Block> {};

TEST_P(AssignViewTest, ShrinkWritesOnlyItsElements) {
  const Block b = GetParam();
  const std::vector<float> a = uniform(kRows * kCols, 1);
  const std::vector<float> v = uniform(size_t((b.r1 - b.r0) * (b.c1 - b.c0)), 2);
  Tensor t(a, {kRows, kCols});
  t.realize();
  Tensor view = t.shrink({{b.r0, b.r1}, {b.c0, b.c1}});
  view.assign(Tensor(v, {b.r1 - b.r0, b.c1 - b.c0}));
  EXPECT_EQ(t.to_vector<float>(), with_block(a, b.r0, b.r1, b.c0, b.c1, v));
  EXPECT_EQ(view.to_vector<float>(), v);
}

INSTANTIATE_TEST_SUITE_P(Blocks, AssignViewTest,
                         ::testing::Values(Block{2, 3, 0, kCols},  // a row
                                           Block{1, 5, 0, kCols},  // rows
                                           Block{0, kRows, 3, 4},  // a column
                                           Block{0, kRows, 1, 6},  // columns
                                           Block{1, 4, 2, 5},      // a block
                                           Block{5, 6, 6, 7}));    // a corner element

TEST(AssignView, TransposedViewWritesTheTransposedElements) {
  const std::vector<float> a = uniform(3 * 4, 3), v = uniform(4 * 3, 4);
  Tensor t(a, {3, 4});
  t.realize();
  t.T().assign(Tensor(v, {4, 3}));
  std::vector<float> want(12);
  for (int64_t i = 0; i < 3; ++i)
    for (int64_t j = 0; j < 4; ++j) want[size_t(i * 4 + j)] = v[size_t(j * 3 + i)];
  EXPECT_EQ(t.to_vector<float>(), want);
}

TEST(AssignView, ValueReadingOtherRowsOfTheTarget) {
  // rows 1..3 = 2 * rows 0..2: the value reads the buffer where the write does not go
  const std::vector<float> a = uniform(5 * 4, 5);
  Tensor t(a, {5, 4});
  t.realize();
  t.shrink({{1, 4}, {0, 4}}).assign(t.shrink({{0, 3}, {0, 4}}) * 2.0);
  std::vector<float> want = a;
  for (size_t i = 4; i < 16; ++i) want[i] = 2 * a[i - 4];
  const std::vector<float> got = t.to_vector<float>();
  for (size_t i = 0; i < want.size(); ++i) EXPECT_FLOAT_EQ(got[i], want[i]) << i;
}

TEST(AssignView, BroadcastAndPaddedViewsAreRefusedNamingTheOp) {
  Tensor t(uniform(4, 6), {1, 4});
  t.realize();
  try {
    Tensor e = t.expand({3, 4});
    e.assign(Tensor::ones({3, 4}));
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("EXPAND"), std::string::npos) << e.what();
  }
  try {
    Tensor p = t.pad({{1, 1}, {0, 0}});
    p.assign(Tensor::ones({3, 4}));
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("PAD"), std::string::npos) << e.what();
  }
}

TEST(AssignView, LazyWriteIntoALazyTargetIsRefusedNamingTheOp) {
  Tensor lazy = Tensor(uniform(8, 7), {2, 4}) + 1.0;
  Tensor view = lazy.shrink({{0, 1}, {0, 4}});
  try {
    detail::assign_through_view(lazy, view, Tensor::ones({1, 4}));
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("ADD"), std::string::npos) << e.what();
  }
}

// The decode step's pattern: the row n - 1 of a cache written lazily through its view, n a
// bound variable, and the first n rows read after the write in the same schedule. One set of
// kernels serves every position after the first.
TEST(AssignView, SymbolicRowWriteAndReadCompileOnce) {
  constexpr int64_t kMax = 20, kD = 8;
  std::vector<float> want(kMax * kD, 0.0f);
  Tensor cache(want, {kMax, kD});
  cache.realize();
  const Variable len("len", 1, kMax);
  size_t after_first = 0;
  bool first = true;
  for (int64_t p : {3, 4, 5, 9, 17, 2, 20, 11, 8, 12}) {
    const std::vector<float> row = uniform(kD, 100 + unsigned(p));
    std::copy(row.begin(), row.end(), want.begin() + (p - 1) * kD);
    const Dim n = len.bind(p);
    detail::assign_through_view(cache, shrink(cache, {{n - 1, n}, {0, kD}}), Tensor(row, {1, kD}));
    Tensor sum = shrink(cache, {{0, n}, {0, kD}}).sum({0});
    std::vector<Tensor> outs{sum, cache};
    Tensor::realize_all(outs);
    EXPECT_EQ(cache.to_vector<float>(), want) << "position " << p;
    const std::vector<float> got = sum.to_vector<float>();
    for (int64_t c = 0; c < kD; ++c) {
      double s = 0;
      for (int64_t r = 0; r < p; ++r) s += want[size_t(r * kD + c)];
      ASSERT_NEAR(got[size_t(c)], s, 1e-5) << "position " << p << " column " << c;
    }
    if (first) after_first = runtime::compiled_kernel_count();
    first = false;
  }
  EXPECT_EQ(runtime::compiled_kernel_count(), after_first) << "a new position compiled a kernel";
}

}  // namespace
}  // namespace polygrad
