// Input checks of the codegen: a kernel AST must have the shape the scheduler promises, and
// every dtype it uses must be one the target supports.
#ifndef POLYGRAD_CODEGEN_CHECK_HPP
#define POLYGRAD_CODEGEN_CHECK_HPP

#include "codegen/lower.hpp"

namespace polygrad::codegen {

/// Throws IrError naming the op when `sink` is not a well-formed kernel AST: a SINK of STOREs
/// into INDEX(DEFINE_GLOBAL, int offset), kernel ops only, scalar values, matching dtypes,
/// int RANGE ends, REDUCEs of ADD/MAX/MUL over RANGEs, one RANGE node per loop id, no RANGE
/// both reduced and used as an output loop.
void check_kernel_ast(const UOpRef& sink);

/// Throws IrError naming the dtype and the op when a node of `sink` has a dtype (or points to
/// one) that `target` does not declare in caps.dtype_mask.
void check_target_dtypes(const UOpRef& sink, const Target& target);

}  // namespace polygrad::codegen

#endif  // POLYGRAD_CODEGEN_CHECK_HPP
