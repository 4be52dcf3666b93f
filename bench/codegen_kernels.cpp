// Codegen benchmarks: hand-built kernel ASTs lowered by polygrad::codegen and run on the cpu
// device (BM_RenderMatmul1024: only rendered). No assertions; the numbers are reported as
// bytes/s or FLOP/s counters.
//   build/<dir>/bin/bench_codegen_kernels [--benchmark_filter=...]
// POLYGRAD_BENCH_NO_LANES=1 lowers reductions without lane splitting.
// POLYGRAD_BENCH_DECOMPOSE=1 decomposes transcendentals as for targets without libm.
// POLYGRAD_CODEGEN_DUMP=1 prints each kernel's rendered C.
#include <benchmark/benchmark.h>
#include <polygrad/device.hpp>
#include <polygrad/registry.hpp>

#include <cstdio>
#include <cstdlib>
#include <vector>

#include "codegen/lower.hpp"
#include "ir/uop.hpp"

namespace {

using namespace polygrad;

Device& cpu() {
  static Device d = Registry::global().device("cpu");
  return d;
}

UOpRef global(int64_t slot) {
  return UOp::make(Op::DEFINE_GLOBAL, dtypes::float32.ptr(AddrSpace::global), {}, slot);
}
UOpRef idx(int64_t v) {
  return const_int(dtypes::index, v);
}
UOpRef load(const UOpRef& buf, const UOpRef& off) {
  return UOp::make(Op::LOAD, dtypes::float32, {UOp::make(Op::INDEX, buf->dtype(), {buf, off})});
}
UOpRef store(const UOpRef& buf, const UOpRef& off, const UOpRef& v) {
  return UOp::make(Op::STORE, dtypes::void_, {UOp::make(Op::INDEX, buf->dtype(), {buf, off}), v});
}
UOpRef reduce(Op op, const UOpRef& v, std::initializer_list<UOpRef> ranges) {
  std::vector<UOpRef> srcs{v};
  srcs.insert(srcs.end(), ranges.begin(), ranges.end());
  return UOp::make(Op::REDUCE, v->dtype(), srcs, static_cast<int64_t>(op));
}
UOpRef sink(const UOpRef& s) {
  return UOp::make(Op::SINK, dtypes::void_, {s});
}

/// Lowers `ast`, loads it, allocates float32 buffers of the given sizes (filled with small
/// values) and times one launch + synchronize per iteration.
void run(benchmark::State& state, const UOpRef& ast, const std::vector<size_t>& sizes, double bytes,
         double flops) {
  codegen::Target target;
  target.caps = cpu().properties().caps;
  // POLYGRAD_BENCH_NO_LANES=1: no reduction lanes (measures what the lane split buys).
  if (std::getenv("POLYGRAD_BENCH_NO_LANES")) target.caps.vector_width_bytes = 0;
  // POLYGRAD_BENCH_DECOMPOSE=1: EXP2/LOG2/SIN as ALU ops (vectorisable) instead of libm calls.
  if (std::getenv("POLYGRAD_BENCH_DECOMPOSE")) target.caps.flags |= PG_CAP_DECOMPOSE_TRANSCENDENTAL;
  codegen::LoweredKernel k = codegen::lower(ast, target);
  pg_kernel_program p = k.program();
  Artifact art = cpu().render(p);
  if (std::getenv("POLYGRAD_CODEGEN_DUMP")) std::fprintf(stderr, "%s\n", art.text().c_str());
  Program prog = cpu().load(art, k.name);
  std::vector<Buffer> bufs;
  LaunchArgs args;
  for (size_t n : sizes) {
    std::vector<float> host(n);
    for (size_t i = 0; i < n; ++i) host[i] = static_cast<float>(i % 13) * 0.125f - 0.5f;
    bufs.push_back(cpu().alloc(n * 4));
    cpu().copy_in(bufs.back(), host.data(), n * 4);
  }
  for (const Buffer& b : bufs) args.buffers.push_back(&b);
  args.global_size = k.launch_global({});
  for (auto _ : state) {
    cpu().launch(prog, args);
    cpu().synchronize();
  }
  state.counters["bytes/s"] =
      benchmark::Counter(bytes, benchmark::Counter::kIsIterationInvariantRate);
  if (flops > 0)
    state.counters["FLOP/s"] =
        benchmark::Counter(flops, benchmark::Counter::kIsIterationInvariantRate);
  state.SetLabel(k.name);
}

constexpr int64_t k16M = 16 * 1024 * 1024;

void BM_MulAdd16M(benchmark::State& state) {
  UOpRef r = range(idx(k16M), 0);
  UOpRef a = global(1), b = global(2), c = global(3);
  UOpRef ast = sink(store(global(0), r, load(a, r) * load(b, r) + load(c, r)));
  run(state, ast, {k16M, k16M, k16M, k16M}, 16.0 * k16M, 2.0 * k16M);
}

void BM_Sum16M(benchmark::State& state) {
  UOpRef k = range(idx(k16M), 0);
  UOpRef ast = sink(store(global(0), idx(0), reduce(Op::ADD, load(global(1), k), {k})));
  run(state, ast, {1, k16M}, 4.0 * k16M, 1.0 * k16M);
}

void BM_Softmax4096(benchmark::State& state) {
  const int64_t n = 4096;
  UOpRef i = range(idx(n), 0), j = range(idx(n), 1), k = range(idx(n), 2), k2 = range(idx(n), 3);
  UOpRef x = global(1);
  UOpRef c = const_float(dtypes::float32, 1.4426950408889634);
  UOpRef mx = reduce(Op::MAX, load(x, i * n + k), {k});
  auto e = [&](const UOpRef& col) { return alu(Op::EXP2, {(load(x, i * n + col) - mx) * c}); };
  UOpRef ast = sink(store(global(0), i * n + j, e(j) / reduce(Op::ADD, e(k2), {k2})));
  run(state, ast, {size_t(n * n), size_t(n * n)}, 8.0 * n * n, 0);
}

/// C = A @ B over n x n float32 matrices (slots 0, 1, 2).
UOpRef matmul_ast(int64_t n) {
  UOpRef i = range(idx(n), 0), j = range(idx(n), 1), k = range(idx(n), 2);
  UOpRef a = global(1), b = global(2);
  return sink(
      store(global(0), i * n + j, reduce(Op::ADD, load(a, i * n + k) * load(b, k * n + j), {k})));
}

void BM_Matmul1024(benchmark::State& state) {
  const int64_t n = 1024;
  run(state, matmul_ast(n), {size_t(n * n), size_t(n * n), size_t(n * n)}, 12.0 * n * n,
      2.0 * n * n * n);
}

/// The host's side of a first call: the 1024^3 matmul's register-tiled kernel (483
/// instructions) rendered to C.
void BM_RenderMatmul1024(benchmark::State& state) {
  codegen::Target target;
  target.caps = cpu().properties().caps;
  codegen::LoweredKernel lowered = codegen::lower(matmul_ast(1024), target);
  pg_kernel_program p = lowered.program();
  size_t bytes = 0;
  for (auto _ : state) bytes = cpu().render(p).text().size();
  state.counters["instructions"] = static_cast<double>(p.instruction_count);
  state.counters["bytes"] = static_cast<double>(bytes);
}

BENCHMARK(BM_MulAdd16M)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_Sum16M)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_Softmax4096)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_Matmul1024)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_RenderMatmul1024)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
