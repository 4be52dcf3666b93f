// Checks of the codegen: a kernel AST must have the shape the scheduler promises, and every
// dtype its program uses must be one the target supports.
#ifndef POLYGRAD_CODEGEN_CHECK_HPP
#define POLYGRAD_CODEGEN_CHECK_HPP

#include "codegen/lower.hpp"

namespace polygrad::codegen {

/// Throws IrError naming the op when `sink` is not a well-formed kernel AST: a SINK of STOREs
/// into INDEX(DEFINE_GLOBAL, int offset), kernel ops only, scalar values, matching dtypes,
/// int RANGE ends, REDUCEs of ADD/MAX/MUL over RANGEs, one RANGE node per loop id, no RANGE
/// both reduced and used as an output loop.
void check_kernel_ast(const UOpRef& sink);

/// Throws a user polygrad::Error (status PG_ERR_UNSUPPORTED, a device error at the C API)
/// "device <target.device> lacks <dtype>, needed by kernel <kernel> ..." when an instruction of
/// the kernel program has a dtype (or points to one) that `target` does not declare in
/// caps.dtype_mask. Called before the program reaches the plugin.
void check_target_dtypes(const std::vector<pg_instruction>& program, const Target& target,
                         const std::string& kernel);

}  // namespace polygrad::codegen

#endif  // POLYGRAD_CODEGEN_CHECK_HPP
