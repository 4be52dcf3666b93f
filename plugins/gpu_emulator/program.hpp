// The emulator's decoded form of a kernel program: made once when a program is loaded, run by
// the executor for every batch of threads. Every value gets rows of the register file (one
// row per lane, one slot per thread of the batch), every instruction a handler chosen for its
// op and dtype, and every pointer the memory array it points into, so that running an
// instruction is one indirect call that loops over the batch's threads.
#ifndef POLYGRAD_GPU_EMU_PROGRAM_HPP
#define POLYGRAD_GPU_EMU_PROGRAM_HPP

#include <polygrad/plugin.h>

#include <cstdint>
#include <string>
#include <vector>

namespace polygrad::gpu_emu {

/// Widest vector the emulator runs (declared as max_vector_lanes): 16 bytes of float16.
constexpr uint32_t kMaxLanes = 8;

struct Batch;
struct Instr;
/// Runs one instruction for the active threads of a batch. Throws sdk::Error(PG_ERR_LAUNCH)
/// naming the kernel and instruction on a fault (out of bounds, division by zero, race).
using Handler = void (*)(const Instr&, Batch&);

/// What the executor does with an instruction: run its handler, or steer the threads.
enum class Flow : uint8_t { run, range, end_range, if_, end_if, barrier, wmma };

/// One decoded instruction.
struct Instr {
  Handler handler = nullptr;  ///< for Flow::run
  uint32_t dst = 0;           ///< first register row of the result
  uint32_t src[3] = {};       ///< first register row of each source
  uint8_t step[3] = {};       ///< lane step of each source: 1, or 0 for a scalar used in lanes
  uint8_t lanes = 1;          ///< lanes of the result (of the value, for STORE)
  uint8_t depth = 0;          ///< nesting depth: the active set the instruction runs under
  Flow flow = Flow::run;
  uint32_t jump = 0;    ///< RANGE, IF: the index after the block; END_RANGE: its RANGE's index
  uint32_t array = 0;   ///< memory ops: Program::arrays index; VECTORIZE: Program::lists start
  uint32_t origin = 0;  ///< the instruction's index in the kernel program
  int64_t imm = 0;      ///< CONST bits, GEP lane, PARAM_SCALAR slot, SPECIAL dim and kind,
                        ///< BITCAST source dtype, WMMA tensor-core index
};

/// A memory array a pointer points into.
struct Array {
  pg_addrspace space = PG_ADDR_GLOBAL;
  pg_dtype dtype = PG_DTYPE_VOID;
  int64_t count = 0;    ///< elements (LOCAL, REG); GLOBAL: from the buffer at launch
  uint64_t offset = 0;  ///< GLOBAL: the buffer slot; LOCAL: bytes into the group's block;
                        ///< REG: bytes into the thread's block
  uint32_t shadow = 0;  ///< LOCAL: its first element in the race detector's shadow
  uint32_t origin = 0;  ///< the defining instruction
};

/// A decoded program.
struct Program {
  std::string name;
  uint32_t buffer_count = 0;
  uint32_t scalar_count = 0;
  uint32_t local_size[3] = {1, 1, 1};  ///< the size it was written for; 0 = any
  std::vector<pg_instruction> source;  ///< the kernel program (error messages, the artifact)
  std::vector<Instr> prologue;         ///< values that depend on no source, set once per batch
  std::vector<Instr> code;             ///< the rest, in order
  std::vector<Array> arrays;
  std::vector<uint32_t> lists;  ///< VECTORIZE source rows
  uint32_t rows = 0;            ///< register rows
  uint32_t depth = 0;           ///< deepest nesting of RANGE and IF blocks
  uint64_t local_bytes = 0;     ///< one group's DEFINE_LOCAL arrays, 16-byte aligned each
  uint32_t local_elements = 0;  ///< their elements (the race detector's shadow)
  uint64_t reg_bytes = 0;       ///< one thread's DEFINE_REG arrays, 16-byte aligned each
  bool has_wmma = false;
  bool float_atomics = false;  ///< float ATOMIC_ADD on global memory: one worker, in order
  bool uses_special = false;

  /// "kernel 'k' instruction 12 (LOAD float32)" for kernel-program instruction `origin`.
  std::string where(uint32_t origin) const;
};

/// Decodes `p` (already passed sdk::check_program). Throws sdk::Error: PG_ERR_UNSUPPORTED
/// naming the op and dtype the emulator cannot run (more than kMaxLanes lanes, a tensor core
/// it does not have, more local memory than the device has), PG_ERR_INVALID_ARGUMENT for
/// malformed structure (unbalanced blocks, a load through a value that is not a pointer).
Program decode(const pg_kernel_program& p);

/// `p` as text, one instruction a line, indented by block (the `trace` option's log).
std::string listing(const pg_kernel_program& p);

}  // namespace polygrad::gpu_emu

#endif  // POLYGRAD_GPU_EMU_PROGRAM_HPP
