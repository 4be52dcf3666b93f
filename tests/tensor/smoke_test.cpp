#include "harness.hpp"

using polygrad::Tensor;
using tensor_test::expect_values;

TEST(Smoke, AddBroadcast) {
  Tensor a(std::vector<float>{1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor b(std::vector<float>{10, 20, 30}, {3});
  expect_values(a + b, {2, 3}, {11, 22, 33, 14, 25, 36});
  expect_values((a * 2).sum(), {}, {42});
  expect_values(a.sum(0), {3}, {5, 7, 9});
  expect_values(a.exp().log(), {2, 3}, {1, 2, 3, 4, 5, 6});
}
