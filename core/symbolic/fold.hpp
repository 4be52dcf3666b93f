// Constant folding: evaluate one ALU op on constant sources with the target's semantics (int
// wrap-around, C truncating IDIV and MOD, float results rounded to their dtype).
#ifndef POLYGRAD_SYMBOLIC_FOLD_HPP
#define POLYGRAD_SYMBOLIC_FOLD_HPP

#include "ir/uop.hpp"

namespace polygrad {

/// The CONST that `op` (result dtype `t`) gives on the CONST sources `srcs`, or null when the
/// result is undefined (division by zero, shift past the width) or the sources are not scalar
/// constants.
UOpRef fold_alu(Op op, DType t, std::span<const UOpRef> srcs);

}  // namespace polygrad

#endif  // POLYGRAD_SYMBOLIC_FOLD_HPP
