// Sizes a kernel takes at launch instead of compiling them in: the reduce ranges that walk the
// batch, and the counts derived from a size (a mean's n).
#ifndef POLYGRAD_SCHEDULE_SYMBOLIC_SIZES_HPP
#define POLYGRAD_SCHEDULE_SYMBOLIC_SIZES_HPP

#include "ir/uop.hpp"

#include <string>
#include <utility>
#include <vector>

namespace polygrad::schedule {

/// A kernel's launch variables and their values for this launch.
using VarValues = std::vector<std::pair<std::string, int64_t>>;

/// Every reduce RANGE of `ast` whose extent n is the outermost axis of each buffer it walks
/// (every INDEX it moves is affine in it with a coefficient c, c * n being the buffer's element
/// count: the batch of a weight gradient, of a bias gradient, of a mean loss) runs to a
/// variable of its own instead, appended to `vars` with the value n (never one already there
/// because its value is n: that value may be another extent's only at this batch size).
/// The codegen still splits such a reduce into vector lanes (with a scalar tail); it only
/// gives up the k slices of a matmul (see optimize.hpp). `buffers` are the kernel's slots.
/// Returns the first such n (the batch a weight gradient reduces over), or 0 when none.
int64_t symbolic_reduces(UOpRef& ast, const std::vector<UOpRef>& buffers, VarValues& vars);

/// The largest extent, up to INT32_MAX, that RANGE `r` of `ast` may run to as a variable
/// with every buffer offset of `ast` within half the int32 range (so a GPU kernel over it keeps
/// 32-bit index math, counts and tile ends included, and the group count of a tiled product
/// stays within a launch), at least `at_least`. Offsets already past that range at `at_least`
/// (one adding a value read from the data, a gather's; any of a tensor past 2^30 elements)
/// are left out: such a kernel keeps 64-bit index math (codegen's narrow_indices checks).
int64_t int32_extent_limit(const UOpRef& ast, const UOp* r, int64_t at_least);
/// The same for a DEFINE_VAR `var` of `ast` (declared from at_least or less to INT32_MAX).
int64_t int32_var_limit(const UOpRef& ast, const UOp* var, int64_t at_least);

/// Whether symbolic_reduces would make some reduce range of `ast` a variable.
bool reduces_over_batch(const UOpRef& ast, const std::vector<UOpRef>& buffers);

/// Each integer constant n*q cast to a float in `ast` (the count Tensor::mean divides by), for
/// the value n of a variable in `vars` and q 1 or a constant extent of the kernel (a mean over
/// the batch, over (batch, outputs)), becomes the variable (times q) cast to that float, so
/// kernels of different batch sizes are one. Only such casts: a float constant (0.5, a learning
/// rate) is never read as a size, nor a count that divides a sum over constant ranges and is
/// their size (a layernorm's mean over its features when the batch has the same value).
void symbolic_counts(UOpRef& ast, const VarValues& vars);

}  // namespace polygrad::schedule

#endif  // POLYGRAD_SCHEDULE_SYMBOLIC_SIZES_HPP
