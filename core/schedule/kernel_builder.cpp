// Indexing the tensor-level graph into one kernel's AST.
#include "schedule/kernel_builder.hpp"

#include "codegen/rebuild.hpp"
#include "ir/error.hpp"
#include "ir/graph.hpp"
#include "schedule/kernel_index.hpp"
#include "schedule/scheduler.hpp"
#include "schedule/symbolic_sizes.hpp"
#include "symbolic/simplify.hpp"

#include <polygrad/error.hpp>

#include <algorithm>
#include <climits>
#include <unordered_set>

namespace polygrad::schedule {

namespace {

/// Row-major strides of a contiguous shape.
std::vector<int64_t> strides_of(const lazy::Shape& s) {
  std::vector<int64_t> st(s.size(), 1);
  for (size_t i = s.size(); i-- > 1;) st[i - 1] = st[i] * s[i];
  return st;
}

/// The flat offset of `idx` in a contiguous `shape`.
UOpRef flat_offset(const lazy::Shape& shape, const std::vector<UOpRef>& idx) {
  std::vector<int64_t> st = strides_of(shape);
  UOpRef off = idx_const(0);
  for (size_t i = 0; i < idx.size(); ++i)
    if (shape[i] != 1) off = off + idx[i] * st[i];
  return off;
}

UOpRef and_gate(const UOpRef& a, const UOpRef& b) {
  if (!a) return b;
  if (!b) return a;
  return alu(Op::AND, {a, b});
}

std::vector<UOpRef> reshape_index(const lazy::Shape& in, const lazy::Shape& out,
                                  const std::vector<UOpRef>& idx);

/// The index into a permute's source of its element at `idx`.
std::vector<UOpRef> permute_index(const std::vector<int64_t>& order,
                                  const std::vector<UOpRef>& idx) {
  std::vector<UOpRef> x(idx.size());
  for (size_t i = 0; i < order.size(); ++i) x[static_cast<size_t>(order[i])] = idx[i];
  return x;
}

/// The index into a flip's source (shape `in`) of its element at `idx`.
std::vector<UOpRef> flip_index(const lazy::Shape& in, const std::vector<int64_t>& axes,
                               std::vector<UOpRef> idx) {
  for (int64_t a : axes) {
    const auto j = static_cast<size_t>(a);
    idx[j] = simplify(idx_const(in[j] - 1) - idx[j]);
  }
  return idx;
}
}  // namespace

UOpRef KernelBuilder::new_range(int64_t extent) {
  return range(idx_const(extent), next_range_++);
}

UOpRef KernelBuilder::global(const UOpRef& buffer) {
  auto [it, fresh] = slots_.try_emplace(buffer.get(), buffers_.size());
  if (fresh) buffers_.push_back(buffer);
  return UOp::make(Op::DEFINE_GLOBAL, buffer->dtype().ptr(AddrSpace::global), {},
                   static_cast<int64_t>(it->second));
}

UOpRef KernelBuilder::build(const UOp* node, const lazy::Shape& shape, const UOpRef& out) {
  root_ = node;
  UOpRef out_ptr = global(out);
  std::vector<UOpRef> idx;
  for (int64_t d : shape) {
    if (d == 1) {
      idx.push_back(idx_const(0));
    } else {
      idx.push_back(new_range(d));
      out_ranges_.push_back(idx.back());
    }
  }
  nest_ = out_ranges_;
  count_paths(node);
  UOpRef value = index(node, idx, {});
  // (A reduce root counts as computed here: a long reduce that one kernel realises and another
  // fuses, a weight gradient summed over an RNN's time steps, covers the values inside it,
  // which are then not realised on their own.)
  if (node->op() == Op::REDUCE_AXIS && ops(node) > kCostlyOps) inlined_.insert(node);
  owner_.note_inlined(inlined_);
  UOpRef off = simplify(store_view_ ? store_offset(idx) : flat_offset(shape, idx));
  UOpRef store = UOp::make(Op::STORE, dtypes::void_,
                           {UOp::make(Op::INDEX, out_ptr->dtype(), {out_ptr, off}), value});
  UOpRef sink = merge_leading_ranges(UOp::make(Op::SINK, dtypes::void_, {store}),
                                     !shape.empty() && shape.back() == 1);
  if (!symbolic_outer_ || out_ranges_.empty()) return sink;
  // The index math was simplified knowing the outer range's constant extent (a reshape's
  // `% batch` drops out), so the kernel no longer mentions the batch size unless it must (a
  // transposed read's stride); then the range runs to the variable. The variable is bound to
  // this extent whenever this AST runs, so the simplifications stay valid.
  // Its largest value keeps the offsets within int32 (GPU kernels index in 32 bits).
  const UOpRef& outer = out_ranges_.front();
  outer_extent_ = outer->src(0)->arg_int();
  const int64_t most = int32_extent_limit(sink, outer.get(), outer_extent_);
  outer_range_ = range(define_var("n0", 1, most), outer->arg_int());
  return substitute(sink, {{outer.get(), outer_range_}});
}

UOpRef KernelBuilder::store_offset(std::vector<UOpRef> idx) {
  lazy::ShapeOf& shape = owner_.shape();
  const UOp* u = store_view_;
  for (; !lazy::is_realized(u); u = u->src(0).get()) {
    const lazy::Shape& in = shape(u->src(0));
    switch (u->op()) {
      case Op::RESHAPE:
        idx = reshape_index(in, shape(u), idx);
        break;
      case Op::SHRINK: {
        const std::vector<int64_t> v = lazy::int_srcs(u, 1);
        for (size_t j = 0; j < idx.size(); ++j) idx[j] = simplify(idx[j] + v[2 * j]);
        break;
      }
      case Op::PERMUTE:
        idx = permute_index(u->arg_ints(), idx);
        break;
      case Op::FLIP:
        idx = flip_index(in, u->arg_ints(), std::move(idx));
        break;
      default:  // (Scheduler::check_writable_view has ruled the others out)
        internal_error("schedule: cannot store through " + node_to_string(*u));
    }
  }
  return flat_offset(shape(u), idx);
}

UOpRef KernelBuilder::merge_leading_ranges(const UOpRef& sink, bool all) {
  const size_t m = out_ranges_.size();
  if (m == 0) return sink;
  UOpRef merged = merge_ranges(sink, 0, all ? m : m - 1);
  // Then the inner ranges after the first, the most of them that merge: a weight gradient's
  // (cin, kh, kw) walked as one axis of cin*kh*kw columns, which the codegen can vectorise.
  for (size_t first = 1; first + 1 < out_ranges_.size(); ++first) {
    const size_t before = out_ranges_.size();
    merged = merge_ranges(merged, first, before);
    if (out_ranges_.size() != before) break;
  }
  return merged;
}

UOpRef KernelBuilder::merge_ranges(const UOpRef& sink, size_t first, size_t end) {
  if (end - first < 2) return sink;
  int64_t total = 1;
  for (size_t i = first; i < end; ++i) total *= out_ranges_[i]->src(0)->arg_int();
  const UOpRef merged_range = range(idx_const(total), out_ranges_[first]->arg_int());
  std::unordered_map<const UOp*, UOpRef> subs;
  int64_t below = 1;
  for (size_t i = end; i-- > first;) {
    const int64_t e = out_ranges_[i]->src(0)->arg_int();
    subs.emplace(out_ranges_[i].get(),
                 i == first ? merged_range / below : merged_range / below % e);
    below *= e;
  }
  UOpRef merged = codegen::simplify_indexing(substitute(sink, subs));
  // Clean when no index divides or takes a remainder of the merged range: every load walks
  // the axes as one (a per-batch operand, a pad along an inner axis would not).
  std::unordered_set<const UOp*> uses{merged_range.get()};
  for (const UOp* u : toposort(merged)) {
    bool dep = false;
    for (const UOpRef& src : u->srcs()) dep = dep || uses.count(src.get()) > 0;
    if (!dep) continue;
    if (u->op() == Op::IDIV || u->op() == Op::MOD) return sink;
    uses.insert(u);
  }
  std::vector<UOpRef> kept(out_ranges_.begin(),
                           out_ranges_.begin() + static_cast<std::ptrdiff_t>(first));
  kept.push_back(merged_range);
  kept.insert(kept.end(), out_ranges_.begin() + static_cast<std::ptrdiff_t>(end),
              out_ranges_.end());
  out_ranges_ = std::move(kept);
  return merged;
}

UOpRef KernelBuilder::index(const UOp* node, const std::vector<UOpRef>& idx, const UOpRef& gate) {
  std::vector<const UOp*> key{node, gate.get()};
  for (const UOpRef& i : idx) key.push_back(i.get());
  auto it = memo_.find(key);
  if (it != memo_.end()) return it->second;
  UOpRef v = index_uncached(node, idx, gate);
  // The key holds raw pointers: keep its nodes alive, or a freed index node's address could be
  // reused by another node and hit this entry (or, not reused, miss it: a reduce built twice).
  if (gate) keep_.push_back(gate);
  keep_.insert(keep_.end(), idx.begin(), idx.end());
  memo_.emplace(std::move(key), v);
  return v;
}

namespace {

// The bounds that the clauses of `gate` (an AND of comparisons) put on a range r, from clauses
// c < r + k and r + k < c (k 0 or a constant).
void gate_bounds(const UOp* gate, std::map<const UOp*, std::pair<int64_t, int64_t>>& span) {
  if (gate->op() == Op::AND) {
    gate_bounds(gate->src(0).get(), span);
    gate_bounds(gate->src(1).get(), span);
    return;
  }
  if (gate->op() != Op::CMPLT) return;
  auto as_range = [](const UOp* e, int64_t& k) -> const UOp* {
    k = 0;
    if (e->op() == Op::ADD && e->src(1)->op() == Op::CONST) {
      k = e->src(1)->arg_int();
      e = e->src(0).get();
    }
    return e->op() == Op::RANGE && e->src(0)->op() == Op::CONST ? e : nullptr;
  };
  const UOp *a = gate->src(0).get(), *b = gate->src(1).get();
  int64_t k = 0;
  if (a->op() == Op::CONST && std::holds_alternative<int64_t>(a->arg())) {
    if (const UOp* r = as_range(b, k)) {  // c < r + k: r >= c - k + 1
      auto [it, fresh] = span.try_emplace(r, 0, r->src(0)->arg_int() - 1);
      it->second.first = std::max(it->second.first, a->arg_int() - k + 1);
    }
  } else if (b->op() == Op::CONST && std::holds_alternative<int64_t>(b->arg())) {
    if (const UOp* r = as_range(a, k)) {  // r + k < c: r <= c - k - 1
      auto [it, fresh] = span.try_emplace(r, 0, r->src(0)->arg_int() - 1);
      it->second.second = std::min(it->second.second, b->arg_int() - k - 1);
    }
  }
}

// `off` simplified where `gate` holds: a padded view's index, negative outside its gate, then
// folds its divisions and remainders (a convolution's column gradient summed back over the
// padded input) as it would unpadded.
UOpRef offset_given(const UOpRef& off, const UOpRef& gate) {
  std::map<const UOp*, std::pair<int64_t, int64_t>> span;
  gate_bounds(gate.get(), span);
  std::unordered_map<const UOp*, UOpRef> narrow, back;
  for (const auto& [r, b] : span) {
    if (b.first > b.second || (b.first == 0 && b.second == r->src(0)->arg_int() - 1)) continue;
    UOpRef v = define_var("pg_gated" + std::to_string(r->arg_int()), b.first, b.second, r->dtype());
    narrow.emplace(r, v);
    back.emplace(v.get(), r->ref());
  }
  if (narrow.empty()) return off;
  return substitute(simplify(substitute(off, narrow)), back);
}

// The index into a reshape's source (shape `in`) of its element at `idx` (shape `out`).
std::vector<UOpRef> reshape_index(const lazy::Shape& in, const lazy::Shape& out,
                                  const std::vector<UOpRef>& idx) {
  // Axis groups whose sizes multiply to the same (a split of one axis, a merge of several)
  // are flattened and unflattened on their own, so the index math of one group never mixes
  // in another's: a strided view's (oy * s, ox * s) -> (oy, s, ox, s) divides y by s and x
  // by s, not a flat y * ox * s + x by s * ox * s.
  std::vector<UOpRef> x;
  size_t i = 0, j = 0;
  while (i < in.size() || j < out.size()) {
    const size_t i0 = i, j0 = j;
    int64_t pi = 1, pj = 1;
    do {
      if (j >= out.size() || (i < in.size() && pi <= pj))
        pi *= in[i++];
      else
        pj *= out[j++];
    } while (pi != pj && (i < in.size() || j < out.size()));
    // (trailing size-1 axes join the group before them)
    while (i < in.size() && in[i] == 1 && (j == out.size() || out[j] != 1)) ++i;
    while (j < out.size() && out[j] == 1 && (i == in.size() || in[i] != 1)) ++j;
    const lazy::Shape gout(out.begin() + static_cast<std::ptrdiff_t>(j0),
                           out.begin() + static_cast<std::ptrdiff_t>(j));
    const lazy::Shape gin(in.begin() + static_cast<std::ptrdiff_t>(i0),
                          in.begin() + static_cast<std::ptrdiff_t>(i));
    const UOpRef flat = simplify(
        flat_offset(gout, std::vector<UOpRef>(idx.begin() + static_cast<std::ptrdiff_t>(j0),
                                              idx.begin() + static_cast<std::ptrdiff_t>(j))));
    const std::vector<int64_t> st = strides_of(gin);
    // (An empty input is never read: its index is 0, not a division by its zero extent or
    // stride, which a kernel program may not hold.)
    for (size_t k = 0; k < gin.size(); ++k)
      x.push_back(gin[k] == 1 || gin[k] == 0 || st[k] == 0 ? idx_const(0)
                                                           : simplify((flat / st[k]) % gin[k]));
  }
  return x;
}

}  // namespace

UOpRef KernelBuilder::load(const UOpRef& buffer, const lazy::Shape& shape,
                           const std::vector<UOpRef>& idx, const UOpRef& gate) {
  if (owner_.ctx().buffer_device(buffer.get()) != device_)
    user_error("realize: a tensor on " + owner_.ctx().buffer_device(buffer.get()) +
               " is used in a computation on " + device_ + "; move it with to(\"" + device_ +
               "\") first");
  UOpRef ptr = global(buffer);
  UOpRef at = UOp::make(Op::INDEX, ptr->dtype(), {ptr, simplify(flat_offset(shape, idx))});
  DType t = buffer->dtype();
  if (!gate) return UOp::make(Op::LOAD, t, {at});
  const UOpRef g = simplify(gate);
  at = UOp::make(Op::INDEX, ptr->dtype(), {ptr, offset_given(at->src(1), g)});
  return UOp::make(Op::LOAD, t, {at, lazy::scalar(t, 0), g});
}

UOpRef KernelBuilder::load_realized(const UOp* node, const std::vector<UOpRef>& idx,
                                    const UOpRef& gate) {
  std::optional<size_t> item;
  UOpRef view = owner_.realize(node, item, false);
  if (item) deps_.insert(*item);
  if (node->op() == Op::ASSIGN) version_reads_.insert(lazy::assigned_buffer_id(node));
  const lazy::Shape& shape = owner_.shape()(node);
  return load(view->src(0), shape, idx, gate);
}

UOpRef KernelBuilder::load_realized_in_walk_order(const UOp* node, const std::vector<UOpRef>& idx,
                                                  const UOpRef& gate) {
  // Each axis's place in the walk: its output range's position (size-1 axes first).
  std::vector<int64_t> key(idx.size(), -1);
  for (size_t a = 0; a < idx.size(); ++a) {
    auto at = std::find(out_ranges_.begin(), out_ranges_.end(), idx[a]);
    if (at != out_ranges_.end())
      key[a] = at - out_ranges_.begin();
    else if (!is_zero_const(idx[a].get()))
      return load_realized(node, idx, gate);
  }
  std::vector<int64_t> order(idx.size());
  for (size_t a = 0; a < order.size(); ++a) order[a] = static_cast<int64_t>(a);
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
    return key[static_cast<size_t>(a)] < key[static_cast<size_t>(b)];
  });
  if (std::is_sorted(order.begin(), order.end())) return load_realized(node, idx, gate);
  const UOpRef view = lazy::permute(node->ref(), order);
  owner_.keep(view);
  std::vector<UOpRef> at;
  for (int64_t a : order) at.push_back(idx[static_cast<size_t>(a)]);
  return load_realized(view.get(), at, gate);
}

