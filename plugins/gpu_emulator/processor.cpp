#include "processor.hpp"

#include <polygrad/plugin.hpp>

#include <atomic>
#include <string>

#include "target.hpp"

namespace polygrad::gpu_emu {

namespace {

std::string dims(const uint32_t d[3]) {
  return "(" + std::to_string(d[0]) + "," + std::to_string(d[1]) + "," + std::to_string(d[2]) + ")";
}

void check_geometry(const Program& p, const pg_launch_args& args) {
  auto bad = [&](const std::string& what) {
    sdk::fail(PG_ERR_LAUNCH, "gpu_emu: kernel '" + p.name + "' launched with " +
                                 dims(args.global_size) + " groups of " + dims(args.local_size) +
                                 " threads: " + what);
  };
  const uint32_t* l = args.local_size;
  for (int d = 0; d < 3; ++d) {
    if (l[d] == 0 || l[d] > kMaxLocalDims[d])
      bad("local size " + std::to_string(d) + " must be 1 to " + std::to_string(kMaxLocalDims[d]));
    if (args.global_size[d] > kMaxGlobalDims[d])
      bad("the grid takes at most " + std::to_string(kMaxGlobalDims[d]) + " groups in dim " +
          std::to_string(d));
  }
  const uint64_t threads = uint64_t{l[0]} * l[1] * l[2];
  if (threads > kMaxThreadsPerGroup)
    bad("a group holds at most " + std::to_string(kMaxThreadsPerGroup) + " threads");
  const uint32_t* want = p.local_size;
  if (want[0] && want[1] && want[2] && (want[0] != l[0] || want[1] != l[1] || want[2] != l[2]))
    bad("the program was written for groups of " + dims(want) + " threads");
  if (p.has_wmma && threads % kWarpSize != 0)
    bad("its WMMA runs over warps of " + std::to_string(kWarpSize) +
        " threads, so a group must hold a multiple of " + std::to_string(kWarpSize));
}

}  // namespace

void Processor::run(const Program& p, const pg_launch_args& args,
                    const std::vector<GlobalBuffer>& buffers) {
  check_geometry(p, args);
  BatchPlan plan(p, args.global_size, args.local_size);
  if (plan.batches == 0) return;  // an empty grid
  plan.buffers = buffers.data();
  plan.scalars = args.scalars;
  // Float atomics on global memory add in batch order, on one worker: the sums are then the
  // same in every run.
  const uint32_t workers = p.float_atomics || plan.batches == 1 ? 1 : pool_.size();
  plan.atomic_global = workers > 1;
  plan.check_alignment = check_alignment_;

  std::lock_guard lock(mu_);
  std::atomic<uint64_t> next{0};
  std::atomic<bool> failed{false};
  std::mutex failure_mu;
  uint64_t failed_batch = ~uint64_t{0};
  pg_status status = PG_OK;
  std::string message;
  auto record = [&](uint64_t batch, pg_status s, const std::string& what) {
    std::lock_guard failure_lock(failure_mu);
    if (batch < failed_batch) {
      failed_batch = batch;
      status = s;
      message = what;
    }
    failed = true;
  };
  pool_.run(workers, [&](uint32_t w) {
    while (!failed.load(std::memory_order_relaxed)) {
      const uint64_t batch = next.fetch_add(1);
      if (batch >= plan.batches) return;
      try {
        workspaces_[w].run(p, plan, batch);
      } catch (const sdk::Error& e) {
        record(batch, e.status(), e.what());
      } catch (const std::bad_alloc&) {
        record(batch, PG_ERR_OUT_OF_MEMORY, "gpu_emu: out of memory running '" + p.name + "'");
      } catch (const std::exception& e) {
        record(batch, PG_ERR_INTERNAL, "gpu_emu: running '" + p.name + "': " + e.what());
      }
    }
  });
  if (failed) sdk::fail(status, message);
}

}  // namespace polygrad::gpu_emu
