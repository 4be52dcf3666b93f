// Pieces the output-upcasting passes share (optimize.cpp, dot_form.cpp, panels.cpp): cache
// budgets and limits, vector widths, the vectoriser of one range, range splits and slice stores.
// Internal to the codegen; optimize.hpp describes the transformation.
#ifndef POLYGRAD_CODEGEN_UPCAST_PARTS_HPP
#define POLYGRAD_CODEGEN_UPCAST_PARTS_HPP

#include <cstdint>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "codegen/affine.hpp"
#include "codegen/cpu_tuning.hpp"
#include "codegen/optimize.hpp"
#include "codegen/rebuild.hpp"
#include "ir/graph.hpp"
#include "symbolic/simplify.hpp"

namespace polygrad::codegen::upcast {

/// The cache sizes the k tiling (see choose_upcast) is planned for: the target's declared L1
/// data cache and L2 per compute unit, or cpu_tuning's defaults where it declares none.
struct CacheBudget {
  explicit CacheBudget(const Target& target)
      : l1(target.caps.l1_cache_bytes > 0 ? static_cast<int64_t>(target.caps.l1_cache_bytes)
                                          : cpu_tuning::kDefaultL1Bytes),
        l2(target.caps.l2_cache_bytes > 0 ? static_cast<int64_t>(target.caps.l2_cache_bytes)
                                          : cpu_tuning::kDefaultL2Bytes) {}
  int64_t l1, l2;
  /// A column block's panel of b larger than an L1 is cut into slices of at most half an L1
  /// (the row block's loads and the partial sums fit beside it)...
  int64_t panel() const { return l1; }
  int64_t slice() const { return l1 / 2; }
  /// ...and up to kMaxColBlocks column blocks whose k slices (a quarter of L2 together) share
  /// each row block's slice of a.
  int64_t col_blocks() const { return l2 / 4; }
  /// A b larger than half an L2 is not re-read whole per row block.
  int64_t whole_b() const { return l2 / 2; }
};
// (the thresholds: cpu_tuning.hpp)
using cpu_tuning::kMaxColBlocks;
using cpu_tuning::kMaxColumnVectors;
using cpu_tuning::kMaxGroup;
using cpu_tuning::kMaxKTile;
using cpu_tuning::kMaxRows;
using cpu_tuning::kMaxTransposeBytes;
using cpu_tuning::kMinKTile;
using cpu_tuning::kMinTailLanes;
/// The dot form's column-group loop id above the kernel's largest (below it: new loops of the
/// slicing and the scalar rests of k).
inline constexpr int64_t kGroupLoopId = 64;

int64_t ceil_div(int64_t a, int64_t b);

/// V, the vectors of W lanes per column block of the vector form for `ej` columns: 2 when
/// they divide the columns; else the largest count up to 8 that does (784 = 7 * 7 * 16
/// columns), so loads and math that do not depend on j are shared by more vectors.
int64_t column_vectors(int64_t ej, int64_t w);

/// Nodes of `order` (sources first) that depend on the loop variable `j`.
std::unordered_set<const UOp*> dependents(const std::vector<const UOp*>& order, const UOp* j);

/// True when `off` steps by one element per step of `j` within every aligned group of `lanes`
/// steps, which is what a W-lane vector load or store at j = jo * W needs: `off` is affine in j
/// with coefficient 1, or j = jo * lanes + jl simplifies to an offset with coefficient 1 in jl
/// (a layout that regroups j in multiples of the lanes, such as b in column panels:
/// (j / P) * K * P + k * P + j % P with lanes dividing P). When the lanes do not divide j's
/// extent, the last `lanes` steps too (the vector a tail plan moves back to end there: in
/// panels, when they lie within one panel).
bool contiguous_in(const UOpRef& off, const UOp* j, int64_t lanes);

/// True when `op` on `t` vectors has a whole-vector form in the renderer (the others are
/// written lane by lane, slower than the scalar loop that clang's vectoriser handles).
bool native_vector_op(Op op, DType t);

/// True when every node depending on `j` can become a `lanes`-wide vector: index math only
/// feeds INDEX offsets, every INDEX is ungated and contiguous along j in groups of `lanes`
/// (contiguous_in), loads are plain, no 16-bit floats (the renderer writes those lane by lane),
/// and some REDUCE depends on j. With `elementwise`, no REDUCE is needed and every ALU op must
/// be a native_vector_op, unless `any_op` (a PG_CAP_EXPLICIT_SIMD target, whose scalar loops
/// nothing vectorises).
bool vectorizable(const UOpRef& sink, const UOp* j, int64_t lanes, bool elementwise = false,
                  bool any_op = false);

/// The target's vector lanes for elements of `elem` bytes.
int64_t vector_lanes(const Target& target, int64_t elem);

/// The most vector lanes for elements of `elem` bytes, a power of two from the target's width
/// down to 4, that divide `extent`: an extent the full width does not divide (1000 columns,
/// 16 float lanes) runs in narrower vectors (8 lanes) instead of scalar code (on a Sapphire
/// Rapids host: matmul 512 x 1000 x 512 56 -> 2.4 ms, 1000^3 310 -> 10 ms with k slices of
/// 125; torch 1.4 and 5.1 ms). 1 when none does.
int64_t lanes_dividing(const Target& target, int64_t elem, int64_t extent);

/// True when column blocks can be grouped by `cb`: it divides them, or the plan has a tail
/// and the last group's blocks past the last column (whose vectors move back and store
/// nothing) are at most a sixteenth of the work (33 blocks: groups of 2, not 8).
bool groups_blocks(const UpcastPlan& plan, int64_t blocks, int64_t cb);

/// A tail plan's lanes for `extent` columns (not a multiple of 4): the target's full width, or
/// the widest power of two down to kMinTailLanes that is at most the extent.
int64_t tail_lanes(const Target& target, int64_t elem, int64_t extent);

/// Vector registers of the target: 32 with AVX-512-wide vectors, else 16.
int vector_registers(const Target& target);

/// `a` and `b`, either of which may be null (no gate).
UOpRef both(const UOpRef& a, const UOpRef& b);

/// `st` with its value stored only where `gate` holds (unchanged for a null gate).
UOpRef gated_store(const UOpRef& st, const UOpRef& gate);

/// The sums of the lanes of each of the vectors `vs`, worked out together: two vectors fold
/// into one of as many lanes, each one's halves added side by side, until every lane is one
/// vector's sum. 16 vectors of 16 lanes end in one vector of their 16 sums after 15 adds of two
/// shuffles each; one at a time they took 4 adds each, and twice the shuffles. Vectors of the
/// first one's dtype with a power of two of lanes fold together; any other is summed alone, by
/// halves while its lanes are even. One scalar per vector, in order.
std::vector<UOpRef> lane_sums(const std::vector<UOpRef>& vs);

/// The largest RANGE id in `sink`: new loops take ids above it.
int64_t top_range_id(const UOpRef& sink);

/// A store `st` of a + b * sum (`f`) as one slice of its sum: slice k0 == 0 stores
/// a + b * part, later slices the value stored so far + b * part.
UOpRef slice_store(const UOpRef& st, const AffineInReduce& f, const UOpRef& part, const UOpRef& k0);

/// Rewrites one store for one vector of the upcast: j -> base + lane, W lanes.
class Vectorizer {
 public:
  Vectorizer(const UOp* j, UOpRef base, int lanes)
      : j_(j), base_(std::move(base)), w_(lanes), depends_(j) {}

