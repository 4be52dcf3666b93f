// Reproducible test inputs for the scheduler tests.
#ifndef POLYGRAD_TESTS_SCHEDULE_RANDOM_VALUES_HPP
#define POLYGRAD_TESTS_SCHEDULE_RANDOM_VALUES_HPP

#include <random>
#include <vector>

namespace polygrad::testgraph {

/// n floats uniform in [lo, hi) from a generator seeded with `seed`.
inline std::vector<float> random_floats(size_t n, unsigned seed, float lo = -3, float hi = 3) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = d(gen);
  return v;
}

}  // namespace polygrad::testgraph

#endif  // POLYGRAD_TESTS_SCHEDULE_RANDOM_VALUES_HPP
