// IR benchmarks: building (interning) nodes and rewriting graphs.
//   build/<dir>/bin/bench_ir
#include "ir/uop.hpp"
#include "rewrite/graph_rewrite.hpp"
#include "symbolic/simplify.hpp"

#include <benchmark/benchmark.h>

#include <vector>

namespace {

using namespace polygrad;

// A new node each iteration (a chain), so every call inserts into the intern table.
void BM_BuildNewNode(benchmark::State& state) {
  UOpRef x = define_var("x", 0, 100, dtypes::int32);
  UOpRef one = const_int(dtypes::int32, 1);
  std::vector<UOpRef> keep;
  keep.reserve(1 << 20);
  UOpRef e = x;
  for (auto _ : state) {
    e = e + one;
    if (keep.size() < (1u << 20)) keep.push_back(e);
  }
  benchmark::DoNotOptimize(e.get());
}
BENCHMARK(BM_BuildNewNode);

// The same node every iteration: the lookup path of hash-consing.
void BM_BuildExistingNode(benchmark::State& state) {
  UOpRef x = define_var("x", 0, 100, dtypes::int32);
  UOpRef one = const_int(dtypes::int32, 1);
  UOpRef keep = x + one;
  for (auto _ : state) benchmark::DoNotOptimize((x + one).get());
}
BENCHMARK(BM_BuildExistingNode);

// A graph of ~10k nodes: a chain of (e + 0) * 1 steps that identity rules collapse.
UOpRef identity_chain(int steps) {
  UOpRef e = define_var("x", 0, 100, dtypes::int32);
  UOpRef zero = const_int(dtypes::int32, 0), one = const_int(dtypes::int32, 1);
  for (int i = 0; i < steps; ++i) e = (e + zero) * one;
  return e;
}

void BM_GraphRewrite10k(benchmark::State& state) {
  static const RuleSet rules = RuleSet("bench") |
                               rule(var("x") + cconst(0), [](Match& m) { return m["x"]; }) |
                               rule(var("x") * cconst(1), [](Match& m) { return m["x"]; });
  UOpRef g = identity_chain(5000);  // 10000 ALU nodes
  for (auto _ : state) benchmark::DoNotOptimize(graph_rewrite(g, rules).get());
  state.SetItemsProcessed(state.iterations() * 10000);
}
BENCHMARK(BM_GraphRewrite10k)->Unit(benchmark::kMillisecond);

// The full symbolic rule set over a 10k-node index expression that does not simplify away.
void BM_Simplify10k(benchmark::State& state) {
  UOpRef e = define_var("x", 0, 100, dtypes::int32);
  for (int i = 0; i < 2500; ++i) e = max(e * 3 + define_var("y", 0, 7, dtypes::int32), e) % 1000;
  for (auto _ : state) benchmark::DoNotOptimize(simplify(e).get());
  state.SetItemsProcessed(state.iterations() * 10000);
}
BENCHMARK(BM_Simplify10k)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
