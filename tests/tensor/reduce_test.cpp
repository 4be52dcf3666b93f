// Reductions against torch (fixtures/reduce.txt).
#include "harness.hpp"

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

}  // namespace
