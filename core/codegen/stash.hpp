// Stashing a reduction's values in the output: softmax's exponentials computed once.
#ifndef POLYGRAD_CODEGEN_STASH_HPP
#define POLYGRAD_CODEGEN_STASH_HPP

#include <vector>

#include "ir/uop.hpp"

namespace polygrad::codegen {

/// Values stored by a loop of their own over the range of `reduce`, which reads them back:
/// `value` at `index` (an INDEX into the kernel's output), both over that range.
struct Stash {
  const UOp* reduce = nullptr;
  UOpRef index;
  UOpRef value;
};

/// A kernel rewritten to stash, and its stashes (none: `sink` unchanged).
struct Stashed {
  UOpRef sink;
  std::vector<Stash> stashes;
};

/// A softmax's row kernel computes e(k) = exp(x[k] - max) twice per element: in its sum over k
/// and again for each output column j, out[j] = e(j) / sum. When a store's value recomputes a
/// costly reduced value e over its output range j (the same expression with j for k, and j
/// the kernel's innermost range, with the same extent as k), a loop before the sum stores e(k)
/// at out[k], the sum adds out[k], and the store reads e(j) back from out[j] instead of
/// computing it: e once per element, not twice (softmax 64 x 50257 on the AVX2 host: its kernel
/// in a C driver 2.46 -> 2.17 ms, the op 3.06 -> 2.46 ms). Only where
/// that is safe: an ungated scalar store of e's dtype into a buffer the kernel does not read,
/// at an offset affine in j, inside the loops e depends on (so each row's values are written
/// by its own sum and read before the next row's sum).
Stashed stash_reduced_values(const UOpRef& sink);

}  // namespace polygrad::codegen

#endif  // POLYGRAD_CODEGEN_STASH_HPP
