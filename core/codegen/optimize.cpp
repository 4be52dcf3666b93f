// Output upcasting; the transformation and its heuristic are described in optimize.hpp.
#include "codegen/optimize.hpp"

#include <algorithm>
#include <optional>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "codegen/affine.hpp"
#include "codegen/rebuild.hpp"
#include "ir/error.hpp"
#include "ir/graph.hpp"
#include "symbolic/simplify.hpp"

namespace polygrad::codegen {

namespace {

/// The cache sizes the k tiling (see choose_upcast) is planned for: the target's declared L1
/// data cache and L2 per compute unit, or 32 KiB and 512 KiB where it declares none.
struct CacheBudget {
  explicit CacheBudget(const Target& target)
      : l1(target.caps.l1_cache_bytes > 0 ? static_cast<int64_t>(target.caps.l1_cache_bytes)
                                          : int64_t{32} << 10),
        l2(target.caps.l2_cache_bytes > 0 ? static_cast<int64_t>(target.caps.l2_cache_bytes)
                                          : int64_t{512} << 10) {}
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
constexpr int64_t kMinKTile = 32;
constexpr int64_t kMaxKTile = 128;
constexpr int64_t kMaxColBlocks = 8;
constexpr int64_t kMaxRows = 12;
constexpr int64_t kMinTailLanes = 4;
constexpr int64_t kMaxGroup = 8;
constexpr int64_t kMaxTransposeBytes = int64_t{16} << 20;
/// The dot form's column-group loop id above the kernel's largest (below it: new loops of the
/// slicing and the scalar rests of k).
constexpr int64_t kGroupLoopId = 64;

int64_t ceil_div(int64_t a, int64_t b) {
  return (a + b - 1) / b;
}

/// V, the vectors of W lanes per column block of the vector form for `ej` columns: 2 when
/// they divide the columns; else the largest count up to 8 that does (784 = 7 * 7 * 16
/// columns), so loads and math that do not depend on j are shared by more vectors.
int64_t column_vectors(int64_t ej, int64_t w) {
  if (ej % (2 * w) == 0) return 2;
  for (int64_t v = 8; v >= 3; --v)
    if ((ej / w) % v == 0) return v;
  return 1;
}

/// Nodes of `order` (sources first) that depend on the loop variable `j`.
std::unordered_set<const UOp*> dependents(const std::vector<const UOp*>& order, const UOp* j) {
  std::unordered_set<const UOp*> dep{j};
  for (const UOp* n : order)
    for (const UOpRef& s : n->srcs())
      if (dep.count(s.get())) {
        dep.insert(n);
        break;
      }
  return dep;
}

/// True when `off` steps by one element per step of `j` within every aligned group of `lanes`
/// steps, which is what a W-lane vector load or store at j = jo * W needs: `off` is affine in j
/// with coefficient 1, or j = jo * lanes + jl simplifies to an offset with coefficient 1 in jl
/// (a layout that regroups j in multiples of the lanes, such as b in column panels:
/// (j / P) * K * P + k * P + j % P with lanes dividing P).
bool contiguous_in(const UOpRef& off, const UOp* j, int64_t lanes) {
  std::optional<int64_t> a = coefficient(off.get(), j);
  if (a) return *a == 1;
  const UOpRef& end = j->src(0);
  if (lanes < 2 || end->op() != Op::CONST || end->arg_int() % lanes != 0) return false;
  // Loop ids beyond any a kernel uses: the two ranges are only for this proof.
  constexpr int64_t kGroupId = int64_t{1} << 40;
  const UOpRef jl = range(const_int(dtypes::index, lanes), kGroupId + 1);
  const UOpRef jo = range(const_int(dtypes::index, end->arg_int() / lanes), kGroupId);
  const UOpRef grouped = simplify(substitute_range(off, j, jo * lanes + jl));
  a = coefficient(grouped.get(), jl.get());
  return a && *a == 1;
}

/// True when `op` on `t` vectors has a whole-vector form in the renderer (the others are
/// written lane by lane, slower than the scalar loop that clang's vectoriser handles).
bool native_vector_op(Op op, DType t) {
  switch (op) {
    case Op::ADD:
    case Op::SUB:
    case Op::MUL:
    case Op::NEG:
    case Op::MULACC:
      return !t.is_bool();
    case Op::FDIV:
      return t.is_float();
    case Op::MAX:  // a mask and ?:, as are the comparisons and WHERE
    case Op::CMPLT:
    case Op::CMPNE:
    case Op::CMPEQ:
    case Op::WHERE:
      return true;
    default:
      return false;
  }
}

/// True when every node depending on `j` can become a `lanes`-wide vector: index math only
/// feeds INDEX offsets, every INDEX is ungated and contiguous along j in groups of `lanes`
/// (contiguous_in), loads are plain, no 16-bit floats (the renderer writes those lane by lane),
/// and some REDUCE depends on j. With `elementwise`, no REDUCE is needed and every ALU op must
/// be a native_vector_op.
bool vectorizable(const UOpRef& sink, const UOp* j, int64_t lanes, bool elementwise = false) {
  std::vector<const UOp*> order = toposort(sink);
  std::unordered_set<const UOp*> dep = dependents(order, j);
  std::unordered_set<const UOp*> index_math{j};
  bool reduces = false;
  for (const UOp* n : order) {
    if (!dep.count(n) || n == j || n->op() == Op::SINK) continue;
    bool all_index = is_alu(n->op()) && n->dtype() == dtypes::index;
    for (const UOpRef& s : n->srcs())
      if (dep.count(s.get()) && !index_math.count(s.get())) all_index = false;
    if (all_index) {
      index_math.insert(n);
      continue;
    }
    for (size_t i = 0; i < n->nsrcs(); ++i)
      if (index_math.count(n->src(i).get()) && !(n->op() == Op::INDEX && i == 1) &&
          !(n->op() == Op::REDUCE && n->src(i).get() == j))
        return false;
    const pg_dtype s = n->dtype().scalar();
    if (s == PG_DTYPE_FLOAT16 || s == PG_DTYPE_BFLOAT16) return false;
    switch (n->op()) {
      case Op::INDEX:
        if (n->nsrcs() != 2 || !contiguous_in(n->src(1), j, lanes)) return false;
        break;
      case Op::LOAD:
        if (n->nsrcs() != 1) return false;
        break;
      case Op::STORE:
        if (n->nsrcs() != 2) return false;
        break;
      case Op::REDUCE:
        reduces = true;
        break;
      default:
        if (elementwise && !native_vector_op(n->op(), n->dtype())) return false;
        if (!is_alu(n->op()) && n->op() != Op::CAST && n->op() != Op::BITCAST) return false;
    }
  }
  for (const UOpRef& st : sink->srcs())
    if (!dep.count(st.get())) return false;
  return elementwise || reduces;
}

/// Rewrites one store for one vector of the upcast: j -> base + lane, W lanes.
class Vectorizer {
 public:
  Vectorizer(const UOp* j, UOpRef base, int lanes) : j_(j), base_(std::move(base)), w_(lanes) {}

