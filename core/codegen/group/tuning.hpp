// The group strategy's tuning thresholds, one place, each with its reason.
#ifndef POLYGRAD_CODEGEN_GROUP_TUNING_HPP
#define POLYGRAD_CODEGEN_GROUP_TUNING_HPP

#include <cstdint>

namespace polygrad::codegen::group_tuning {

/// Threads per group for flat kernels: enough warps to hide memory latency on one SM, few
/// enough that a small kernel still spreads over many SMs.
inline constexpr int64_t kFlatThreads = 256;
/// Most threads sharing one row's reduce: past this the tree's barriers cost more than the
/// extra threads add.
inline constexpr int64_t kRowThreads = 256;
/// Reduces shorter than this run inside one thread (flat form): a group per row would leave
/// most of its threads idle.
inline constexpr int64_t kRowMinExtent = 128;

}  // namespace polygrad::codegen::group_tuning

#endif  // POLYGRAD_CODEGEN_GROUP_TUNING_HPP