UOpRef KernelBuilder::index_uncached(const UOp* node, const std::vector<UOpRef>& idx,
                                     const UOpRef& gate) {
  lazy::ShapeOf& shape = owner_.shape();
  // A node an earlier kernel of this schedule already computed is read, not recomputed (the
  // backward pass reuses the forward's activations this way).
  if (node != root_ && node->nsrcs() > 0 && !lazy::is_realized(node) && owner_.is_realized(node))
    return load_realized(node, idx, gate);
  switch (node->op()) {
    case Op::BUFFER:
    case Op::RESHAPE:
      if (lazy::is_realized(node)) {
        const UOp* buf = lazy::realized_buffer(node);
        old_reads_.insert(lazy::buffer_id(buf));
        return load(buf->ref(), shape(node), idx, gate);
      }
      break;
    case Op::CONST:
      return node->ref();
    case Op::IOTA:  // the value is its index
      return idx[0]->dtype() == node->dtype() ? idx[0]
                                              : UOp::make(Op::CAST, node->dtype(), {idx[0]});
    case Op::CONTIGUOUS:
    case Op::COPY:
    case Op::ASSIGN:
      if (node != root_) return load_realized(node, idx, gate);
      if (node->op() == Op::CONTIGUOUS) return index(node->src(0).get(), idx, gate);
      break;
    case Op::DETACH:
      return index(node->src(0).get(), idx, gate);
    case Op::REDUCE_AXIS:
      return reduce(node, idx, gate);
    default:
      break;
  }
  if (node->op() == Op::RESHAPE) {
    const lazy::Shape& in = shape(node->src(0));
    const lazy::Shape& out = shape(node);
    if (in == out) return index(node->src(0).get(), idx, gate);
    return index(node->src(0).get(), reshape_index(in, out, idx), gate);
  }
  if (node->op() == Op::EXPAND) {
    const lazy::Shape& in = shape(node->src(0));
    std::vector<UOpRef> x;
    for (size_t j = 0; j < in.size(); ++j) x.push_back(in[j] == 1 ? idx_const(0) : idx[j]);
    return index(node->src(0).get(), x, gate);
  }
  if (node->op() == Op::PERMUTE) {
    if (node != root_ && transposed_operand(node, idx)) return load_realized(node, idx, gate);
    return index(node->src(0).get(), permute_index(node->arg_ints(), idx), gate);
  }
  if (node->op() == Op::SHRINK || node->op() == Op::PAD) {
    const lazy::Shape& in = shape(node->src(0));
    std::vector<int64_t> v = lazy::int_srcs(node, 1);
    std::vector<UOpRef> x;
    UOpRef valid;
    for (size_t j = 0; j < in.size(); ++j) {
      if (node->op() == Op::SHRINK) {
        x.push_back(simplify(idx[j] + v[2 * j]));
        continue;
      }
      if (v[2 * j] == 0 && v[2 * j + 1] == 0) {
        x.push_back(idx[j]);
        continue;
      }
      x.push_back(simplify(idx[j] - v[2 * j]));
      UOpRef ok = alu(Op::AND, {alu(Op::CMPLT, {idx[j], idx_const(v[2 * j] + in[j])}),
                                alu(Op::CMPLT, {idx_const(v[2 * j] - 1), idx[j]})});
      valid = and_gate(valid, ok);
    }
    if (!valid) return index(node->src(0).get(), x, gate);
    valid = simplify(valid);
    UOpRef inner = index(node->src(0).get(), x, and_gate(gate, valid));
    return where(valid, inner, lazy::scalar(node->dtype(), 0));
  }
  if (node->op() == Op::FLIP)
    return index(node->src(0).get(), flip_index(shape(node->src(0)), node->arg_ints(), idx), gate);
  if (is_alu(node->op()) || node->op() == Op::CAST || node->op() == Op::BITCAST) {
    if (recomputed(node, idx)) return load_realized(node, idx, gate);
    // A long computation of several padded pieces summed by a reduce that other users need
    // too (a convolution's input gradient, nine pieces, feeding a batch norm's two sums and its
    // input gradient) would gather its pieces again in every kernel that reads it: realised
    // once instead. (Not arithmetic alone: a GELU's gradient, feeding a bias gradient's sum and
    // two matmuls, is cheaper recomputed than written and read back: a transformer step 28.8
    // -> 24.4 ms. Nor softmax's exp(x - max), which stays fused into its sum and its output.)
    if (node != root_ && reduce_depth_ > 0 && ops(node) > kCostlyOps && gathers(node) >= kGathers &&
        owner_.users(node) >= 2)
      return load_realized(node, idx, gate);
    // ...and one that other kernels of this schedule compute too (a batch norm's input
    // gradient, built from that convolution gradient, besides its sums' kernels).
    if (node != root_ && ops(node) > kCostlyOps && owner_.realise_first(node))
      return load_realized(node, idx, gate);
    if (node != root_ && ops(node) > kCostlyOps) inlined_.insert(node);
    std::vector<UOpRef> srcs;
    for (const UOpRef& s : node->srcs()) srcs.push_back(index(s.get(), idx, gate));
    return UOp::make(node->op(), node->dtype(), srcs, node->arg());
  }
  // A pending assign read as a value (b.assign(a) while a's own assign is pending, a swap):
  // the write runs first, as a kernel of its own, and this one reads its target.
  if (node->op() == Op::ASSIGN) return load_realized(node, idx, gate);
  internal_error("schedule: cannot index " + node_to_string(*node));
}

