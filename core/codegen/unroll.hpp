// Unrolling the axis a concatenation selects its pieces along.
#ifndef POLYGRAD_CODEGEN_UNROLL_HPP
#define POLYGRAD_CODEGEN_UNROLL_HPP

#include "ir/uop.hpp"

namespace polygrad::codegen {

/// A concatenation (Tensor::cat, stack: a sum of pieces padded along one axis) indexes each
/// piece under a gate that compares the axis' range with constants, so every element computes
/// all pieces' gates and selects one (a 3 x 3 convolution's im2col: nine gated loads per
/// element, scalar). `sink` with each such output range (constant extent up to 64, not the
/// outermost, compared with a constant somewhere) unrolled: one store per value of the range,
/// its gates folded, when every copy then loads less than the store it came from. Unchanged
/// otherwise.
UOpRef unroll_selectors(const UOpRef& sink);

/// The gradient of chunks (an LSTM's four gates, attention's q, k and v split from one
/// projection) is their concatenation: every element of the (batch, 4 * hidden) result
/// computes all four pieces' gated values and selects one, gates on a range too long for
/// unroll_selectors (256 columns). `sink` with each such output range (constant extent, not
/// the outermost, compared with constants) split into segments between the places where a
/// comparison changes (their greatest common divisor with the extent, from 2, 2 to 64
/// segments): one store per segment over a range of the segment's length, its gates folded,
/// when every copy loads less than the store it came from. Unchanged otherwise.
UOpRef unroll_segments(const UOpRef& sink);

/// A strided convolution's input gradient reads each piece of its window at (y + k) // s under
/// a gate on (y + k) % s: per element, every piece's division, remainder and gate, though for
/// a given y % s only some pieces are ever valid (a stride-2 3 x 3 window: 2.25 of 9 on
/// average). `sink` with each output range r so read (constant extent that s divides, s up to
/// 4, not the outermost) as r' * s + p, one store per p with its gates folded, when every copy
/// loads less than the store it came from. Unchanged otherwise.
UOpRef unroll_strides(const UOpRef& sink);

/// `sink` with each REDUCE over ranges of constant extents whose product is at most 16 (a
/// 2 x 2 pool's window, a 10-class softmax's sum) written out as a chain of its op over the
/// values, in the loop's order: no loop, no accumulator.
UOpRef unroll_small_reduces(const UOpRef& sink);

}  // namespace polygrad::codegen

#endif  // POLYGRAD_CODEGEN_UNROLL_HPP
