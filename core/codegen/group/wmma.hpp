// The group strategy's tensor-core form: the tile form (tiles.hpp) with each warp's products
// done by WMMA on a tensor-core shape the target lists.
//
// Taken when the kernel is a sum of products whose operands have the shape's A and B dtypes
// (a float16 or bfloat16 product, X * Y in half precision cast to float, or the casts of half
// operands multiplied in float) accumulated in its C dtype. A group of warps_m x warps_n warps
// (a group_tuning::WmmaShape, the first of wmma_shapes() that the product holds) computes an
// output tile of warps_m * frag_m * m rows and warps_n * frag_n * n columns: per slice of
// k_steps times the shape's k, the threads stage both operands' tiles in local memory (in
// their own dtype, each row padded by 8 elements so that a fragment's lanes fall in different
// banks), then each warp multiplies its frag_m x frag_n tensor-core tiles per step of k,
// reading its fragments from the staged tiles at the elements the shape's maps give each lane
// (pg_tensor_core). A map is used when each element's row and column are sums of one amount
// per set bit of the lane (true of every layout vendors publish); otherwise the shape is
// passed over.
#ifndef POLYGRAD_CODEGEN_GROUP_WMMA_HPP
#define POLYGRAD_CODEGEN_GROUP_WMMA_HPP

#include <optional>

#include "codegen/group/tuning.hpp"
#include "codegen/strategy.hpp"

namespace polygrad::codegen {

/// The tensor-core plan of `sink` for `target`, or nullopt (no matching shape, ISA 1, too few
/// lanes, threads or local memory, or not a tile-shaped product).
std::optional<Planned> plan_wmma(const UOpRef& sink, const Target& target);
/// The same with `shapes` tried in order in place of group_tuning::wmma_shapes().
std::optional<Planned> plan_wmma(const UOpRef& sink, const Target& target,
                                 const std::vector<group_tuning::WmmaShape>& shapes);

}  // namespace polygrad::codegen

#endif  // POLYGRAD_CODEGEN_GROUP_WMMA_HPP