// Whether the value of `node` (an elementwise op), read at `idx`, is worth realising once
// rather than recomputing where the codegen places it: in an inner loop, for every element of a
// range it does not depend on (not hoistable), or once per position of a window (an index that
// divides a range).
bool KernelBuilder::recomputed(const UOp* node, const std::vector<UOpRef>& idx) {
  if (node == root_) return false;
  const bool inner = !hoistable(ranges_of(idx));
  // A costly value (a broadcast operand of a matmul, such as the logits' gradient in an MLP's
  // backward pass).
  if (costly(node)) return inner || divides_a_range(idx);
  if (!inner || reduce_depth_ == 0) return false;
  // A cheap one that reads several buffers in a reduce's inner loop: a transformer's output
  // gradient, 2/n times the residual stream's five terms, as a matmul operand was read again
  // for every column block (15 GFLOP/s for a 512 x 256 x 1024 matmul).
  if (reads(node) >= kRecomputedReads) return true;
  // In a large contraction, any arithmetic operand (a ReLU's output, a scaled input): each
  // value the tile broadcasts then costs a load, an op and a register broadcast instead of one
  // broadcast load (512 x 256 x 1000 with relu(a): 3.5 ms, 1.9 ms from a buffer; the realising
  // kernel 0.05 ms). Small ones stay fused: there the extra kernel costs more.
  return product_macs_ >= kRealisedOperandMacs && node->op() != Op::CAST &&
         node->op() != Op::BITCAST && reads(node) >= 1;
}

