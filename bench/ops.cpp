// Times polygrad on the cases of bench/compare.py (which runs numpy and torch on the same cases
// in the same run and prints ratios). Prints one JSON object per case:
//   {"case": "softmax_4096", "ms": 12.3}
// Usage: bench_ops [case-substring]
#include "runtime/runtime.hpp"
#include "tensor/lazy.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <random>
#include <string>
#include <vector>

namespace {

using polygrad::Op;
using polygrad::UOpRef;
using polygrad::lazy::Shape;
namespace lazy = polygrad::lazy;
namespace runtime = polygrad::runtime;

const std::string& device() {
  static const std::string d = runtime::canonical_device("");
  return d;
}

UOpRef random_input(const Shape& s, unsigned seed) {
  std::vector<float> v(static_cast<size_t>(lazy::numel(s)));
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> d(-1, 1);
  for (float& x : v) x = d(gen);
  return runtime::from_host(device(), polygrad::dtypes::float32, s, v.data());
}

UOpRef ew(Op op, const UOpRef& a, const UOpRef& b) {
  return lazy::elementwise(op, {a, b});
}

double median_ms(const std::function<void()>& run, int reps) {
  run();
  run();
  std::vector<double> t;
  for (int i = 0; i < reps; ++i) {
    auto start = std::chrono::steady_clock::now();
    run();
    t.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                    .count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

void report(const std::string& name, double ms) {
  std::printf("{\"case\": \"%s\", \"ms\": %.4f}\n", name.c_str(), ms);
  std::fflush(stdout);
}

UOpRef softmax(const UOpRef& x, int64_t n, int64_t m) {
  Shape s{n, m};
  UOpRef mx = lazy::expand(lazy::reduce(x, Op::MAX, {1}), s);
  UOpRef e = lazy::elementwise(
      Op::EXP2, {ew(Op::MUL, ew(Op::SUB, x, mx), lazy::full(x->dtype(), 1.0 / std::log(2.0), s))});
  // As Tensor::softmax builds it: one reciprocal per row, a multiply per element.
  UOpRef sum = lazy::reduce(e, Op::ADD, {1});
  return ew(Op::MUL, e, lazy::expand(lazy::elementwise(Op::RECIP, {sum}), s));
}

/// a (m, k) @ b (k, n).
UOpRef matmul(const UOpRef& a, const UOpRef& b, int64_t m, int64_t k, int64_t n) {
  UOpRef ae = lazy::expand(lazy::reshape(a, {m, 1, k}), {m, n, k});
  UOpRef be = lazy::expand(lazy::reshape(lazy::permute(b, {1, 0}), {1, n, k}), {m, n, k});
  return lazy::reshape(lazy::reduce(ew(Op::MUL, ae, be), Op::ADD, {2}), {m, n});
}
UOpRef matmul(const UOpRef& a, const UOpRef& b, int64_t n) {
  return matmul(a, b, n, n, n);
}

}  // namespace

int main(int argc, char** argv) {
  const std::string only = argc > 1 ? argv[1] : "";
  auto want = [&](const std::string& name) { return name.find(only) != std::string::npos; };
  const int64_t big = 16 * 1024 * 1024;
  if (want("axpb_prealloc") || want("axpb_new") || want("sum")) {
    UOpRef a = random_input({big}, 1), b = random_input({big}, 2), c = random_input({big}, 3);
    UOpRef out = random_input({big}, 4);
    if (want("axpb_prealloc"))
      report("axpb_prealloc", median_ms(
                                  [&] {
                                    runtime::realize(
                                        {lazy::assign(out, ew(Op::ADD, ew(Op::MUL, a, b), c))},
                                        device());
                                  },
                                  20));
    if (want("axpb_new"))
      report(
          "axpb_new",
          median_ms([&] { runtime::realize({ew(Op::ADD, ew(Op::MUL, a, b), c)}, device()); }, 20));
    if (want("sum"))
      report("sum",
             median_ms([&] { runtime::realize({lazy::reduce(a, Op::ADD, {0})}, device()); }, 20));
  }
  if (want("tiny_realize")) {
    // Host overhead of a cached realize: a tiny graph whose kernel is already compiled.
    UOpRef a = random_input({16}, 8), b = random_input({16}, 9);
    report("tiny_realize",
           median_ms([&] { runtime::realize({ew(Op::ADD, a, b)}, device()); }, 2000));
  }
  if (want("softmax")) {
    UOpRef x = random_input({4096, 4096}, 5);
    report("softmax_4096",
           median_ms([&] { runtime::realize({softmax(x, 4096, 4096)}, device()); }, 10));
  }
  for (int64_t n : {256, 512, 1024, 2048}) {
    std::string name = "matmul_" + std::to_string(n);
    if (!want(name)) continue;
    UOpRef a = random_input({n, n}, 6), b = random_input({n, n}, 7);
    int reps = n >= 2048 ? 3 : 10;
    report(name, median_ms([&] { runtime::realize({matmul(a, b, n)}, device()); }, reps));
  }
  if (want("linear_1024")) {
    // x @ w.T, w (out, in) as a Linear layer holds it: b read k-major.
    const int64_t n = 1024;
    UOpRef x = random_input({n, n}, 10), w = random_input({n, n}, 11);
    report("linear_1024",
           median_ms(
               [&] {
                 runtime::realize({matmul(x, lazy::permute(w, {1, 0}), n)}, device());
               },
               10));
  }
  if (want("wgrad_1024")) {
    // A Linear layer's weight gradient dy.T @ x over a batch of 512 (the batch a launch
    // variable, both operands read from panels).
    const int64_t batch = 512, n = 1024;
    UOpRef dy = random_input({batch, n}, 12), x = random_input({batch, n}, 13);
    report("wgrad_1024",
           median_ms(
               [&] {
                 runtime::realize({matmul(lazy::permute(dy, {1, 0}), x, n, batch, n)}, device());
               },
               10));
  }
  return 0;
}