  UOpRef run(const UOpRef& n) {
    if (!depends_(n.get())) return n;
    if (auto it = done_.find(n.get()); it != done_.end()) return it->second;
    UOpRef out;
    const DType vt = n->dtype().vec(w_);
    switch (n->op()) {
      case Op::INDEX:
        out = UOp::make(Op::INDEX, n->dtype(),
                        {n->src(0), simplify(substitute_range(n->src(1), j_, base_))});
        break;
      case Op::LOAD:
        out = UOp::make(Op::LOAD, vt, {run(n->src(0))});
        break;
      case Op::STORE:
        out = UOp::make(Op::STORE, n->dtype(), {run(n->src(0)), splat(run(n->src(1)))});
        break;
      case Op::REDUCE: {
        std::vector<UOpRef> srcs(n->srcs().begin(), n->srcs().end());
        srcs[0] = splat(run(srcs[0]));
        out = UOp::make(Op::REDUCE, vt, srcs, n->arg());
        break;
      }
      default: {
        std::vector<UOpRef> srcs;
        for (const UOpRef& s : n->srcs()) srcs.push_back(splat(run(s)));
        out = UOp::make(n->op(), vt, srcs, n->arg());
        break;
      }
    }
    done_.emplace(n.get(), out);
    return out;
  }

 private:
  /// `x` as a W-lane vector (a scalar repeated in every lane).
  UOpRef splat(const UOpRef& x) const {
    if (x->dtype().lanes() == w_) return x;
    if (x->op() == Op::CONST) return UOp::make(Op::CONST, x->dtype().vec(w_), {}, x->arg());
    std::vector<UOpRef> lanes(static_cast<size_t>(w_), x);
    return UOp::make(Op::VECTORIZE, x->dtype().vec(w_), lanes);
  }