// A batched permuted view read as a product's operand (in a matmul's reduce) whose last axis
// the kernel's innermost output range walks, while its source's last (contiguous) axis is
// walked by a reduce range: read in place, the operand is strided along the columns the
// codegen vectorises, so the kernel falls back to scalar dot products. A token-mixing MLP's
// weight gradient, whose upstream gradient is a transposed (batch, positions, channels)
// buffer: 45 ms for 33M multiply-adds. Realised once as a contiguous copy of the view instead.
// (A 2-D transpose, x @ w.T, keeps its panel copies: see codegen::panel_packing.)
bool KernelBuilder::transposed_operand(const UOp* view, const std::vector<UOpRef>& idx) const {
  const auto& order = view->arg_ints();
  const size_t n = order.size();
  if (product_macs_ == 0 || n < 3 || out_ranges_.empty() || idx.size() != n ||
      idx.back().get() != out_ranges_.back().get() || order.back() == static_cast<int64_t>(n - 1))
    return false;
  for (size_t a = 0; a < n; ++a)
    if (order[a] == static_cast<int64_t>(n - 1)) {
      std::set<const UOp*> walks;  // reduce ranges only (r % c of a merged batch included)
      ranges_in(idx[a], walks);
      for (const UOpRef& o : out_ranges_)
        if (walks.count(o.get())) return false;
      return !walks.empty();
    }
  return false;
}

