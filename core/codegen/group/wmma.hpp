// The group strategy's tensor-core form: the tile form (tiles.hpp) with each warp's products
// done by WMMA on a tensor-core shape the target lists.
//
// Taken when the kernel is a sum of products whose operands have the shape's A and B dtypes
// (a float16 or bfloat16 product, X * Y in half precision cast to float, or the casts of half
// operands multiplied in float) accumulated in its C dtype. A group of 4 warps computes a
// 64 x 64 output tile: per slice of the shape's k, the threads stage both operands' tiles in
// local memory (in their own dtype), then each warp multiplies its 32 x 32 quarter as 2 x 4
// tensor-core tiles of m x n (m16n8 shapes), reading its fragments from the staged tiles at
// the elements the shape's maps give each lane (pg_tensor_core). A map is used when each
// element's row and column are sums of one amount per set bit of the lane (true of every
// layout vendors publish); otherwise the shape is passed over.
#ifndef POLYGRAD_CODEGEN_GROUP_WMMA_HPP
#define POLYGRAD_CODEGEN_GROUP_WMMA_HPP

#include <optional>

#include "codegen/strategy.hpp"

namespace polygrad::codegen {

/// The tensor-core plan of `sink` for `target`, or nullopt (no matching shape, ISA 1, too few
/// lanes, threads or local memory, or not a tile-shaped product).
std::optional<Planned> plan_wmma(const UOpRef& sink, const Target& target);

}  // namespace polygrad::codegen

#endif  // POLYGRAD_CODEGEN_GROUP_WMMA_HPP
