// The group strategy's tuning thresholds, one place, each with its reason.
#ifndef POLYGRAD_CODEGEN_GROUP_TUNING_HPP
#define POLYGRAD_CODEGEN_GROUP_TUNING_HPP

#include <cstdint>
#include <string>
#include <vector>

namespace polygrad::codegen::group_tuning {

/// Threads per group for flat kernels: enough warps to hide memory latency on one SM, few
/// enough that a small kernel still spreads over many SMs.
inline constexpr int64_t kFlatThreads = 256;
/// Most threads sharing one row's reduce: past this the tree's barriers cost more than the
/// extra threads add. row_threads() is this, or POLYGRAD_GPU_ROW_THREADS (a tuning aid, as
/// the shapes' variables below).
inline constexpr int64_t kRowThreads = 256;
int64_t row_threads();
/// Reduces shorter than this run inside one thread (flat form): a group per row would leave
/// most of its threads idle.
inline constexpr int64_t kRowMinExtent = 128;

/// A shape of the tile form (tiles.hpp): a group computes an m x n block of the output from
/// k-deep slices of both operands staged in local memory, each of its (m / reg_m) * (n / reg_n)
/// threads a reg_m x reg_n block in registers (each staged value read once per reg_m or reg_n
/// uses).
struct TileShape {
  int64_t m, n, k, reg_m, reg_n;
  int64_t threads() const { return (m / reg_m) * (n / reg_n); }
};
/// Tried in order; the first that the product's extents hold is taken. 64 x 64 with 4 x 4 a
/// thread (8 KiB of tiles; 0.46x cuBLAS at 4096 on an H200, bound by its 8 local loads per 16
/// multiply-adds). Larger shapes (128 x 128 with 8 x 8: 16 loads per 64) are candidates that
/// bench/gpu_shapes.sh times through POLYGRAD_GPU_TILE; none has run on a GPU yet.
inline constexpr TileShape kTileShapes[] = {{64, 64, 16, 4, 4}};

/// A shape of the tensor-core form (wmma.hpp): warps_m x warps_n warps, each frag_m x frag_n
/// tensor-core tiles, over k slices of k_steps times the shape's k staged at once.
struct WmmaShape {
  int64_t warps_m, warps_n, frag_m, frag_n, k_steps;
};
/// Tried in order, as kTileShapes. 64 x 64 from 4 warps of 2 x 4 m16n8 tiles over slices of
/// one step (23 TFLOP/s in bf16 at 4096 on an H200). Candidates for bench/gpu_shapes.sh
/// (POLYGRAD_GPU_WMMA), not yet timed on a GPU: 128 x 128 from 8 warps of 4 x 4 tiles over
/// slices of 2 steps (each staged fragment used 4 times, a barrier pair per 32 of k).
inline constexpr WmmaShape kWmmaShapes[] = {{2, 2, 2, 4, 1}};

/// The shapes to try, kTileShapes' or kWmmaShapes', with the one that POLYGRAD_GPU_TILE
/// ("m,n,k,reg_m,reg_n") or POLYGRAD_GPU_WMMA ("warps_m,warps_n,frag_m,frag_n,k_steps") names
/// first: a tuning aid, read once per process (docs/config.md). A malformed value is an error
/// naming the variable.
const std::vector<TileShape>& tile_shapes();
const std::vector<WmmaShape>& wmma_shapes();
/// The three variables' values as this process reads them ("" when none is set): part of the
/// lowered-program cache's key (runtime/lowered_cache.cpp).
const std::string& overrides();

}  // namespace polygrad::codegen::group_tuning

#endif  // POLYGRAD_CODEGEN_GROUP_TUNING_HPP