// The length of the longest prefix of the loop nest whose ranges are all in `deps`.
size_t KernelBuilder::nest_prefix(const std::set<const UOp*>& deps) const {
  size_t m = 0;
  while (m < nest_.size() && deps.count(nest_[m].get())) ++m;
  return m;
}

// A value whose index depends on a prefix of the loop nest is computed once per iteration of
// that prefix (the codegen places it in the innermost loop it uses); any other dependency puts
// it in an inner loop that recomputes it for every value of a range it does not use.
bool KernelBuilder::hoistable(const std::set<const UOp*>& deps) const {
  return nest_prefix(deps) == deps.size();
}

// A reduce is fused when hoistable. With no dependency at all it would be recomputed by every
// point of the launch grid, so it is realised then too, unless the kernel has no outputs, or
// its outputs are one vector small enough for one launch step: one output range, at most
// kSerialTerms reduced elements, and kSerialWork outputs times the terms a reduce inside the
// kernel sums per output. The codegen then opens no launch range over the outputs on a CPU
// (linearize.cpp) and runs the reduce once, before their loop; on a target with groups the
// kernel is one group whose threads share the reduce and the outputs (group/plan.hpp). A single
// row's softmax, layernorm or cross-entropy (a vector, or a batch of one) thus takes one
// kernel, not three; a matmul beside a full sum keeps its own parallel kernel. (Outputs of two
// or more ranges, a batch of rows among them, keep the reduce realised at every batch size:
// a decision that changed with the batch would compile a kernel per side of the threshold.)
bool KernelBuilder::can_fuse_reduce(const std::set<const UOp*>& deps, const UOp* node) {
  constexpr int64_t kSerialTerms = 16384, kSerialWork = 16384;
  if (!hoistable(deps)) return false;
  if (!deps.empty() || out_ranges_.empty()) return true;
  if (out_ranges_.size() != 1 || !owner_.ctx().target ||
      lazy::numel(owner_.shape()(node->src(0))) > kSerialTerms)
    return false;
  int64_t work = terms_per_element(root_);
  for (const UOpRef& r : out_ranges_) work *= r->src(0)->arg_int();
  return work <= kSerialWork;
}

