// Reductions against torch (fixtures/reduce.txt).
#include "harness.hpp"

#include <cmath>
#include <cstdint>
#include <utility>

namespace {

using polygrad::Tensor;
using tensor_test::A;
using tensor_test::B;
using tensor_test::C;
using tensor_test::Case;

const tensor_test::OpTable& table() {
  static const tensor_test::OpTable t = {
      {"sum_all", [](const Case& c) { return A(c).sum(); }},
      {"sum_axis1", [](const Case& c) { return A(c).sum(1); }},
      {"sum_axes02_keepdim",
       [](const Case& c) {
         return A(c).sum({0, 2}, true);
       }},
      {"max_axis2", [](const Case& c) { return A(c).max(2); }},
      {"max_all", [](const Case& c) { return A(c).max(); }},
      {"min_axis0_keepdim", [](const Case& c) { return A(c).min(0, true); }},
      {"mean_axis1", [](const Case& c) { return A(c).mean(1); }},
      {"mean_all", [](const Case& c) { return A(c).mean(); }},
      {"var_axis2", [](const Case& c) { return A(c).var(2); }},
      {"var_axis1_c0", [](const Case& c) { return A(c).var(1, false, 0.0); }},
      {"var_all", [](const Case& c) { return A(c).var(); }},
      {"std_axis0", [](const Case& c) { return A(c).std(0); }},
      {"std_axes12_keepdim",
       [](const Case& c) {
         return A(c).std({1, 2}, true);
       }},
      {"prod_axis1", [](const Case& c) { return A(c).prod(1); }},
      {"argmax_axis1", [](const Case& c) { return A(c).argmax(1); }},
      {"argmax_axis0_keepdim", [](const Case& c) { return A(c).argmax(0, true); }},
      {"argmax_flat", [](const Case& c) { return A(c).argmax(); }},
      {"argmin_axis1", [](const Case& c) { return A(c).argmin(1); }},
      {"cumsum_axis1", [](const Case& c) { return A(c).cumsum(1); }},
      {"cumsum_axis0", [](const Case& c) { return A(c).cumsum(0); }},
  };
  return t;
}

POLYGRAD_TORCH_FIXTURE_SUITE(Reduce, "reduce", table(), 1e-5, 1e-4)

// Long column sums (the rows a launch variable: a constant count and one that leaves a rest
// past the whole blocks) add in blocks, so their rounding error does not grow with every row:
// within 1e-6 relative of the sum in double (adding 4096 rows one by one erred by 2.6e-6).
TEST(ReducePrecision, LongColumnSumsAddInBlocks) {
  for (const auto& [rows, cols] : {std::pair<int64_t, int64_t>{4096, 64}, {3000, 40}}) {
    std::vector<float> v(static_cast<size_t>(rows * cols));
    uint64_t state = 12345;
    for (float& x : v) {
      state = state * 6364136223846793005ull + 1442695040888963407ull;
      x = 100.0f + static_cast<float>(state >> 40) / static_cast<float>(1 << 24);
    }
    const std::vector<float> got = Tensor(v, {rows, cols}).sum({0}).to_vector<float>();
    for (int64_t c = 0; c < cols; ++c) {
      double want = 0;
      for (int64_t r = 0; r < rows; ++r) want += v[static_cast<size_t>(r * cols + c)];
      EXPECT_LE(std::fabs(got[static_cast<size_t>(c)] - want) / want, 1e-6)
          << rows << " rows, column " << c;
    }
  }
}

// Equal values have a variance of exactly 0, as torch's (Welford) gives: the mean is taken as
// x0 + mean(x - x0), so 7 or 9 copies of 1.3f (whose float sum rounds, and whose plain mean
// left a variance of 1.6e-14) center to 0. Then std is 0 with torch's gradient 0 there, and a
// layernorm of a constant row is 0 (it was 3.8e-5); rows and columns alike.
TEST(ReducePrecision, EqualValuesHaveZeroVariance) {
  for (const int64_t n : {int64_t{7}, int64_t{9}}) {
    Tensor x = Tensor::full({3, n}, 1.3, PG_DTYPE_FLOAT32);
    x.requires_grad(true);
    const Tensor s = x.std(1);
    s.sum().backward();
    EXPECT_EQ(x.var(1).to_vector<float>(), std::vector<float>(3, 0.0f)) << n;
    EXPECT_EQ(s.to_vector<float>(), std::vector<float>(3, 0.0f)) << n;
    ASSERT_TRUE(x.grad().has_value());
    EXPECT_EQ(x.grad()->to_vector<float>(), std::vector<float>(3 * n, 0.0f)) << n;
    EXPECT_EQ(x.layernorm().to_vector<float>(), std::vector<float>(3 * n, 0.0f)) << n;
    EXPECT_EQ(x.T().contiguous().var(0).to_vector<float>(), std::vector<float>(3, 0.0f)) << n;
  }
}

// A braced list of axes is a list, `{}` included: every axis (hand-derived: 1..6 in a 2 x 3
// matrix sums to 21, its population variance is 35/12, its sample deviation sqrt(3.5)). The
// one-axis overloads once took `{}` as axis 0.
TEST(ReduceAxes, BracedListsAreAxisLists) {
  Tensor x(std::vector<float>{1, 2, 3, 4, 5, 6}, {2, 3});
  tensor_test::expect_values(x.sum({}), {}, {21});
  tensor_test::expect_values(x.sum({}, true), {1, 1}, {21});
  tensor_test::expect_values(x.max({}), {}, {6});
  tensor_test::expect_values(x.min({}), {}, {1});
  tensor_test::expect_values(x.prod({}), {}, {720});
  tensor_test::expect_values(x.mean({}, true), {1, 1}, {3.5});
  tensor_test::expect_values(x.var({}, false, 0.0), {}, {35.0 / 12.0});
  tensor_test::expect_values(x.std({}), {}, {std::sqrt(3.5)});
  tensor_test::expect_values(x.sum({1}), {2}, {6, 15});
  tensor_test::expect_values(x.sum({0, -1}), {}, {21});
  tensor_test::expect_values(x.flip({}), {2, 3}, {1, 2, 3, 4, 5, 6});
  tensor_test::expect_values(x.flip({1}), {2, 3}, {3, 2, 1, 6, 5, 4});
  Tensor b(std::vector<bool>{true, false, false, false, false, false}, {2, 3});
  tensor_test::expect_values(b.any(1), {2}, {1, 0});
  tensor_test::expect_values(b.any({}), {}, {1});
  tensor_test::expect_values(b.all({}, true), {1, 1}, {0});
  tensor_test::expect_values(b.logical_not().all(0), {3}, {0, 1, 1});
}

}  // namespace
