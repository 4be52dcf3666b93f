// The emulated processor: checks a launch against the device, cuts its groups into batches
// and runs them on a pool of host threads, one workspace each.
#ifndef POLYGRAD_GPU_EMU_PROCESSOR_HPP
#define POLYGRAD_GPU_EMU_PROCESSOR_HPP

#include <polygrad/plugin.h>

#include <memory>
#include <mutex>
#include <vector>

#include "batch.hpp"
#include "executor.hpp"
#include "program.hpp"
#include "worker_pool.hpp"

namespace polygrad::gpu_emu {

class Processor {
 public:
  /// `workers` host threads run a launch's batches; `check_alignment`: a misaligned vector
  /// access is a fault (PG_CAP_ALIGNED_VECTORS).
  Processor(uint32_t workers, bool check_alignment)
      : pool_(workers), workspaces_(workers), check_alignment_(check_alignment) {}

  uint32_t workers() const { return pool_.size(); }

  /// Runs every group of a launch of `program` over `buffers` (one per buffer slot) and
  /// returns when all have finished. Launches are serialised. Throws sdk::Error: PG_ERR_LAUNCH
  /// for a launch the device cannot take (group limits, a local size other than the one the
  /// program was written for, WMMA in groups that are not whole warps) and for a fault of a
  /// thread (the first batch's that failed, so the message is the same from run to run).
  void run(const Program& program, const pg_launch_args& args,
           const std::vector<GlobalBuffer>& buffers);

 private:
  std::mutex mu_;
  WorkerPool pool_;
  std::vector<Workspace> workspaces_;
  bool check_alignment_;
};

}  // namespace polygrad::gpu_emu

#endif  // POLYGRAD_GPU_EMU_PROCESSOR_HPP