// Nodes the kernel reads rather than inlines.
bool KernelBuilder::inlined_leaf(const UOp* node) const {
  return node != root_ &&
         (node->nsrcs() == 0 || lazy::is_realized(node) || owner_.is_realized(node) ||
          node->op() == Op::CONTIGUOUS || node->op() == Op::COPY || node->op() == Op::ASSIGN);
}

void KernelBuilder::count_paths(const UOp* root) {
  std::vector<const UOp*> order;  // post-order: sources before users
  std::unordered_map<const UOp*, bool> seen;
  std::vector<std::pair<const UOp*, size_t>> stack{{root, 0}};
  seen[root] = true;
  while (!stack.empty()) {
    auto& [n, i] = stack.back();
    if (!inlined_leaf(n) && i < n->nsrcs()) {
      const UOp* s = n->src(i++).get();
      if (!seen[s]) {
        seen[s] = true;
        stack.emplace_back(s, 0);
      }
      continue;
    }
    order.push_back(n);
    stack.pop_back();
  }
  constexpr int64_t kCap = int64_t{1} << 40;
  paths_[root] = 1;
  // views_: how many different indexings of each node the kernel needs (counted up to 2).
  // An indexing is named by the views that moved the index on the way down from the root
  // (elementwise ops, a broadcast of a keepdim reduce and reshapes that only add or drop 1s
  // keep it), so x * x or two users of a softmax's max share one, and the four window
  // offsets of a max pool's gradient read their input's gradient through four.
  std::unordered_map<const UOp*, std::vector<uint64_t>> names{{root, {0}}};
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    const UOp* n = *it;
    if (inlined_leaf(n)) continue;
    const int64_t p = paths_[n];
    for (const UOpRef& s : n->srcs()) paths_[s.get()] = std::min(kCap, paths_[s.get()] + p);
    const std::vector<uint64_t>& mine = names[n];
    views_[n] = static_cast<int64_t>(mine.size());
    const bool moves = is_movement(n->op()) && !keeps_index(n);
    const size_t tensor_srcs = is_movement(n->op()) ? 1 : n->nsrcs();
    for (size_t i = 0; i < tensor_srcs; ++i) {
      std::vector<uint64_t>& theirs = names[n->src(i).get()];
      for (uint64_t name : mine) {
        const uint64_t v =
            moves ? name * 0x9E3779B97F4A7C15ull + reinterpret_cast<uintptr_t>(n) : name;
        if (theirs.size() < 2 && std::find(theirs.begin(), theirs.end(), v) == theirs.end())
          theirs.push_back(v);
      }
    }
  }
}

