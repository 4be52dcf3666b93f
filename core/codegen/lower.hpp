// Codegen: a kernel AST (the scheduler's kernel-level UOp graph) lowered to an SDK kernel
// program (pg_kernel_program) plus what the runtime needs to launch it.
//
// The input is SINK(STORE(INDEX(DEFINE_GLOBAL, offset), value), ...) over RANGE loop variables,
// REDUCEs, loads (plain or gated), DEFINE_VARs, constants and ALU ops (see the codegen brief in
// docs/ and linearize.hpp for the placement rules). lower() checks it, simplifies the index
// math, decomposes transcendentals when the target asks for it, register-tiles reduce kernels
// (optimize.hpp), splits reductions into vector lanes, places every node in the innermost loop
// scope it depends on and emits the program.
#ifndef POLYGRAD_CODEGEN_LOWER_HPP
#define POLYGRAD_CODEGEN_LOWER_HPP

#include <polygrad/plugin.h>

#include <array>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "codegen/cpu_tuning.hpp"
#include "ir/uop.hpp"

namespace polygrad::codegen {

/// Outputs from this size up are written with streaming stores (PG_STORE_STREAM; the threshold
/// is the CPU strategy's, cpu_tuning.hpp). The hint needs a constant size; the scheduler
/// therefore compiles flat kernels this large for their length instead of for a launch
/// variable.
using cpu_tuning::kStreamBytes;

/// What codegen may assume about the target (from the device's properties).
struct Target {
  pg_capabilities caps{};
  /// The kernel ISA the device takes (min of the host's and the plugin's): codegen emits no
  /// op of a later ISA.
  uint32_t isa_version = PG_KERNEL_ISA_VERSION;
  std::string device;  ///< the device's name ("cpu:0"), for messages; may be empty
};

/// A lowered kernel: an SDK kernel program plus what the runtime needs to launch it.
struct LoweredKernel {
  /// C identifier: "E_" (no REDUCE) or "r_", then the static output extents joined by "_"
  /// (a symbolic extent as its variable's name), e.g. "r_64_32".
  std::string name;
  std::vector<pg_instruction> instructions;
  std::vector<uint32_t> operands;
  uint32_t isa_version = PG_KERNEL_ISA_VERSION;  ///< the target's ISA, stamped on the program
  uint32_t buffer_count = 0;  ///< number of DEFINE_GLOBAL slots used (max slot + 1)
  std::vector<Var> vars;      ///< PARAM_SCALAR slot i holds vars[i]'s value (sorted by name)
  /// Groups per launch dim: int64 expressions over DEFINE_VARs (CONST 1 when a dim is unused).
  std::array<UOpRef, 3> global_size;
  /// Threads per group: {1, 1, 1} on targets without groups; the group strategy's choice on
  /// PG_CAP_GROUPS targets (global_size then counts groups, as pg_launch_args does).
  std::array<uint32_t, 3> local_size{1, 1, 1};

  /// A view of the program for Device::render (valid while this object lives unchanged).
  pg_kernel_program program() const;
  /// global_size evaluated for the given variable values (name -> value). Throws IrError on a
  /// missing variable or a size outside 0 .. 2^32-1.
  std::array<uint32_t, 3> launch_global(const std::unordered_map<std::string, int64_t>& vals) const;
};

/// Lower the kernel AST rooted at `sink` for `target`. Deterministic: the same AST and target
/// give byte-identical instructions. Throws IrError naming the op on malformed input, and a
/// user Error naming the device, the kernel and the dtype when the target does not support a
/// dtype the kernel's program uses (check_target_dtypes).
LoweredKernel lower(const UOpRef& sink, const Target& target);

}  // namespace polygrad::codegen

#endif  // POLYGRAD_CODEGEN_LOWER_HPP
