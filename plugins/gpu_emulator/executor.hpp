// Runs a decoded program for one batch of whole groups.
//
// Why lockstep batches and not one interpreter per thread: the kernel program's control flow
// is structured (RANGE/END_RANGE and IF/END_IF nest like braces, and nothing leaves a block
// early), so a group's threads can run as a GPU's do, each instruction for every active thread
// before the next instruction, with one set of active threads per nesting depth. That keeps
// GPU semantics exact where they are defined:
//  - a BARRIER is reached by every thread of a group at once or by some of them; the latter is
//    a divergent barrier (undefined on a GPU), reported as an error naming a thread that
//    reached it and one that did not;
//  - local memory goes through the race detector (race.hpp), which tracks accesses per barrier
//    interval, so a kernel that lacks a barrier is reported whatever order the emulator runs
//    its threads in;
//  - WMMA runs when all 32 threads of a warp reach it together, as mma.sync needs.
// And it is fast: one indirect call per instruction covers a whole batch (groups of the
// host's one-thread kernels are batched 128 at a time), with no per-thread program counter,
// stack or context switch, and results do not depend on how host threads are scheduled.
#ifndef POLYGRAD_GPU_EMU_EXECUTOR_HPP
#define POLYGRAD_GPU_EMU_EXECUTOR_HPP

#include <cstdint>
#include <vector>

#include "batch.hpp"
#include "program.hpp"
#include "race.hpp"

namespace polygrad::gpu_emu {

/// How a launch's groups are cut into batches, and what a launch hands every batch.
struct BatchPlan {
  uint32_t local_size[3] = {1, 1, 1};
  uint32_t global_size[3] = {1, 1, 1};
  uint32_t group_threads = 1;
  uint32_t groups_per_batch = 1;
  uint64_t groups = 0;
  uint64_t batches = 0;
  std::vector<uint16_t> group_of, thread_of;  ///< of a full batch's threads
  std::vector<uint16_t> local_id[3];          ///< of a full batch's threads
  const GlobalBuffer* buffers = nullptr;
  const int64_t* scalars = nullptr;
  bool atomic_global = false;
  bool check_alignment = true;

  /// Plans a launch of `program` with these sizes (already checked against the device).
  BatchPlan(const Program& program, const uint32_t global[3], const uint32_t local[3]);
};

/// One worker's memory, reused by every batch and launch it runs.
class Workspace {
 public:
  /// Runs batch `index` of `plan`. Throws sdk::Error(PG_ERR_LAUNCH) on a fault.
  void run(const Program& program, const BatchPlan& plan, uint64_t index);

 private:
  void reserve(const Program& program, const BatchPlan& plan);
  uint32_t next_epoch();
  void execute(const Program& program, Batch& b);
  bool enter(const Instr& in, Batch& b, bool range);
  bool next_iteration(const Instr& in, Batch& b);
  void barrier(const Instr& in, Batch& b);

  std::vector<Slot> regs_;
  std::vector<Active> levels_;
  std::vector<uint16_t> level_idx_;
  std::vector<unsigned char> local_, reg_arrays_;
  std::vector<ShadowCell> shadow_;
  std::vector<uint32_t> epochs_;
  std::vector<uint32_t> counts_;
  std::vector<uint32_t> group_id_[3];
  uint32_t epoch_ = 0;
};

/// WMMA for every warp of the batch (wmma.cpp).
void run_wmma(const Instr& in, Batch& b, std::vector<uint32_t>& counts);

}  // namespace polygrad::gpu_emu

#endif  // POLYGRAD_GPU_EMU_EXECUTOR_HPP