// A view that indexes its source as it is indexed itself, up to axes of size 1: a broadcast
// (EXPAND only sets size-1 axes), a reshape that only adds or drops 1s.
bool KernelBuilder::keeps_index(const UOp* view) {
  if (view->op() == Op::EXPAND) return true;
  if (view->op() != Op::RESHAPE) return false;
  lazy::Shape a = owner_.shape()(view->src(0)), b = owner_.shape()(view);
  a.erase(std::remove(a.begin(), a.end(), 1), a.end());
  b.erase(std::remove(b.begin(), b.end(), 1), b.end());
  return a == b;
}

// Costly to recompute: the value (up to realised nodes and buffers) contains a reduce or a
// transcendental function, or more than kCostlyOps arithmetic ops and padding gates (the
// gradient of a max pool through a ReLU: comparisons of the window's recomputed maxima, read
// once per output channel of the weight gradient it feeds, made a CNN's training step take
// seconds).
bool KernelBuilder::costly(const UOp* node) {
  if (auto it = costly_.find(node); it != costly_.end()) return it->second;
  bool c = false;
  if (inlined_leaf(node)) {
    c = false;
  } else if (node->op() == Op::REDUCE_AXIS || node->op() == Op::EXP2 || node->op() == Op::LOG2 ||
             node->op() == Op::SIN) {
    c = true;
  } else {
    for (const UOpRef& s : node->srcs()) c = c || costly(s.get());
    c = c || ops(node) > kCostlyOps;
  }
  costly_.emplace(node, c);
  return c;
}

