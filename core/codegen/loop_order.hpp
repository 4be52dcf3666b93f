// The order of an elementwise kernel's loops.
#ifndef POLYGRAD_CODEGEN_LOOP_ORDER_HPP
#define POLYGRAD_CODEGEN_LOOP_ORDER_HPP

#include "ir/uop.hpp"

namespace polygrad::codegen {

/// A kernel's loops nest in the order of its output ranges' ids, the outermost (the launch)
/// first, as the scheduler built them from the output's axes. For an elementwise kernel (no
/// REDUCE) of three output ranges or more, `sink` with its ranges renumbered so that the
/// innermost loop is the range other than the outermost along which its loads and stores are
/// most contiguous: each access scores 1 for a stride of one element along the range and
/// 1 - stride / 64 bytes for a shorter stride than a cache line, times the number of elements
/// it walks over the largest access's (small operands, per-channel parameters, count little). The
/// innermost range moves only when another scores more by at least one access (a convolution's
/// input gradient gathers nine column-gradient elements nine floats apart along the channels, a row
/// of 576 apart along x: channels innermost). Unchanged otherwise.
UOpRef order_loops(const UOpRef& sink);

/// A transpose: an elementwise kernel whose stores are contiguous along its innermost range b
/// and one of whose loads is contiguous along another range a while striding a cache line or
/// more along b. Each element of a row of the output comes from another line of the input, and
/// with a and b both longer than a tile (16), a line is gone from L1 before the next row comes
/// back for its next element. `sink` with a and b split into tiles of 16 (8 for an extent 8
/// divides and 16 does not), a -> a0 * 16 + a1, b -> b0 * 16 + b1, looping a0 > b0 > a1 > b1,
/// so the lines a tile reads are used whole; a last partial tile has its index clamped and its
/// stores gated. Unchanged otherwise. On a Sapphire Rapids host, 2 threads: a 4096 x 4096
/// transpose 117-121 -> 20-33 ms (torch 39), (64, 128, 256) 1.6-1.9 -> 0.67 ms.
UOpRef tile_transposes(const UOpRef& sink);

}  // namespace polygrad::codegen

#endif  // POLYGRAD_CODEGEN_LOOP_ORDER_HPP
