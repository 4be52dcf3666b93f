// Sizes a kernel takes at launch instead of compiling them in: the reduce ranges that walk the
// batch, and the float constants derived from a size (a mean's 1/n).
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
/// variable instead, appended to `vars` with the value n, or to the variable already in `vars`
/// with that value (the launch variable n0 of a kernel whose output rows are the same batch).
/// The codegen still splits such a reduce into vector lanes (with a scalar tail); it only
/// gives up the k slices of a matmul (see optimize.hpp). `buffers` are the kernel's slots.
void symbolic_reduces(UOpRef& ast, const std::vector<UOpRef>& buffers, VarValues& vars);

/// Each float CONST of `ast` equal to ±1/(n*q), for the value n of a variable in `vars` and q
/// 1 or a constant extent of the kernel (as the kernel's dtype rounds it: a mean's scale, the
/// 1/batch of a mean loss's gradient, 1/(batch*outputs) of a mean squared error), becomes
/// that value computed from the variable, so kernels of different batch sizes are one.
/// Correct for any match, even a coincidence: the computed value equals the constant for this
/// binding. A coincidence (a learning rate of 0.1 at batch 10) costs only sharing: that kernel
/// serves the sizes whose constant matches the same way.
void symbolic_reciprocals(UOpRef& ast, const VarValues& vars);

}  // namespace polygrad::schedule

#endif  // POLYGRAD_SCHEDULE_SYMBOLIC_SIZES_HPP