// The nodes of `node`'s value up to realised nodes and buffers that `counts` accepts, each
// distinct node once, counted until `cap`; with `leaves`, those leaves (realised nodes,
// buffers, constants) instead.
int64_t KernelBuilder::count_in(const UOp* node, bool (*counts)(const UOp*), int64_t cap,
                                bool leaves) {
  std::unordered_set<const UOp*> seen;
  std::vector<const UOp*> stack{node};
  int64_t n = 0;
  while (!stack.empty() && n < cap) {
    const UOp* u = stack.back();
    stack.pop_back();
    if (!seen.insert(u).second) continue;
    const bool leaf = inlined_leaf(u);
    if (leaf == leaves) n += counts(u);
    if (leaf) continue;
    for (const UOpRef& s : u->srcs()) stack.push_back(s.get());
  }
  return n;
}

// The arithmetic ops and padding gates of `node`'s value, up to one more than kCostlyOps.
int64_t KernelBuilder::ops(const UOp* node) {
  if (auto it = ops_.find(node); it != ops_.end()) return it->second;
  auto op = [](const UOp* u) {
    return is_alu(u->op()) || u->op() == Op::CAST || u->op() == Op::PAD;
  };
  return ops_.emplace(node, count_in(node, op, kCostlyOps + 1)).first->second;
}

// The padded views (PAD nodes) in `node`'s value, up to kGathers: the pieces of a
// convolution's input gradient.
int64_t KernelBuilder::gathers(const UOp* node) {
  if (auto it = gathers_.find(node); it != gathers_.end()) return it->second;
  auto pad = [](const UOp* u) { return u->op() == Op::PAD; };
  return gathers_.emplace(node, count_in(node, pad, kGathers)).first->second;
}

// The distinct buffers and realised values `node`'s value reads, up to kRecomputedReads.
int64_t KernelBuilder::reads(const UOp* node) {
  if (auto it = reads_.find(node); it != reads_.end()) return it->second;
  auto read = [](const UOp* u) {
    return u->op() != Op::CONST && u->op() != Op::IOTA && u->op() != Op::DEFINE_VAR &&
           u->op() != Op::BIND;
  };
  return reads_.emplace(node, count_in(node, read, kRecomputedReads, true)).first->second;
}

}  // namespace polygrad::schedule
