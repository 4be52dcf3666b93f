// The template plugin's compiled form of a kernel program, and the three steps over it:
// serialise (the renderer's artifact), deserialise (the loader), execute (the launch).
#ifndef POLYGRAD_TEMPLATE_PROGRAM_HPP
#define POLYGRAD_TEMPLATE_PROGRAM_HPP

#include <polygrad/plugin.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace template_plugin {

/// Widest vector the interpreter runs (declared as max_vector_lanes).
constexpr uint32_t kMaxLanes = 8;

/// The interpreter's one tensor-core shape (caps.tensor_cores[0]): D (2x2) = A (2x2) * B (2x2)
/// + C, float32 throughout, one thread holding whole fragments in the canonical order (lane l
/// of A is element l of the row-major matrix). Small enough for kMaxLanes; a real device lists
/// its hardware's shapes, threads and element maps instead.
constexpr pg_tensor_core kTensorCore = {
    2, 2, 2,       1,       PG_DTYPE_FLOAT32, PG_DTYPE_FLOAT32, PG_DTYPE_FLOAT32,
    0, 0, nullptr, nullptr, nullptr};

/// A validated, self-contained copy of a kernel program.
struct Program {
  std::string name;
  std::vector<pg_instruction> instructions;
  std::vector<uint32_t> operands;
  uint32_t buffer_count = 0;
  uint32_t scalar_count = 0;
  std::vector<uint32_t> block_end;  ///< for RANGE and IF: the index of the matching END
  bool has_barrier = false;

  const uint32_t* sources(const pg_instruction& in) const { return &operands[in.src_start]; }
};

/// Checks that the interpreter can run `p` (already passed sdk::check_program) and builds
/// the Program. Throws sdk::Error: PG_ERR_UNSUPPORTED naming the op and dtype it cannot run,
/// PG_ERR_INVALID_ARGUMENT for malformed structure (unbalanced blocks, non-pointer loads).
Program prepare(const pg_kernel_program& p);

/// The renderer's artifact (PG_ARTIFACT_OTHER): the program's fields, byte for byte.
std::string serialise(const pg_kernel_program& p);

/// The loader: parses an artifact from serialise. Throws sdk::Error(PG_ERR_COMPILE) on bytes
/// that are not one, or whose program fails validation.
Program deserialise(const void* data, uint64_t size, const char* entry);

/// Device memory as the interpreter sees it.
struct Memory {
  unsigned char* data = nullptr;
  uint64_t size = 0;
};

/// Runs `program` over the launch grid. Out-of-bounds accesses and integer division by zero
/// throw sdk::Error(PG_ERR_LAUNCH) naming the instruction.
void execute(const Program& program, const std::vector<Memory>& buffers,
             const pg_launch_args& args);

}  // namespace template_plugin

#endif  // POLYGRAD_TEMPLATE_PROGRAM_HPP
