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
/// 1 - stride / 64 bytes for a shorter stride than a cache line. The innermost range moves only
/// when another scores more by at least one access (a convolution's input gradient gathers
/// nine column-gradient elements nine floats apart along the channels, a row of 576 apart along
/// x: channels innermost). Unchanged otherwise.
UOpRef order_loops(const UOpRef& sink);

}  // namespace polygrad::codegen

#endif  // POLYGRAD_CODEGEN_LOOP_ORDER_HPP
