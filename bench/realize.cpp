// Host-side costs of the compiler: building graph nodes, scheduling a graph, and a realize
// whose schedule and kernel are cached (the per-call overhead of a model step).
#include "runtime/runtime.hpp"
#include "schedule/schedule.hpp"
#include "tensor/lazy.hpp"

#include <benchmark/benchmark.h>

#include <cmath>
#include <vector>

namespace {

using polygrad::Op;
using polygrad::UOpRef;
namespace lazy = polygrad::lazy;
namespace runtime = polygrad::runtime;

UOpRef softmax(const UOpRef& x, int64_t n, int64_t m) {
  lazy::Shape s{n, m};
  UOpRef mx = lazy::expand(lazy::reduce(x, Op::MAX, {1}), s);
  UOpRef d = lazy::elementwise(Op::SUB, {x, mx});
  UOpRef e = lazy::elementwise(
      Op::EXP2, {lazy::elementwise(Op::MUL, {d, lazy::full(x->dtype(), 1 / std::log(2.0), s)})});
  return lazy::elementwise(Op::FDIV, {e, lazy::expand(lazy::reduce(e, Op::ADD, {1}), s)});
}

// A new elementwise node over two existing ones (each iteration builds a distinct node).
void BM_BuildNode(benchmark::State& state) {
  UOpRef a = lazy::buffer(polygrad::dtypes::float32, 16, 1);
  UOpRef acc = a;
  std::vector<UOpRef> keep;
  for (auto _ : state) {
    acc = lazy::elementwise(Op::ADD, {acc, a});
    keep.push_back(acc);
  }
}
BENCHMARK(BM_BuildNode);

// A scheduling context on "cpu:0" whose new buffers are numbered from `next`.
polygrad::schedule::Context cpu_context(int64_t& next) {
  polygrad::schedule::Context ctx;
  ctx.device = "cpu:0";
  ctx.new_buffer = [&next](const std::string&, polygrad::DType t, int64_t n) {
    return lazy::buffer(t, n, next++);
  };
  ctx.buffer_device = [](const polygrad::UOp*) { return std::string("cpu:0"); };
  return ctx;
}

// Scheduling softmax (uncached: make_schedule directly).
void BM_ScheduleSoftmax(benchmark::State& state) {
  int64_t next = 1;
  polygrad::schedule::Context ctx = cpu_context(next);
  UOpRef x = lazy::reshape(lazy::buffer(polygrad::dtypes::float32, 64 * 64, 0), {64, 64});
  for (auto _ : state) {
    auto s = polygrad::schedule::make_schedule({softmax(x, 64, 64)}, ctx);
    benchmark::DoNotOptimize(s.items.data());
  }
}
BENCHMARK(BM_ScheduleSoftmax);

// Scheduling the first-call graph, (a @ b).relu().sum() on 512x512 (uncached). The same graph
// every iteration: after the first, its index terms are known fixed points of simplify.
void BM_ScheduleMatmulReluSum(benchmark::State& state) {
  int64_t next = 1;
  polygrad::schedule::Context ctx = cpu_context(next);
  constexpr int64_t n = 512;
  auto matrix = [&](int64_t id) {
    return lazy::reshape(lazy::buffer(polygrad::dtypes::float32, n * n, id), {n, n});
  };
  UOpRef a = matrix(-1), b = matrix(-2);
  // a @ b as the frontends build it: a[:, :, None] * b[None, :, :] summed over the middle axis.
  UOpRef prod = lazy::elementwise(Op::MUL, {lazy::expand(lazy::reshape(a, {n, n, 1}), {n, n, n}),
                                            lazy::expand(lazy::reshape(b, {1, n, n}), {n, n, n})});
  UOpRef mm = lazy::reshape(lazy::reduce(prod, Op::ADD, {1}), {n, n});
  UOpRef relu =
      lazy::elementwise(Op::MAX, {mm, lazy::full(polygrad::dtypes::float32, 0.0, {n, n})});
  UOpRef total = lazy::reduce(relu, Op::ADD, {0, 1});
  for (auto _ : state) {
    auto s = polygrad::schedule::make_schedule({total}, ctx);
    benchmark::DoNotOptimize(s.items.data());
  }
}
BENCHMARK(BM_ScheduleMatmulReluSum);

// realize of a tiny graph whose schedule and kernel are cached: host overhead per call.
void BM_CachedRealize(benchmark::State& state) {
  const std::string dev = runtime::canonical_device("");
  std::vector<float> v(16, 1.0f);
  UOpRef a = runtime::from_host(dev, polygrad::dtypes::float32, {16}, v.data());
  UOpRef b = runtime::from_host(dev, polygrad::dtypes::float32, {16}, v.data());
  runtime::realize({lazy::elementwise(Op::ADD, {a, b})}, dev);
  for (auto _ : state) {
    auto out = runtime::realize({lazy::elementwise(Op::ADD, {a, b})}, dev);
    benchmark::DoNotOptimize(out.data());
  }
}
BENCHMARK(BM_CachedRealize);

}  // namespace

BENCHMARK_MAIN();
