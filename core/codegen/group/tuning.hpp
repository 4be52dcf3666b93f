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

/// Tiles (tiles.hpp): a group computes a kTileM x kTileN block of the output from kTileK-deep
/// slices of both operands staged in local memory (2 * 64 * 16 floats: 8 KiB, so several groups
/// fit one SM's local memory), each of its (kTileM / kRegM) * (kTileN / kRegN) = 256 threads a
/// kRegM x kRegN block in registers (16 accumulators: each staged value is read once per 4 uses).
inline constexpr int64_t kTileM = 64;
inline constexpr int64_t kTileN = 64;
inline constexpr int64_t kTileK = 16;
inline constexpr int64_t kRegM = 4;
inline constexpr int64_t kRegN = 4;
// (A product smaller than a tile along m or n, or shallower than kTileK, is not tiled: most of
// the staged tile would be padding. plan_tiles() checks the extents against the tile itself.)

}  // namespace polygrad::codegen::group_tuning

#endif  // POLYGRAD_CODEGEN_GROUP_TUNING_HPP
