// 32-bit index math for targets that ask for it (caps.index_bits = 32: a GPU's int64 math takes
// two or more instructions per operation).
//
// The index math of a kernel is every int64 expression built from constants, loop variables,
// launch indices and launch variables (no loaded value, no cast of another type): offsets,
// loop ends, gates. When the bounds of all of it fit in int32, narrow_indices() rewrites it in
// int32: a launch variable is cast once; a use that needs the int64 value (an int64 output
// computed from an index, arange's) casts back. When they do not fit, the kernel keeps int64
// indices, or, on a target without int64, is a user error naming the device and the bound.
#ifndef POLYGRAD_CODEGEN_GROUP_NARROW_HPP
#define POLYGRAD_CODEGEN_GROUP_NARROW_HPP

#include "codegen/strategy.hpp"

namespace polygrad::codegen {

/// `sink` and the stores of `stages` with their index math in int32 where it fits (see the
/// file comment); `stages` is rewritten in place.
UOpRef narrow_indices(const UOpRef& sink, std::vector<Stage>& stages, const Target& target);

}  // namespace polygrad::codegen

#endif  // POLYGRAD_CODEGEN_GROUP_NARROW_HPP
