// What a handler sees while it runs: a batch of threads (whole groups) executing one program
// in lockstep, their register file, the set of threads active at each nesting depth, and the
// memory they address.
#ifndef POLYGRAD_GPU_EMU_BATCH_HPP
#define POLYGRAD_GPU_EMU_BATCH_HPP

#include <cstdint>
#include <string>

#include "numeric.hpp"
#include "program.hpp"
#include "race.hpp"

namespace polygrad::gpu_emu {

/// The threads of a batch an instruction runs for: the first n (full) or the n listed.
struct Active {
  uint32_t n = 0;
  bool full = true;
  uint16_t* idx = nullptr;  ///< ascending thread indices when not full
};

/// Calls f(t) for every active thread t, in ascending order.
template <class F>
inline void for_each_thread(const Active& a, F&& f) {
  if (a.full) {
    for (uint32_t t = 0; t < a.n; ++t) f(t);
  } else {
    for (uint32_t k = 0; k < a.n; ++k) f(a.idx[k]);
  }
}

/// A buffer as a launch hands it to the program.
struct GlobalBuffer {
  unsigned char* data = nullptr;
  uint64_t bytes = 0;
};

/// One batch of whole groups. Thread t of the batch is flat local id thread_of[t] of group
/// group_of[t] (counted from the batch's first group); flat local ids run x fastest.
struct Batch {
  const Program* program = nullptr;
  uint32_t width = 0;  ///< threads in the batch: the length of a register row
  Slot* regs = nullptr;
  Active* levels = nullptr;  ///< levels[d]: the threads active at nesting depth d
  const GlobalBuffer* buffers = nullptr;
  const int64_t* scalars = nullptr;
  uint32_t local_size[3] = {1, 1, 1};
  uint32_t global_size[3] = {1, 1, 1};
  uint32_t group_threads = 1;
  uint64_t first_group = 0;  ///< linear index (x fastest) of the batch's group 0
  const uint16_t* group_of = nullptr;
  const uint16_t* thread_of = nullptr;
  const uint16_t* local_id[3] = {};  ///< per thread: its local index in x, y, z
  const uint32_t* group_id[3] = {};  ///< per group of the batch: its index in x, y, z
  unsigned char* local = nullptr;    ///< group g's local memory at local + g * local_stride
  uint64_t local_stride = 0;
  unsigned char* reg_arrays = nullptr;  ///< thread t's arrays at reg_arrays + t * reg_stride
  uint64_t reg_stride = 0;
  ShadowCell* shadow = nullptr;      ///< group g's at shadow + g * program->local_elements
  const uint32_t* epochs = nullptr;  ///< per group: its current barrier interval
  bool atomic_global = false;        ///< other workers run at once: global ATOMIC_ADD is atomic
  bool check_alignment = true;       ///< a misaligned vector access is a fault

  Slot* row(uint32_t r) const { return regs + static_cast<size_t>(r) * width; }
  const Active& active(const Instr& in) const { return levels[in.depth]; }

  /// "group (1,0,0) thread 5" for batch thread t.
  std::string thread_name(uint32_t t) const;
  /// "group (1,0,0)" for group g of the batch.
  std::string group_name(uint32_t g) const;
  /// Throws sdk::Error(PG_ERR_LAUNCH): "gpu_emu: kernel 'k' instruction 12 (LOAD float32):
  /// <what>".
  [[noreturn]] void fault(const Instr& in, const std::string& what) const;
};

}  // namespace polygrad::gpu_emu

#endif  // POLYGRAD_GPU_EMU_BATCH_HPP