  UOpRef run(const UOpRef& n) {
    if (!depends(n.get())) return n;
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
  bool depends(const UOp* n) {
    if (n == j_) return true;
    if (auto it = dep_.find(n); it != dep_.end()) return it->second;
    bool d = false;
    for (const UOpRef& s : n->srcs()) d = d || depends(s.get());
    dep_.emplace(n, d);
    return d;
  }
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
  std::unordered_map<const UOp*, bool> dep_;
  std::unordered_map<const UOp*, UOpRef> done_;
};

/// The target's vector lanes for elements of `elem` bytes.
int64_t vector_lanes(const Target& target, int64_t elem) {
  return std::min<int64_t>(target.caps.vector_width_bytes / elem,
                           int64_t{target.caps.max_vector_lanes});
}

/// The most vector lanes for elements of `elem` bytes, a power of two from the target's width
/// down to 4, that divide `extent`: an extent the full width does not divide (1000 columns,
/// 16 float lanes) runs in narrower vectors (8 lanes) instead of scalar code (on a Sapphire
/// Rapids host: matmul 512 x 1000 x 512 56 -> 2.4 ms, 1000^3 310 -> 10 ms with k slices of
/// 125; torch 1.4 and 5.1 ms). 1 when none does.
int64_t lanes_dividing(const Target& target, int64_t elem, int64_t extent) {
  constexpr int64_t kMinLanes = 4;
  for (int64_t w = vector_lanes(target, elem); w >= kMinLanes; w /= 2)
    if (extent % w == 0) return w;
  return 1;
}

/// True when column blocks can be grouped by `cb`: it divides them, or the plan has a tail
/// and the last group's blocks past the last column (whose vectors move back and store
/// nothing) are at most a sixteenth of the work (33 blocks: groups of 2, not 8).
bool groups_blocks(const UpcastPlan& plan, int64_t blocks, int64_t cb) {
  return blocks % cb == 0 || (plan.tail && (ceil_div(blocks, cb) * cb - blocks) * 16 <= blocks);
}

/// A tail plan's lanes for `extent` columns (not a multiple of 4): the target's full width, or
/// the widest power of two down to kMinTailLanes that is at most the extent.
int64_t tail_lanes(const Target& target, int64_t elem, int64_t extent) {
  int64_t w = vector_lanes(target, elem);
  while (w > kMinTailLanes && w > extent) w /= 2;
  return w;
}

/// Vector registers of the target: 32 with AVX-512-wide vectors, else 16.
int vector_registers(const Target& target) {
  return target.caps.vector_width_bytes >= 64 ? 32 : 16;
}

/// An upcast of the output range `r` by `f`: r -> rn * f + c for the copies c in 0..f-1. When
/// f does not divide the extent, or the extent is symbolic (the launch variable: a batch size),
/// rn covers ceil(extent / f) blocks, each copy's r is clamped to extent - 1, so every load
/// stays in bounds, and its store is gated by r < extent (the clamped copies compute a
/// duplicate of the last row that is never written). Default-constructed (no range to split),
/// it leaves stores as they are.
class RangeSplit {
 public:
  RangeSplit() = default;
  /// `groups` > 1 (a constant extent whose block count it divides): the blocks loop as
  /// (id) * groups + (group_id), two loops.
  RangeSplit(const UOp* r, int64_t factor, int64_t id, int64_t groups = 1, int64_t group_id = 0)
      : r_(r), f_(factor) {
    const UOpRef& end = r->src(0);
    const bool fixed = end->op() == Op::CONST;
    exact_ = fixed && end->arg_int() % f_ == 0;
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
  /// `st` (a store) with r replaced by its value in copy c.
  UOpRef copy(const UOpRef& st, int64_t c) const {
    if (r_ == nullptr) return st;
    UOpRef x = rn_ * f_ + c;
    if (!exact_) x = where(lt(x, r_->src(0)), x, r_->src(0) - 1);
    return substitute_range(st, r_, x);
  }
  /// The store gate of copy c: null when the split is exact.
  UOpRef gate(int64_t c) const { return exact_ ? UOpRef() : lt(rn_ * f_ + c, r_->src(0)); }

 private:
  const UOp* r_ = nullptr;
  int64_t f_ = 1;
  bool exact_ = true;
  UOpRef rn_;
};

/// `a` and `b`, either of which may be null (no gate).
UOpRef both(const UOpRef& a, const UOpRef& b) {
  if (!a) return b;
  if (!b) return a;
  return alu(Op::AND, {a, b});
}

/// `st` with its value stored only where `gate` holds (unchanged for a null gate).
UOpRef gated_store(const UOpRef& st, const UOpRef& gate) {
  if (!gate) return st;
  return UOp::make(Op::STORE, st->dtype(), {st->src(0), st->src(1), gate});
}

/// The dot form's lanes for a float sum `red` over a last range k its loads are contiguous
/// along, without selects (their bool vectors stay scalar code); 0 when it does not qualify.
/// A k that the target's full width does not divide (300, 1023) takes full vectors over as
/// much of it as they divide and a scalar sum over the rest.
int64_t dot_lanes(const UOpRef& sink, const UOp* red, const Target& target) {
  if (red->nsrcs() < 2 || static_cast<Op>(red->arg_int()) != Op::ADD || !red->dtype().is_float() ||
      red->dtype().is_vector())
    return 0;
  const UOp* k = red->src(red->nsrcs() - 1).get();
  if (k->src(0)->op() != Op::CONST || has_selects(red->src(0))) return 0;
  const int64_t ek = k->src(0)->arg_int();
  const int64_t elem = red->dtype().scalar_size();
  int64_t w = lanes_dividing(target, elem, ek);
  if (const int64_t full = vector_lanes(target, elem); w < full && ek >= 2 * full) w = full;
  if (w < 2 || ek < 2 * w || !vectorizable(sink, k, w)) return 0;
  return w;
}

/// The dot form (see optimize.hpp) for a kernel whose REDUCEs are float sums over ranges their
/// loads are contiguous along (the innermost, when one reduces over several: a weight gradient
/// over (batch, positions)). Several REDUCEs over distinct ranges (an RNN step's
/// x @ wi.T + h @ wh.T) each take their own vector loop.
UpcastPlan choose_dot(const UOpRef& sink, const std::vector<const UOp*>& order,
                      const std::vector<const UOp*>& outputs, const Target& target) {
  std::vector<const UOp*> reds;
  for (const UOp* u : order)
    if (u->op() == Op::REDUCE) reds.push_back(u);
  if (reds.empty()) return {};
  UpcastPlan plan;
  for (const UOp* r : reds) {
    const int64_t w = dot_lanes(sink, r, target);
    if (w == 0) return {};
    const UOp* k = r->src(r->nsrcs() - 1).get();
    for (const auto& [other, lanes] : plan.dot_ks)
      if (other == k) return {};  // (two REDUCEs over one range: not planned)
    plan.dot_ks.emplace_back(k, static_cast<int>(w));
  }
  const UOp* red = reds.front();
  plan.dot_k = plan.dot_ks.front().first;
  plan.lanes = plan.dot_ks.front().second;
  // A symbolic extent (0 here: the launch variable) takes any factor (see RangeSplit).
  auto extent = [](const UOp* r) {
    return r->src(0)->op() == Op::CONST ? r->src(0)->arg_int() : int64_t{0};
  };
  const UOp* j = outputs.back();
  const int64_t ej = extent(j);
  plan.j = j;
  plan.cols = ej % 4 == 0 ? 4 : ej % 2 == 0 ? 2 : 1;
  // i: the output range next to j (in a batched a @ b.T the batch range is further out and
  // shares no loads between its rows). R*C accumulators, R + C loads per step.
  // With 16 vector registers (AVX2), 4 x 4 accumulators and 8 loads spill inside the k loop:
  // 3 x 3 take 9 + 6, and ranges that 3 does not divide get a clamped, gated last block
  // (RangeSplit). The MLP's x @ w1.T: 553-609 -> 381-402 us.
  const bool few_registers = vector_registers(target) <= 16;
  if (few_registers) plan.cols = static_cast<int>(ej == 0 ? 3 : std::min<int64_t>(3, ej));
  if (outputs.size() >= 2) {
    const UOp* i = outputs[outputs.size() - 2];
    const int64_t ei = extent(i);
    if (few_registers) {
      plan.i = i;
      plan.rows = static_cast<int>(ei == 0 ? 3 : std::min<int64_t>(3, ei));
    } else {
      for (int r = std::min(8, 16 / plan.cols); r >= 2; r /= 2)
        if (ei % r == 0) {
          plan.i = i;
          plan.rows = r;
          break;
        }
    }
  }
  // A lone row reduction (the partial sums of a large sum): 8 rows in flight, as memory allows.
  if (plan.i == nullptr && ej % 8 == 0 && (ej >= 16 || ej == 0)) plan.cols = 8;
  // Over two reduce ranges (a weight gradient over (batch, positions)) with b, the columns'
  // operand, larger than half an L2: every row block would stream all of b. Sliced by the
  // outer range instead, column blocks outermost (the launch), then the slice, then the row
  // blocks: each column block's slice of b stays in L1 across the row blocks, and b is read
  // once. The weight gradient of a conv 64 -> 64 channels on 16 x 16, batch 32, on a Sapphire
  // Rapids host: 8.3 -> 5.3 ms. (Blocks of fewer than 4 columns re-read a per slice: left.)
  if (reds.size() == 1 && red->nsrcs() == 3 && plan.i != nullptr && ej > 0 && sink->nsrcs() == 1 &&
      affine_in_reduce(sink->src(0)->src(1))) {
    const int64_t elem = red->dtype().scalar_size();
    const int64_t units = std::max<int64_t>(1, target.caps.compute_units);
    // (a symbolic outer range, a batch, counts as large)
    const UOp* outer = red->src(1).get();
    const int64_t slices = outer->src(0)->op() == Op::CONST ? outer->src(0)->arg_int() : 1 << 20;
    bool large = false;  // an operand that walks the columns, larger than half an L2
    for (const UOp* u : order)
      if (u->op() == Op::INDEX && u->src(0)->op() == Op::DEFINE_GLOBAL &&
          u->src(0)->arg_int() != 0) {
        const std::optional<int64_t> cj = coefficient(u->src(1).get(), j);
        large =
            large || (cj && *cj > 0 && ej * *cj * elem * slices > CacheBudget(target).whole_b());
      }
    if (large && plan.cols >= 4 && ej / plan.cols >= 2 * units) {
      plan.k_outer = red->src(1).get();
      // Several values of the outer range per slice, as many as keep the row and column
      // blocks' slices within half an L1 (up to 8): each slice ends in R * C lane sums and a
      // read-modify-write of the outputs.
      const int64_t inner = red->src(2)->src(0)->arg_int();
      const int64_t per = (plan.rows + plan.cols) * inner * elem;
      for (int64_t g = kMaxGroup; g >= 2 && plan.k_group == 1; --g)
        if (g * per <= CacheBudget(target).slice() && g < slices)
          plan.k_group = static_cast<int>(g);
      // Column blocks in groups of CB per launch step, looped inside the row blocks: each row
      // block's slice of a serves CB column blocks from L1, so a (all of it per launch step)
      // is read 1/CB as often; their slices of b stay in L2 (a quarter of it). The weight
      // gradient of a conv 64 -> 64 channels on 16 x 16, batch 32, on one core of a Sapphire
      // Rapids host: 9.2 ms sliced per batch element, 8.4 in slices of 3, 5.6-5.9 with column
      // blocks in groups of 8 as well.
      const int64_t blocks = ceil_div(ej, plan.cols);
      const int64_t b_slice = plan.cols * plan.k_group * inner * elem;
      for (int64_t cb = kMaxColBlocks; cb >= 2 && plan.col_blocks == 1; cb /= 2)
        if (blocks % cb == 0 && blocks / cb >= 2 * units &&
            cb * b_slice <= CacheBudget(target).col_blocks())
          plan.col_blocks = static_cast<int>(cb);
    }
  }
  return plan;
}

/// An elementwise kernel (no REDUCE) whose loads and stores are contiguous along its innermost
/// output range j: j becomes one W-lane vector per step. The explicit vector store is what
/// lets the linearizer hint large outputs as streaming (see linearize.cpp).
UpcastPlan choose_elementwise(const UOpRef& sink, const std::vector<const UOp*>& outputs,
                              const Target& target) {
  const UOp* j = outputs.back();
  const int64_t elem = sink->src(0)->src(1)->dtype().scalar_size();
  if (elem <= 0 || j->src(0)->op() != Op::CONST) return {};
  const int64_t w = lanes_dividing(target, elem, j->src(0)->arg_int());
  if (w < 2 || !vectorizable(sink, j, w, true)) return {};
  UpcastPlan plan;
  plan.j = j;
  plan.lanes = static_cast<int>(w);
  return plan;
}

/// The sum of the lanes of the vector `v`: halves added until one lane is left (log2(W) vector
/// adds of lane shuffles, not W - 1 scalar adds).
UOpRef lane_sum(UOpRef v) {
  const DType t = v->dtype().scalar_type();
  auto lane = [&](const UOpRef& x, int l) {
    return UOp::make(Op::GEP, t, {x}, std::vector<int64_t>{l});
  };
  int n = v->dtype().lanes();
  while (n > 1 && n % 2 == 0) {
    const int half = n / 2;
    if (half == 1) return lane(v, 0) + lane(v, 1);
    std::vector<UOpRef> lo, hi;
    for (int l = 0; l < half; ++l) {
      lo.push_back(lane(v, l));
      hi.push_back(lane(v, half + l));
    }
    v = UOp::make(Op::VECTORIZE, t.vec(half), lo) + UOp::make(Op::VECTORIZE, t.vec(half), hi);
    n = half;
  }
  UOpRef sum = lane(v, 0);
  for (int l = 1; l < n; ++l) sum = sum + lane(v, l);
  return sum;
}

/// The largest RANGE id in `sink`: new loops take ids above it.
int64_t top_range_id(const UOpRef& sink) {
  int64_t top = 0;
  for (const UOp* u : toposort(sink))
    if (u->op() == Op::RANGE) top = std::max(top, u->arg_int());
  return top;
}

/// A store `st` of a + b * sum (`f`) as one slice of its sum: slice k0 == 0 stores
/// a + b * part, later slices the value stored so far + b * part.
UOpRef slice_store(const UOpRef& st, const AffineInReduce& f, const UOpRef& part,
                   const UOpRef& k0) {
  const DType t = f.reduce->dtype();
  const UOpRef start = f.a ? f.a : UOp::make(Op::CONST, t, {}, 0.0);
  const UOpRef idx = st->src(0);
  const UOpRef prev = UOp::make(Op::LOAD, t, {idx, start, ne(k0, const_int(dtypes::index, 0))});
  return UOp::make(Op::STORE, st->dtype(), {idx, prev + (f.b ? f.b * part : part)});
}

/// `sink` rewritten by a dot-form plan.
UOpRef apply_dot(const UOpRef& sink, const UpcastPlan& plan) {
  const int64_t top = top_range_id(sink);
  // Sliced by an outer reduce range: loops j' (launch) > k0 (that range) > i' > k.
  int64_t id_j = plan.j->arg_int(), id_i = plan.i != nullptr ? plan.i->arg_int() : 0;
  // k_group G > 1: k0 runs over ceil(n / G) slices and g over the G values of each (fewer in
  // the last), k_outer = k0 * G + g.
  UOpRef k0, g, outer_value;
  if (plan.k_outer != nullptr) {
    id_j = top + 1;
    id_i = top + 3;
    const UOpRef& n = plan.k_outer->src(0);
    const int64_t G = plan.k_group;
    if (G == 1) {
      k0 = range(n, top + 2);
      outer_value = k0;
    } else {
      const UOpRef slices = simplify((n + (G - 1)) / G);
      k0 = range(slices, top + 2);
      const UOpRef last = simplify(n - (slices - 1) * G);
      g = range(simplify(where(lt(k0, slices - 1), const_int(dtypes::index, G), last)),
                top + 4 + static_cast<int64_t>(plan.dot_ks.size()));
      outer_value = k0 * G + g;
    }
  }
  // Column blocks in groups (k_outer slicing): j' (launch) > k0 > i' > jc.
  const RangeSplit js(plan.j, plan.cols, id_j, plan.col_blocks, top + kGroupLoopId);
  const RangeSplit is = plan.i != nullptr ? RangeSplit(plan.i, plan.rows, id_i) : RangeSplit();
  // Each REDUCE over one of the plan's ranges k: k -> k' * W + lane, and when W does not
  // divide k, a scalar loop over the last k % W terms after the vector one.
  auto vectorize_reduce = [&](const UOpRef& n) -> UOpRef {
    if (n->op() != Op::REDUCE || n->nsrcs() < 2) return n;
    const UOp* k = n->src(n->nsrcs() - 1).get();
    size_t at = 0;
    while (at < plan.dot_ks.size() && plan.dot_ks[at].first != k) ++at;
    if (at == plan.dot_ks.size()) return n;
    const int lanes = plan.dot_ks[at].second;
    const int64_t ek = k->src(0)->arg_int(), rest = ek % lanes;
    const UOpRef kv = range(const_int(dtypes::index, ek / lanes), k->arg_int());
    Vectorizer vec(k, kv * lanes, lanes);
    UOpRef v = vec.run(n->src(0));
    const DType vt = n->dtype().vec(lanes);
    if (v->dtype() != vt) v = UOp::make(Op::VECTORIZE, vt, std::vector<UOpRef>(lanes, v));
    std::vector<UOpRef> srcs{v};  // the other reduce ranges stay loops around k
    for (size_t i = 1; i + 1 < n->nsrcs(); ++i)
      if (n->src(i).get() != plan.k_outer)
        srcs.push_back(n->src(i));
      else if (g)
        srcs.push_back(g);
    srcs.push_back(kv);
    UOpRef sum = lane_sum(UOp::make(Op::REDUCE, vt, srcs, n->arg()));
    if (rest == 0) return sum;
    const UOpRef kr = range(const_int(dtypes::index, rest), top + 4 + static_cast<int64_t>(at));
    srcs[0] = substitute_range(n->src(0), k, kr + (ek - rest));
    srcs.back() = kr;
    return sum + UOp::make(Op::REDUCE, n->dtype(), srcs, n->arg());
  };
  auto sliced = [&](const UOpRef& st) -> UOpRef {
    if (!k0) return rebuild(st, vectorize_reduce);
    const std::optional<AffineInReduce> f = affine_in_reduce(st->src(1));
    if (!f) ir_error("codegen: dot-form slicing lost the a + b * sum form of a store");
    const UOpRef part = rebuild(f->reduce->ref(), vectorize_reduce);
    return slice_store(st, *f, substitute_range(part, plan.k_outer, outer_value), k0);
  };
  std::vector<UOpRef> stores;
  for (const UOpRef& st : sink->srcs())
    for (int r = 0; r < plan.rows; ++r) {
      const UOpRef row = is.copy(st, r);
      for (int c = 0; c < plan.cols; ++c)
        stores.push_back(gated_store(sliced(js.copy(row, c)), both(is.gate(r), js.gate(c))));
    }
  return UOp::make(Op::SINK, sink->dtype(), stores, sink->arg());
}

}  // namespace

UpcastPlan choose_upcast(const UOpRef& sink, const Target& target) {
  std::vector<const UOp*> order = toposort(sink);
  std::vector<int64_t> reduced;
  for (const UOp* u : order)
    if (u->op() == Op::REDUCE)
      for (size_t i = 1; i < u->nsrcs(); ++i) reduced.push_back(u->src(i)->arg_int());
  std::vector<const UOp*> outputs;  // output ranges by loop id (the linearizer's loop order)
  for (const UOp* u : order)
    if (u->op() == Op::RANGE &&
        std::find(reduced.begin(), reduced.end(), u->arg_int()) == reduced.end())
      outputs.push_back(u);
  if (outputs.empty() || sink->nsrcs() == 0) return {};
  std::sort(outputs.begin(), outputs.end(),
            [](const UOp* a, const UOp* b) { return a->arg_int() < b->arg_int(); });
  if (reduced.empty()) return choose_elementwise(sink, outputs, target);

  // j: the innermost output loop, vectorised along W lanes of the stored dtype.
  const UOp* j = outputs.back();
  const int64_t elem = sink->src(0)->src(1)->dtype().scalar_size();
  if (j->src(0)->op() != Op::CONST) return choose_dot(sink, order, outputs, target);
  const int64_t ej = j->src(0)->arg_int();
  int64_t w = elem > 0 ? lanes_dividing(target, elem, ej) : 1;
  // No power of two of 4 or more lanes divides the columns (1023, 555), or only narrower
  // vectors than the target's do and there are at least 4 full vectors of columns (1000, 200):
  // W lanes all the same, the last vector of each row moved back to end at the last column
  // (see apply_upcast). On a Sapphire Rapids host, matmul 1023^3 261 -> 7 ms, 1000^3 in 8
  // lanes 10 -> 6.6 ms (torch 6.4 and 5.9).
  const int64_t full = elem > 0 ? vector_lanes(target, elem) : 1;
  const bool tail = elem > 0 && ((w < 2 && ej >= kMinTailLanes) || (w < full && ej >= 4 * full));
  if (tail) w = tail_lanes(target, elem, ej);
  if (!vectorizable(sink, j, w)) return choose_dot(sink, order, outputs, target);
  if (elem <= 0 || w < 2) return {};
  UpcastPlan plan;
  plan.j = j;
  plan.lanes = static_cast<int>(w);
  plan.vectors = static_cast<int>(tail ? (ej >= 2 * w ? 2 : 1) : column_vectors(ej, w));
  plan.tail = tail;

  // i: the outermost other output loop, upcast by R. Every step holds R*V accumulators, the
  // V loaded vectors and one broadcast, which must fit the vector registers (32 with
  // AVX-512-wide vectors, else 16), or the accumulators spill to the stack inside the k loop
  // (4 x 7 did). With 16 registers every one counts: R is the most that fit (6 rows of 2
  // vectors, matmul 1024 on AVX2: 77 -> 101 GFLOP/s). With 32, three quarters of them hold
  // accumulators, at most 12 rows (the 12 x 32 tile of BLIS's AVX-512 sgemm; matmul 1024 on
  // a Sapphire Rapids host, 8 x 2 -> 12 x 2: 7.2 -> 6.5 ms), split into the fewest blocks,
  // as even as they come (16 rows: two blocks of 8, not 12 and 4). R need not divide the
  // rows: RangeSplit clamps and gates the last block, as it does for a symbolic i (the launch
  // variable, when it is the only other range).
  const int registers = vector_registers(target);
  int accumulators = registers - plan.vectors - 1;
  if (registers > 16) accumulators = std::min(accumulators, registers * 3 / 4);
  const UOp* sym = nullptr;
  const UOp* fixed = nullptr;
  for (const UOp* i : outputs) {
    if (i == j) continue;
    if (i->src(0)->op() != Op::CONST) {
      if (sym == nullptr) sym = i;
      continue;
    }
    fixed = i;
    break;
  }
  if (const UOp* i = fixed != nullptr ? fixed : sym; i != nullptr) {
    const int64_t ei = i == fixed ? i->src(0)->arg_int() : 0;
    int64_t r = accumulators / plan.vectors;
    if (registers <= 16) {
      r = std::min<int64_t>(r, ei == 0 ? 16 : ei);
    } else {
      r = std::min<int64_t>(r, kMaxRows);
      if (ei != 0) r = ceil_div(ei, ceil_div(ei, r));
    }
    if (r >= 2) {
      plan.i = i;
      plan.rows = static_cast<int>(r);
    }
  }

  // A reduce over two ranges, the inner one constant (a convolution's weight gradient over
  // (batch, positions), the batch a launch variable): one slice per value of the outer range,
  // so each column block's slice of b (positions x V*W) is reused from L1 by every row block
  // (j' > batch > i' > positions; conv 32 -> 64 channels on 14 x 14, batch 64, on a Sapphire
  // Rapids host: 7.4 -> 3.1 ms).
  // (The stored value may be any a + b * sum, as with k tiles below.)
  std::optional<AffineInReduce> stored;
  if (sink->nsrcs() == 1) stored = affine_in_reduce(sink->src(0)->src(1));
  if (plan.i != nullptr && stored && stored->reduce->nsrcs() == 3 &&
      static_cast<Op>(stored->reduce->arg_int()) == Op::ADD && stored->reduce->dtype().is_float() &&
      stored->reduce->src(2)->src(0)->op() == Op::CONST) {
    const UOp* inner = stored->reduce->src(2).get();
    const int64_t ek = inner->src(0)->arg_int();
    const int64_t row_bytes = int64_t{plan.vectors} * plan.lanes * elem;
    const int64_t blocks = ceil_div(ej, int64_t{plan.vectors} * plan.lanes);
    const int64_t units = std::max<int64_t>(1, target.caps.compute_units);
    if (blocks >= 2 * units && ek * row_bytes <= CacheBudget(target).panel()) {
      plan.k = inner;
      plan.k_outer = stored->reduce->src(1).get();
      plan.k_tile = static_cast<int>(ek);
      return plan;
    }
  }

  // k tiles: the panel of b that one column block streams through is K rows of V*W elements.
  // When it is larger than L1, every row block reads it again from L2, as fast as the FMAs
  // consume it (V loads per R*V FMAs). Then the loops become j' (launch) > k0 > i' > k1: a
  // KT-row slice of the panel, sized to stay in L1, is reused by every row block, and each
  // output vector is a partial sum read back and added to per k0.
  // The stored value may be any a + b * sum with a and b free of k (an SGD update w - lr * sum
  // fused into the weight gradient): the first slice stores a + b * partial, later ones add
  // b * partial.
  const UOp* rd = stored ? stored->reduce : nullptr;
  if (plan.i != nullptr && rd != nullptr && rd->nsrcs() == 2 &&
      static_cast<Op>(rd->arg_int()) == Op::ADD && rd->dtype().is_float()) {
    const bool fixed_k = rd->src(1)->src(0)->op() == Op::CONST;
    const int64_t ek = fixed_k ? rd->src(1)->src(0)->arg_int() : 0;
    const int64_t row_bytes = int64_t{plan.vectors} * plan.lanes * elem;
    const int64_t blocks = ceil_div(ej, int64_t{plan.vectors} * plan.lanes);
    const int64_t units = std::max<int64_t>(1, target.caps.compute_units);
    const CacheBudget cache(target);
    if (!fixed_k) {
      // A batch-sized k (weight gradients): whatever the batch, reusing each panel across the
      // row blocks beats streaming all of b past each (the MLP's first weight gradient at
      // batch 256, whose b is 784 KiB: 489 -> 321 us; 361 us as a constant k's one slice).
      if (blocks >= 2 * units) plan.k = rd->src(1).get();
    } else if (ek * row_bytes > cache.panel()) {
      // With 32 registers, when column blocks can loop inside the row loop (below), the slice
      // is as long as the row block's slice of a (R rows of KT) fits half an L1: that is the
      // operand the CB column blocks share from L1 while their panels stream from L2 (BLIS's
      // order), and longer slices mean fewer passes over the partial sums (matmul 1024 on a
      // Sapphire Rapids host, KT 128 -> 512: 6.5 -> 5.9 ms; 2048: 55 -> 48 ms). Otherwise,
      // and with 16 registers as measured on AVX2, the slice of the panel stays in L1.
      bool groups = false;
      for (int64_t cb = 2; cb <= kMaxColBlocks; cb *= 2)
        groups = groups || (groups_blocks(plan, blocks, cb) && blocks / cb >= 2 * units);
      const bool a_slice = registers > 16 && groups;
      auto fits = [&](int64_t kt) {
        const bool cached = a_slice ? plan.rows * kt * elem <= cache.slice() &&
                                          2 * kt * row_bytes <= cache.col_blocks()
                                    : kt * row_bytes <= cache.slice();
        return cached && ek % kt == 0 && ek >= 2 * kt;
      };
      // Powers of two first; else any divisor of k (1000 = 8 * 125: slices of 125).
      const int64_t top = a_slice ? ek / 2 : kMaxKTile;
      int64_t kt = 0;
      for (int64_t t = int64_t{1} << 62; t >= kMinKTile && kt == 0; t /= 2)
        if (t <= top && fits(t)) kt = t;
      for (int64_t t = top; t >= kMinKTile && kt == 0; --t)
        if (fits(t)) kt = t;
      // Slices as even as they come with a shorter last one, when no divisor is at least
      // half as long (1025 = 25 * 41 with column groups: 3 slices of 342, the last 341, not 25
      // of 41; on a Sapphire Rapids host matmul 1025^3 in slices of 41 without groups took
      // 10.2 ms, now 8.6; torch 6.1).
      const int64_t longest = std::min({top, ek / 2,
                                        a_slice ? std::min(cache.slice() / (plan.rows * elem),
                                                           cache.col_blocks() / (2 * row_bytes))
                                                : cache.slice() / row_bytes});
      if (longest >= kMinKTile) {
        const int64_t even = ceil_div(ek, ceil_div(ek, longest));
        if (2 * kt <= even) kt = even;
      }
      if (kt > 0) {
        plan.k = rd->src(1).get();
        plan.k_tile = static_cast<int>(kt);
      }
    } else if (ek * row_bytes <= cache.slice() && ek * ej * elem > cache.whole_b() &&
               blocks >= 2 * units) {
      // A panel small enough to stay in L1 beside the loads of a, but the whole of b beyond
      // L2: with rows outermost, every row block would stream all of b from L3. One k slice
      // puts the column blocks outermost instead (j' > i'), each panel staying in L1 across
      // the row blocks (the MLP's weight gradient on AVX2, 16 KiB panels of a 784 KiB b:
      // 482 -> 325-350 us). A 32 KiB panel (512 x 512 on AVX2) lost more in L1 than it won.
      plan.k = rd->src(1).get();
      plan.k_tile = static_cast<int>(ek);
    }
    // Column blocks inside the row loop: each row block's slice of a, loaded into L1 for one
    // column block, serves CB of them before the next row block evicts it, so a streams from
    // L2/L3 1/CB as often (matmul 1024: 24 -> 16-17 ms here). The CB slices of b stay in L2.
    // The launch keeps at least two steps per compute unit.
    if (plan.k != nullptr && plan.k_tile > 0) {
      for (int64_t cb = kMaxColBlocks; cb >= 2; cb /= 2)
        if (groups_blocks(plan, blocks, cb) && blocks / cb >= 2 * units &&
            cb * plan.k_tile * row_bytes <= cache.col_blocks()) {
          plan.col_blocks = static_cast<int>(cb);
          break;
        }
    }
  }
  return plan;
}

UOpRef panel_offset(const UOpRef& off, int64_t rows, const PanelPacking& p) {
  const UOpRef r = off / p.row, c = off % p.row;
  if (p.by_rows) return simplify(r / p.panel * (p.row * p.panel) + c * p.panel + r % p.panel);
  return simplify(c / p.panel * (rows * p.panel) + r * p.panel + c % p.panel);
}

UOpRef read_from_panels(const UOpRef& sink, int64_t rows, const PanelPacking& p) {
  std::unordered_map<const UOp*, UOpRef> subs;
  for (const UOp* u : toposort(sink))
    if (u->op() == Op::INDEX && u->src(0)->op() == Op::DEFINE_GLOBAL &&
        u->src(0)->arg_int() == p.slot) {
      std::vector<UOpRef> srcs(u->srcs().begin(), u->srcs().end());
      srcs[1] = panel_offset(srcs[1], rows, p);
      subs.emplace(u, UOp::make(Op::INDEX, u->dtype(), srcs));
    }
  return substitute(sink, subs);
}

namespace {

/// An input buffer's load of a matmul-shaped kernel: its slot, element size, and the strides
/// of its offset along the output columns j and the reduce range k (nullopt: not affine).
struct Operand {
  int64_t slot = 0, elem = 0;
  std::optional<int64_t> cj, ck;
};

/// The operands of the kernel whose nodes are `order`: every ungated INDEX of an input slot.
std::vector<Operand> operands(const std::vector<const UOp*>& order, const UOp* j, const UOp* k) {
  std::vector<Operand> out;
  for (const UOp* u : order) {
    if (u->op() != Op::INDEX || u->nsrcs() != 2 || u->src(0)->op() != Op::DEFINE_GLOBAL ||
        u->src(0)->arg_int() == 0)
      continue;
    const int64_t elem = u->src(0)->dtype().base().scalar_size();
    if (elem <= 0) continue;
    out.push_back({u->src(0)->arg_int(), elem, coefficient(u->src(1).get(), j),
                   coefficient(u->src(1).get(), k)});
  }
  return out;
}

/// The vector form's panels for a kernel in the dot form whose b is read k-major (a @ b.T):
/// panels of P rows of b, each stored k-major, turn b's loads into P consecutive columns per
/// k step, and the kernel into the vector form with its k slices and column blocks (the dot
/// form has no cache blocking: 1024^3 ran at 130 GFLOP/s). Checked by planning the packed
/// kernel: it must take the vector form with column blocks of P.
std::optional<PanelPacking> rows_in_panels(const UOpRef& sink, const Target& target,
                                           const UpcastPlan& plan) {
  const UOp* k = plan.dot_k;
  const int64_t ej = plan.j->src(0)->op() == Op::CONST ? plan.j->src(0)->arg_int() : 0;
  if (plan.i == nullptr || ej == 0 || plan.dot_ks.size() != 1) return std::nullopt;
  // Columns the width does not divide (1023): one panel of all of b's rows, b transposed, which
  // the vector form takes in a tail plan (a moved-back vector stays within its row). On a
  // Sapphire Rapids host (1023, 1023) @ (1023, 1023).T: 36 -> 13 ms, the copy 1.2 of them.
  const bool whole = ej % plan.lanes != 0;
  const int64_t panel = whole ? ej : column_vectors(ej, plan.lanes) * plan.lanes;
  for (const Operand& o : operands(toposort(sink), plan.j, k)) {
    if (o.ck != 1 || !o.cj || *o.cj <= 0) continue;
    if (ej * *o.cj * o.elem <= CacheBudget(target).whole_b()) continue;
    // (A whole transpose is a plain copy kernel, which reads b a row apart per element: beyond
    // 16 MiB it cost more than it saved, (256, 768) @ (10001, 768).T: 20 -> 70 ms.)
    if (whole && ej * *o.cj * o.elem > kMaxTransposeBytes) continue;
    const PanelPacking p{o.slot, *o.cj, panel, true};
    // (Panels of rows need no row count. The scheduler checks that the buffer holds whole
    // panels; P divides the columns, so a batch's rows never share a panel with another's.)
    const UpcastPlan q = choose_upcast(read_from_panels(sink, 0, p), target);
    if (q.j != plan.j || q.dot_k != nullptr ||
        (whole ? !q.tail : int64_t{q.vectors} * q.lanes != panel))
      return std::nullopt;
    return p;
  }
  return std::nullopt;
}

}  // namespace

std::optional<PanelPacking> panel_packing(const UOpRef& sink, const Target& target, int64_t rows) {
  constexpr int64_t kMinRows = 64, kSetConflictBytes = 512, kShortBlockBytes = 128;
  if (target.caps.max_threads_per_group > 1 || rows < kMinRows) return std::nullopt;
  const UpcastPlan plan = choose_upcast(sink, target);
  if (plan.j == nullptr) return std::nullopt;
  if (plan.dot_k != nullptr) return rows_in_panels(sink, target, plan);
  const std::vector<const UOp*> order = toposort(sink);
  const UOp* k = nullptr;
  for (const UOp* u : order)
    if (u->op() == Op::REDUCE) {
      if (u->nsrcs() != 2 || k != nullptr) return std::nullopt;
      k = u->src(1).get();
    }
  if (k == nullptr || k->src(0)->op() != Op::CONST) return std::nullopt;
  const int64_t ek = k->src(0)->arg_int();
  const int64_t panel = int64_t{plan.vectors} * plan.lanes;
  for (const Operand& o : operands(order, plan.j, k)) {
    if (o.cj != 1 || !o.ck || *o.ck <= 0 || *o.ck % panel != 0) continue;
    if (ek * *o.ck * o.elem <= CacheBudget(target).whole_b()) continue;
    const bool conflicts = *o.ck * o.elem % kSetConflictBytes == 0;
    if (!conflicts && panel * o.elem > kShortBlockBytes) continue;
    return PanelPacking{o.slot, *o.ck, panel, false};
  }
  return std::nullopt;
}

bool vectorizes_along(const UOpRef& sink, const UOp* r) {
  return vectorizable(sink, r, 1);
}

UOpRef apply_upcast(const UOpRef& sink, const UpcastPlan& plan) {
  if (plan.j == nullptr) return sink;
  if (plan.dot_k != nullptr) return apply_dot(sink, plan);
  const int64_t width = int64_t{plan.lanes} * plan.vectors;
  // Loop ids order the output loops (outermost first); k tiling puts j' outermost, then k0,
  // i' and the column blocks jc: j = (j' * CB + jc) * V * W + v * W + lane.
  int64_t id_j = plan.j->arg_int(), id_i = plan.i != nullptr ? plan.i->arg_int() : 0, id_k0 = 0;
  int64_t id_jc = 0;
  if (plan.k != nullptr) {
    const int64_t top = top_range_id(sink);
    id_j = top + 1;
    id_k0 = top + 2;
    id_i = top + 3;
    id_jc = top + 4;
  }
  const int64_t cb = plan.col_blocks;
  const int64_t ej = plan.j->src(0)->arg_int();
  UOpRef jn = range(const_int(dtypes::index, ceil_div(ceil_div(ej, width), cb)), id_j);
  if (cb > 1) jn = jn * cb + range(const_int(dtypes::index, cb), id_jc);
  const RangeSplit is = plan.i != nullptr ? RangeSplit(plan.i, plan.rows, id_i) : RangeSplit();
  std::vector<UOpRef> stores, gates;  // gates apply after k tiling rebuilds the stores
  std::vector<UOpRef> starts;         // tail plans: each vector's first column
  for (const UOpRef& st : sink->srcs()) {
    for (int r = 0; r < plan.rows; ++r) {
      const UOpRef row = is.copy(st, r);
      for (int v = 0; v < plan.vectors; ++v) {
        const UOpRef start = jn * width + int64_t{v} * plan.lanes;
        const UOpRef last = const_int(dtypes::index, ej - plan.lanes);
        Vectorizer vec(plan.j, plan.tail ? where(lt(start, last + 1), start, last) : start,
                       plan.lanes);
        stores.push_back(vec.run(row));
        gates.push_back(is.gate(r));
        starts.push_back(start);
      }
    }
  }
  if (plan.k != nullptr && plan.k_tile > 0) {
    const int64_t ek = plan.k->src(0)->arg_int();
    // One k range sliced (k -> k0 * KT + k1), or the outer of two as k0 and the inner as k1.
    // A last slice shorter than KT (KT does not divide k) runs the k slices' remainder.
    const int64_t slices = ceil_div(ek, plan.k_tile), last = ek - (slices - 1) * plan.k_tile;
    const UOpRef k0 = plan.k_outer != nullptr ? range(plan.k_outer->src(0), id_k0)
                                              : range(const_int(dtypes::index, slices), id_k0);
    UOpRef k1_end = const_int(dtypes::index, plan.k_tile);
    if (plan.k_outer == nullptr && last != plan.k_tile)
      k1_end = where(lt(k0, const_int(dtypes::index, slices - 1)), k1_end,
                     const_int(dtypes::index, last));
    const UOpRef k1 = range(k1_end, plan.k->arg_int());
    const UOpRef k = plan.k_outer != nullptr ? k1 : k0 * plan.k_tile + k1;
    for (UOpRef& st : stores) {
      std::optional<AffineInReduce> f = affine_in_reduce(st->src(1));
      if (!f) ir_error("codegen: k tiling lost the a + b * sum form of a store");
      const UOp* red = f->reduce;
      UOpRef body = substitute_range(red->src(0), plan.k, k);
      if (plan.k_outer != nullptr) body = substitute_range(body, plan.k_outer, k0);
      st = slice_store(st, *f, UOp::make(Op::REDUCE, red->dtype(), {body, k1}, red->arg()), k0);
    }
  }
  if (!plan.tail) {
    for (size_t s = 0; s < stores.size(); ++s) stores[s] = gated_store(stores[s], gates[s]);
    return UOp::make(Op::SINK, sink->dtype(), stores, sink->arg());
  }
  // A tail plan's vector that starts within W of the end (or past it) was moved back to
  // ej - W: its lanes before `start` belong to the vector before it, written by that one (in
  // another block, maybe on another thread, maybe in place or as a k slice's partial sum), so
  // it stores lane by lane only the lanes from `start` on, and nothing when start >= ej.
  std::vector<UOpRef> out;
  const UOpRef last = const_int(dtypes::index, ej - plan.lanes);
  for (size_t s = 0; s < stores.size(); ++s) {
    const UOpRef& st = stores[s];
    const UOpRef moved = lt(last, starts[s]);
    out.push_back(gated_store(st, both(gates[s], lt(starts[s], last + 1))));
    const UOpRef& idx = st->src(0);
    const DType t = st->src(1)->dtype().scalar_type();
    for (int l = 1; l < plan.lanes; ++l) {
      const UOpRef at = UOp::make(Op::INDEX, idx->dtype(), {idx->src(0), idx->src(1) + l});
      const UOpRef value = UOp::make(Op::GEP, t, {st->src(1)}, std::vector<int64_t>{l});
      const UOpRef mine = both(moved, lt(starts[s], last + (l + 1)));
      out.push_back(
          gated_store(UOp::make(Op::STORE, st->dtype(), {at, value}), both(gates[s], mine)));
    }
  }
  return UOp::make(Op::SINK, sink->dtype(), out, sink->arg());
}

}  // namespace polygrad::codegen
