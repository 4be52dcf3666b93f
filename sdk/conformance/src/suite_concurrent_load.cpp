// The concurrent-load suite (ABI 1.5, loaders that declare PG_LOADER_CONCURRENT_LOAD): eight
// distinct programs rendered, then loaded by four threads that start together, two each; every
// program must then compute its own values (out[i] = in[i] * k + k for its k).
#include <polygrad/program_builder.hpp>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "suites.hpp"

namespace polygrad::conformance::detail {

namespace {

constexpr int kPrograms = 8;
constexpr int kThreads = 4;
constexpr uint32_t kCount = 64;

/// out[i] = in[i] * k + k in int32 (every plugin declares int32), named for k.
sdk::ProgramBuilder times_k_plus_k(int k) {
  sdk::ProgramBuilder b("pgc_concurrent_" + std::to_string(k));
  auto out = b.param_buffer(0, PG_DTYPE_INT32);
  auto in = b.param_buffer(1, PG_DTYPE_INT32);
  auto i = b.special(PG_SPECIAL_GLOBAL, 0);
  auto kv = b.const_i(PG_DTYPE_INT32, k);
  b.store(b.index(out, i),
          b.binary(PG_OP_ADD, b.binary(PG_OP_MUL, b.load(b.index(in, i)), kv), kv));
  return b;
}

}  // namespace

void run_concurrent_load_suite(const Session& s, Suite& suite) {
  std::vector<sdk::ProgramBuilder> programs;
  programs.reserve(kPrograms);  // the views below point into the builders
  std::vector<const pg_kernel_program*> views;
  std::vector<std::string> artifacts(kPrograms);
  for (int k = 0; k < kPrograms; ++k) {
    programs.push_back(times_k_plus_k(k + 1));
    views.push_back(&programs[k].program());
    if (!expect_ok(suite, "render." + std::to_string(k + 1), s.render(views[k], artifacts[k])))
      return;
  }
  std::vector<pg_program_t> loaded(kPrograms, nullptr);
  std::vector<CallResult> results(kPrograms);
  std::atomic<int> waiting{kThreads};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      waiting.fetch_sub(1);
      while (waiting.load() > 0) std::this_thread::yield();  // all start together
      for (int k = t; k < kPrograms; k += kThreads)
        results[k] = s.load(artifacts[k], views[k]->name, &loaded[k], views[k]);
    });
  for (std::thread& t : threads) t.join();

  std::vector<int32_t> in(kCount), out(kCount);
  for (uint32_t i = 0; i < kCount; ++i) in[i] = static_cast<int32_t>(i) * 7 - 200;
  const uint64_t bytes = kCount * sizeof(int32_t);
  pg_buffer_t src = nullptr, dst = nullptr;
  const bool ready = expect_ok(suite, "alloc", s.alloc(bytes, &src)) &&
                     expect_ok(suite, "alloc.second", s.alloc(bytes, &dst)) &&
                     expect_ok(suite, "copy_in", s.copy_in(src, 0, in.data(), bytes));
  for (int k = 0; k < kPrograms; ++k) {
    const std::string check = "load_and_run." + std::to_string(k + 1);
    if (!expect_ok(suite, check + ".load", results[k]) || !ready) continue;
    pg_buffer_t buffers[2] = {dst, src};
    pg_launch_args args{};
    args.struct_size = sizeof(args);
    args.buffer_count = 2;
    args.buffers = buffers;
    args.global_size[0] = kCount;
    args.global_size[1] = args.global_size[2] = 1;
    args.local_size[0] = args.local_size[1] = args.local_size[2] = 1;
    CallResult r = s.launch(loaded[k], &args);
    if (r.ok()) r = s.synchronize();
    std::fill(out.begin(), out.end(), -1);
    if (r.ok()) r = s.copy_out(out.data(), dst, 0, bytes);
    if (!expect_ok(suite, check + ".launch", r)) continue;
    uint32_t wrong = 0;
    for (uint32_t i = 0; i < kCount; ++i) wrong += out[i] != in[i] * (k + 1) + (k + 1) ? 1u : 0u;
    suite.expect(wrong == 0, check + ".values",
                 std::to_string(wrong) + " of " + std::to_string(kCount) +
                     " elements differ from in * " + std::to_string(k + 1) + " + " +
                     std::to_string(k + 1));
  }
  if (src) s.free(src);
  if (dst) s.free(dst);
  for (pg_program_t p : loaded)
    if (p) s.unload(p);
}

}  // namespace polygrad::conformance::detail