  const UOp* j_;
  UOpRef base_;
  int w_;
  ReachesNode depends_;
  std::unordered_map<const UOp*, UOpRef> done_;
};

/// An upcast of the output range `r` by `f`: r -> rn * f + c for the copies c in 0..f-1. When
/// f does not divide the extent, or the extent is symbolic (the launch variable: a batch size),
/// rn covers ceil(extent / f) blocks, each copy's r is clamped to extent - 1, so every load
/// stays in bounds, and its store is gated by r < extent (the clamped copies compute a
/// duplicate of the last row that is never written). Default-constructed (no range to split),
/// it leaves stores as they are. tile_transposes loops over a block with an inner range instead
/// of copying it (at, gate_at).
class RangeSplit {
 public:
  RangeSplit() = default;
  /// `groups` > 1 (a constant extent whose block count it divides): the blocks loop as
  /// (id) * groups + (group_id), two loops.
  /// `strided`: copy c is r's value in the c-th of `factor` equal parts of the range (rn + c *
  /// ceil(extent / factor)), not the c-th of a block of neighbours.
  RangeSplit(const UOp* r, int64_t factor, int64_t id, int64_t groups = 1, int64_t group_id = 0,
             bool strided = false)
      : r_(r), f_(factor) {
    const UOpRef& end = r->src(0);
    const bool fixed = end->op() == Op::CONST;
    exact_ = fixed && end->arg_int() % f_ == 0;
    if (strided) {
      part_ = simplify(fixed ? const_int(dtypes::index, (end->arg_int() + f_ - 1) / f_)
                             : (end + (f_ - 1)) / f_);
      rn_ = range(part_, id);
      return;
    }
    if (groups > 1) {
      const int64_t blocks = (end->arg_int() + f_ - 1) / f_;
      rn_ = range(const_int(dtypes::index, blocks / groups), id) * groups +
            range(const_int(dtypes::index, groups), group_id);
      return;
    }
    rn_ = range(
        fixed ? const_int(dtypes::index, (end->arg_int() + f_ - 1) / f_) : (end + (f_ - 1)) / f_,
        id);
  }
  /// r at position `c` of its block (a constant copy, or an inner loop of f steps when the
  /// split tiles the range), clamped to extent - 1 unless the split is exact.
  UOpRef at(const UOpRef& c) const {
    UOpRef x = position(c);
    return exact_ ? x : where(lt(x, r_->src(0)), x, r_->src(0) - 1);
  }
  /// Whether position `c` of its block is inside the extent: null when the split is exact.
  UOpRef gate_at(const UOpRef& c) const { return exact_ ? UOpRef() : lt(position(c), r_->src(0)); }
  /// `st` (a store) with r replaced by its value in copy c.
  UOpRef copy(const UOpRef& st, int64_t c) const {
    if (r_ == nullptr) return st;
    return substitute_range(st, r_, at(const_int(dtypes::index, c)));
  }
  /// The store gate of copy c: null when the split is exact.
  UOpRef gate(int64_t c) const { return gate_at(const_int(dtypes::index, c)); }

 private:
  UOpRef position(const UOpRef& c) const { return part_ ? rn_ + c * part_ : rn_ * f_ + c; }
  const UOp* r_ = nullptr;
  int64_t f_ = 1;
  bool exact_ = true;
  UOpRef rn_;
  UOpRef part_;  ///< strided: the length of a part
};

/// A range of extent `n` cut into slices of `size`: `slice` loops over ceil(n / size) of them
/// (a RANGE of loop id `id`) and `length` is the current slice's length, `size`, or what is
/// left in the last slice when size does not divide n (then an expression of `slice`).
struct Slices {
  Slices(const UOpRef& n, int64_t size, int64_t id);
  UOpRef slice, length;
};

/// The dot form (see optimize.hpp) for a kernel whose REDUCEs all qualify; no plan otherwise.
UpcastPlan choose_dot(const UOpRef& sink, const std::vector<const UOp*>& order,
                      const std::vector<const UOp*>& outputs, const Target& target);

/// `sink` rewritten by a dot-form plan.
UOpRef apply_dot(const UOpRef& sink, const UpcastPlan& plan);

}  // namespace polygrad::codegen::upcast

#endif  // POLYGRAD_CODEGEN_UPCAST_PARTS_HPP
