#include "harness.hpp"

#include "autograd/gradient.hpp"
#include "runtime/runtime.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

namespace polygrad::gradtest {

const std::string& device() {
  static const std::string dev = runtime::canonical_device("cpu");
  return dev;
}

UOpRef input(const std::vector<double>& v, const Shape& s) {
  return runtime::from_host(device(), dtypes::float64, s, v.data());
}

std::vector<std::vector<double>> values(const std::vector<UOpRef>& roots) {
  std::vector<UOpRef> cast;
  for (const UOpRef& r : roots) cast.push_back(lazy::cast(r, dtypes::float64));
  std::vector<std::vector<double>> out;
  for (const UOpRef& r : runtime::realize(cast, device())) {
    out.emplace_back(static_cast<size_t>(lazy::numel(lazy::shape_of(r))));
    runtime::to_host(r, out.back().data());
  }
  return out;
}

UOpRef like(const UOpRef& x, double v) {
  return lazy::full(x->dtype(), v, lazy::shape_of(x));
}

namespace {

double loss(const GradCase& c, const std::vector<std::vector<double>>& xs,
            const std::vector<double>& w) {
  std::vector<UOpRef> in;
  for (size_t k = 0; k < xs.size(); ++k) in.push_back(input(xs[k], c.inputs[k]));
  std::vector<double> out = values({c.build(in)})[0];
  double sum = 0;
  for (size_t i = 0; i < out.size(); ++i) sum += out[i] * w[i];
  return sum;
}

}  // namespace

void check_gradients(const GradCase& c, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> dist(c.lo, c.hi);
  std::vector<std::vector<double>> xs = c.values;
  if (xs.empty())
    for (const Shape& s : c.inputs) {
      xs.emplace_back(static_cast<size_t>(lazy::numel(s)));
      for (double& v : xs.back()) v = dist(gen);
    }
  ASSERT_EQ(xs.size(), c.inputs.size());

  std::vector<UOpRef> in;
  for (size_t k = 0; k < xs.size(); ++k) in.push_back(input(xs[k], c.inputs[k]));
  UOpRef out = c.build(in);
  Shape out_shape = lazy::shape_of(out);
  std::vector<double> w(static_cast<size_t>(lazy::numel(out_shape)));
  std::uniform_real_distribution<double> wdist(0.5, 1.5);
  for (double& v : w) v = wdist(gen);
  UOpRef w_node = lazy::cast(input(w, out_shape), out->dtype());

  std::vector<UOpRef> grads = autograd::gradient(out, w_node, in);
  for (size_t k = 0; k < grads.size(); ++k) {
    ASSERT_TRUE(grads[k]) << "no gradient for input " << k;
    ASSERT_EQ(lazy::shape_of(grads[k]), c.inputs[k]) << "input " << k;
  }
  std::vector<std::vector<double>> got = values(grads);

  for (size_t k = 0; k < xs.size(); ++k)
    for (size_t i = 0; i < xs[k].size(); ++i) {
      auto plus = xs, minus = xs;
      plus[k][i] += c.step;
      minus[k][i] -= c.step;
      double want = (loss(c, plus, w) - loss(c, minus, w)) / (2 * c.step);
      EXPECT_NEAR(got[k][i], want, c.tol * (1 + std::abs(want)))
          << "input " << k << " element " << i << " at x = " << xs[k][i];
    }
}

}  // namespace polygrad::gradtest
