// Shared helpers of the tensor tests: approximate comparison and torch fixtures.
#ifndef POLYGRAD_TESTS_TENSOR_HARNESS_HPP
#define POLYGRAD_TESTS_TENSOR_HARNESS_HPP

#include <polygrad/error.hpp>
#include <polygrad/tensor.hpp>

#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace tensor_test {

using polygrad::Tensor;

/// A fixture array: dtype name, shape and values (as doubles).
struct Array {
  std::string dtype;
  std::vector<int64_t> shape;
  std::vector<double> values;
  /// As a tensor of its dtype.
  Tensor tensor() const;
};

/// One fixture case: named input and output arrays.
struct Case {
  std::string name;
  std::map<std::string, Array> arrays;
  const Array& at(const std::string& key) const;
  Tensor in(const std::string& key) const { return at(key).tensor(); }
};

/// A case's inputs "a", "b" and "c" as tensors (the names every fixture file uses).
inline Tensor A(const Case& c) {
  return c.in("a");
}
inline Tensor B(const Case& c) {
  return c.in("b");
}
inline Tensor C(const Case& c) {
  return c.in("c");
}

/// The cases of fixtures/<file>.txt, by name.
const std::map<std::string, Case>& fixture(const std::string& file);

/// Expects `got` to have the shape of `want` and values within atol + rtol * |want| (NaN
/// matches NaN, infinities must be equal).
void expect_close(const Tensor& got, const Array& want, double atol = 1e-5, double rtol = 1e-4);
/// Same, against explicit values.
void expect_values(const Tensor& got, const std::vector<int64_t>& shape,
                   const std::vector<double>& want, double atol = 1e-5, double rtol = 1e-4);

/// Expects `fn` to throw polygrad::Error of kind user whose message contains every part.
template <class F>
void expect_user_error(F&& fn, const std::vector<std::string>& parts) {
  try {
    fn();
    ADD_FAILURE() << "no error thrown";
  } catch (const polygrad::Error& e) {
    EXPECT_EQ(e.kind(), polygrad::ErrorKind::user) << e.what();
    for (const std::string& p : parts)
      EXPECT_NE(std::string(e.what()).find(p), std::string::npos)
          << "message '" << e.what() << "' lacks '" << p << "'";
  }
}

/// A fixture file's cases mapped to the polygrad expression each one checks.
using OpTable = std::map<std::string, std::function<Tensor(const Case&)>>;

/// Runs case `name` of fixtures/<file>.txt through table[name] and compares with its `out`.
void run_case(const std::string& file, const OpTable& table, const std::string& name,
              double atol = 1e-5, double rtol = 1e-4);

/// Every case in fixtures/<file>.txt has an entry in `table`, and every entry a case.
void expect_same_cases(const std::string& file, const OpTable& table);

/// The keys of a table (test parameters).
std::vector<std::string> keys(const OpTable& table);

/// Test names: the case name itself.
inline std::string case_name(const testing::TestParamInfo<std::string>& info) {
  return info.param;
}

}  // namespace tensor_test

/// The tests of one fixture file: Torch/Suite.MatchesTorch/<case> runs each case of
/// fixtures/<file>.txt through `table` against torch's output, and Suite.EveryFixtureCaseHasATest
/// checks that the table and the file list the same cases.
#define POLYGRAD_TORCH_FIXTURE_SUITE(Suite, file, table, atol, rtol)                  \
  class Suite : public testing::TestWithParam<std::string> {};                        \
  TEST_P(Suite, MatchesTorch) {                                                       \
    tensor_test::run_case(file, table, GetParam(), atol, rtol);                       \
  }                                                                                   \
  INSTANTIATE_TEST_SUITE_P(Torch, Suite, testing::ValuesIn(tensor_test::keys(table)), \
                           tensor_test::case_name);                                   \
  TEST(Suite, EveryFixtureCaseHasATest) {                                             \
    tensor_test::expect_same_cases(file, table);                                      \
  }

#endif  // POLYGRAD_TESTS_TENSOR_HARNESS_HPP
