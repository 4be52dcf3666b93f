// The group strategy's tile form: a matmul-shaped reduce with both operands staged in local
// memory.
//
// The kernel's one REDUCE is a sum of products X * Y in which X depends on the output ranges I
// (and reduce ranges K) and Y on the output ranges J (and K), besides ranges B both depend on
// (a batch), and I, J, B are every output range: a matmul (I = rows, J = columns), a batched
// one, a convolution (I = batch and pixels, J = output channels, K = input channels and the
// window). With M, N, K the products of I's, J's and K's extents, each group computes an
// m x n block of one batch's M x N output (a group_tuning::TileShape, the first of
// tile_shapes() that the extents hold); per k-deep slice of K its threads copy the slice's X
// tile (m x k) and Y tile (k x n) into local memory (a Stage: values past M, N or K are stored
// as 0), wait, and each thread adds reg_m x reg_n products per k step from the tiles into its
// accumulators (register blocking), then waits again before the next slice overwrites the
// tiles. The epilogue (bias, activation) runs on each of the thread's outputs; stores past M
// or N are gated.
#ifndef POLYGRAD_CODEGEN_GROUP_TILES_HPP
#define POLYGRAD_CODEGEN_GROUP_TILES_HPP

#include <cstdint>
#include <optional>
#include <unordered_map>
#include <vector>

#include "codegen/group/tuning.hpp"
#include "codegen/strategy.hpp"

namespace polygrad::codegen {

/// A kernel whose one REDUCE is a float sum of products X * Y (or of a half product cast to
/// float), split as the file comment says. Extents may be symbolic (a batch of rows).
struct Product {
  const UOp* reduce = nullptr;
  UOpRef x, y;                             ///< the product's operands
  std::vector<const UOp*> is, js, ks, bs;  ///< X's, Y's, the reduce's and the shared ranges
  UOpRef m, n, k, batch;                   ///< the products of their extents (expressions)
  std::vector<UOpRef> out_ends;            ///< every output extent, outermost first
  int64_t next_id = 0;                     ///< a RANGE id no range of the kernel uses
};
std::optional<Product> product_shape(const UOpRef& sink);

/// An extent cut in tiles: how many, and a position's gate and clamp (none when the tiles
/// divide a constant extent).
struct Tiled {
  Tiled(UOpRef e, int64_t t);
  UOpRef extent;
  int64_t tile;
  bool exact;
  /// False for an extent known to be below `least` (a symbolic one may be large).
  bool at_least(int64_t least) const;
  UOpRef count() const;
  UOpRef inside(const UOpRef& at) const;  ///< null when always inside
  UOpRef clamp(const UOpRef& at) const;
};

/// One operand's tile, staged in a local array: `rows` x `cols` elements, X's as [position][k]
/// (k_rows false), Y's as [k][position].
struct StagedTile {
  UOpRef local;                        ///< the DEFINE_LOCAL
  UOpRef value;                        ///< the operand (X or Y)
  const std::vector<const UOp*>* own;  ///< its own output ranges (I or J)
  const Tiled* edge;                   ///< their extent
  UOpRef start;                        ///< the group's first position along them
  bool k_rows = false;
  int64_t rows = 0, cols = 0;
  int64_t stride = 0;  ///< elements from one row to the next in `local` (0: cols, unpadded)
};

/// The stores by which a group's `threads` threads (index `l`) copy slice `k0` of `tile`'s
/// operand: thread l stores elements e = c * threads + l, the operand at the element's position
/// and k (the batch ranges at `batch_at`), 0 past the operand's edge or k's end.
std::vector<UOpRef> stage_stores(const StagedTile& tile, const Product& p, const Tiled& k,
                                 const UOpRef& k0, const UOpRef& l, int64_t threads,
                                 const std::unordered_map<const UOp*, UOpRef>& batch_at);

/// The launch of a tile plan: a group per batch and tile of m and n, g = (b * tiles_m + tm) *
/// tiles_n + tn, each of `threads` threads (index `l`).
struct TileLaunch {
  Planned plan;  ///< grouped, its out_ends, groups and local size set
  UOpRef l, tm, tn;
  std::unordered_map<const UOp*, UOpRef> batch_at;  ///< the batch ranges at b
};
/// nullopt when the groups may pass the target's launch limit along dim 0.
std::optional<TileLaunch> tile_launch(const Product& p, const Tiled& m, const Tiled& n,
                                      int64_t threads, const Target& target);

/// Appends to `stores` the kernel's stores (the sources of `sink`) of output (mi, ni) of
/// product `p`, the reduce's value there being `value` and the batch ranges at `batch_at`;
/// gated past M or N, positions clamped into them.
void store_output(const UOpRef& sink, const Product& p, const Tiled& m, const Tiled& n,
                  const UOpRef& mi, const UOpRef& ni, const UOpRef& value,
                  const std::unordered_map<const UOp*, UOpRef>& batch_at,
                  std::vector<UOpRef>& stores);

/// The tile plan of `sink` for `target`, or nullopt when the kernel is not matmul-shaped, its
/// extents are not constant, it is smaller than a tile, or the target lacks the threads or
/// local memory a tile needs.
std::optional<Planned> plan_tiles(const UOpRef& sink, const Target& target);
/// The same with `shapes` tried in order in place of group_tuning::tile_shapes().
std::optional<Planned> plan_tiles(const UOpRef& sink, const Target& target,
                                  const std::vector<group_tuning::TileShape>& shapes);

}  // namespace polygrad::codegen

#endif  // POLYGRAD_CODEGEN_GROUP_TILES_HPP
