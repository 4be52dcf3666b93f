// Gradient checks against central finite differences: a case builds a forward graph from its
// inputs; the harness realises autograd's gradients and compares them with differences of the
// forward graph realised at perturbed inputs (float64, cpu plugin).
#ifndef POLYGRAD_TESTS_AUTOGRAD_HARNESS_HPP
#define POLYGRAD_TESTS_AUTOGRAD_HARNESS_HPP

#include "tensor/lazy.hpp"

#include <functional>
#include <string>
#include <vector>

namespace polygrad::gradtest {

using lazy::Shape;

/// One gradient check.
struct GradCase {
  std::vector<Shape> inputs;  ///< one float64 input per shape
  std::function<UOpRef(const std::vector<UOpRef>&)> build;
  double lo = -2, hi = 2;                   ///< inputs are drawn uniformly from [lo, hi] ...
  std::vector<std::vector<double>> values;  ///< ... unless given here
  double step = 1e-5;                       ///< finite-difference step
  double tol = 1e-6;                        ///< |got - want| <= tol * (1 + |want|)
};

/// The cpu device's canonical name.
const std::string& device();
/// A realised float64 tensor holding `v`.
UOpRef input(const std::vector<double>& v, const Shape& s);
/// Realise `roots` together and copy each to the host as float64.
std::vector<std::vector<double>> values(const std::vector<UOpRef>& roots);
/// `v` broadcast to x's shape and dtype.
UOpRef like(const UOpRef& x, double v);

/// Runs the check (gtest assertions): the loss is sum(out * w) for a random fixed w, so every
/// output element's gradient is seen.
void check_gradients(const GradCase& c, unsigned seed = 1);

}  // namespace polygrad::gradtest

#endif  // POLYGRAD_TESTS_AUTOGRAD_HARNESS_HPP
