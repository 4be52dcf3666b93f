// How a kernel's AST takes a reduce (KernelBuilder::reduce): fused into the kernel, split into
// row blocks, or realised by a kernel of its own and loaded.
#include "schedule/kernel_builder.hpp"

#include "codegen/rebuild.hpp"
#include "schedule/kernel_index.hpp"
#include "schedule/reduce_forms.hpp"
#include "schedule/scatter.hpp"
#include "schedule/scheduler.hpp"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

namespace polygrad::schedule {

namespace {

// Whether the reduce body `value` loads two or more elements at offsets that move with the
// reduced `ranges`: from two buffers, or from two places in one (attention's q . k, both read
// from one projection's output).
bool contraction(const UOpRef& value, const std::vector<UOpRef>& ranges) {
  std::set<const UOp*> reads;
  for (const UOp* u : toposort(value)) {
    if (u->op() != Op::LOAD) continue;
    const UOp* at = u->src(0).get();
    std::set<const UOp*> used;
    ranges_in(at->src(1), used);
    for (const UOpRef& r : ranges)
      if (used.count(r.get())) {
        reads.insert(at);
        break;
      }
  }
  return reads.size() >= 2;
}

}  // namespace

// The terms each element of the reduce `node` sums (its input's elements over its own; an empty
// reduce, padded into a larger value, counts as 1).
int64_t KernelBuilder::terms(const UOp* node) {
  return lazy::numel(owner_.shape()(node->src(0))) /
         std::max<int64_t>(1, lazy::numel(owner_.shape()(node)));
}

// Whether the kernel's value computes EXP2, LOG2 or SIN on something that does not read `node`.
bool KernelBuilder::beside_transcendentals(const UOp* node) {
  std::unordered_map<const UOp*, bool> reads;  // whether a node's value reads `node`
  std::vector<std::pair<const UOp*, size_t>> stack{{root_, 0}};
  reads[root_] = false;
  while (!stack.empty()) {
    auto& [n, i] = stack.back();
    if (n != node && !inlined_leaf(n) && i < n->nsrcs()) {
      const UOp* s = n->src(i++).get();
      if (!reads.count(s)) {
        reads[s] = false;
        stack.emplace_back(s, 0);
      }
      continue;
    }
    const UOp* done = n;
    stack.pop_back();
    bool r = done == node;
    if (!r && !inlined_leaf(done))
      for (const UOpRef& s : done->srcs()) r = r || reads[s.get()];
    reads[done] = r;
    if (!r && (done->op() == Op::EXP2 || done->op() == Op::LOG2 || done->op() == Op::SIN))
      return true;
  }
  return false;
}

// The most terms a reduce inside `node`'s value sums per element of it (1 without one), up to
// the nodes the kernel reads. A reduce to one value does not count: it is realised, or fused
// and run once (can_fuse_reduce).
int64_t KernelBuilder::terms_per_element(const UOp* node) {
  int64_t per = 1;
  std::vector<const UOp*> stack{node};
  std::unordered_set<const UOp*> seen;
  while (!stack.empty()) {
    const UOp* u = stack.back();
    stack.pop_back();
    if (!seen.insert(u).second || inlined_leaf(u)) continue;
    if (u->op() == Op::REDUCE_AXIS && lazy::numel(owner_.shape()(u)) > 1)
      per = std::max(per, terms(u));
    for (const UOpRef& src : u->srcs()) stack.push_back(src.get());
  }
  return per;
}

// A reduce of many elements to one value runs on one thread of the launch grid; split it into
// partial reduces over row blocks (a kernel of its own, parallel over the blocks) and a small
// final reduce. The most blocks up to 256 that divide the element count, each of at least 1024
// elements; when none divides it (4095 * 4097), 256 or fewer blocks of n / blocks elements and
// the rest (fewer elements than blocks) reduced beside the partial results in the final kernel.
UOpRef KernelBuilder::split_reduce(const UOp* node) {
  constexpr int64_t kMaxBlocks = 256, kMinBlock = 1024;
  const lazy::Shape& in = owner_.shape()(node->src(0));
  const int64_t n = lazy::numel(in);
  if (lazy::numel(owner_.shape()(node)) != 1 || n < 2) return {};
  // Fewer elements may each cost a reduce of their own (a loss's mean over rows of their
  // logsumexp over the classes: 512 rows of 2048 ran on one thread, 1.9 ms): they count by it.
  const int64_t per = n < (int64_t{1} << 15) ? terms_per_element(node->src(0).get()) : 1;
  // Such elements (up to kMaxRowValues) are realised by a kernel over their rows, then reduced:
  // two kernels whose shapes do not depend on the row count, so a batch taken at launch keeps
  // them at every size. Blocks of the element count's divisors, or one fused kernel below a
  // size, made other kernels at other batch sizes (a 784-128-10 MLP's cross-entropy step at
  // batch 100 beside 64, 128 and 256; at 64 beside 32).
  constexpr int64_t kMaxRowValues = int64_t{1} << 16;
  if (per > 1 && n <= kMaxRowValues)
    return lazy::reduce(lazy::contiguous(node->src(0)), lazy::reduce_op(node),
                        lazy::reduce_axes(node));
  if (n * per < (int64_t{1} << 15)) return {};
  int64_t blocks = 0;
  for (int64_t p = kMaxBlocks; p >= 2 && !blocks; p /= 2)
    if (n % p == 0 && n / p * per >= kMinBlock) blocks = p;
  const bool ragged = blocks == 0;
  // (Rows of reduces, a loss's, split only into equal blocks: a third kernel for the rest
  // would cost more than the few rows that leave none gain.)
  if (ragged && per > 1) return {};
  if (ragged) {
    blocks = kMaxBlocks;
    while (blocks >= 2 && (blocks > n || n / blocks * per < kMinBlock)) blocks /= 2;
    if (blocks < 2) return {};
  }
  const Op op = lazy::reduce_op(node);
  const int64_t main = n - n % blocks;
  UOpRef flat = lazy::reshape(node->src(0), {n});
  UOpRef rows =
      lazy::reshape(ragged ? lazy::shrink(flat, {{0, main}}) : flat, {blocks, main / blocks});
  UOpRef partial = lazy::contiguous(lazy::reduce(rows, op, {1}));
  UOpRef total = lazy::reduce(partial, op, {0});
  if (ragged)
    total = lazy::elementwise(op, {total, lazy::reduce(lazy::shrink(flat, {{main, n}}), op, {0})});
  return lazy::reshape(total, owner_.shape()(node));
}

// A reduce range that the value reads through a division and remainder by a constant c that
// divides its extent (an axis merging a batch with positions, read through a permuted view:
// a weight gradient's (batch * positions) rows) becomes two ranges r1 * c + r2, with c the
// largest such divisor; the symbolic engine then folds the division and remainder away, so
// the reduce loop does no div/mod per iteration. srcs[0] is the value, the rest the ranges.
void KernelBuilder::split_ranges(UOpRef& value, std::vector<UOpRef>& srcs) {
  for (size_t i = 1; i < srcs.size(); ++i) {
    const UOp* r = srcs[i].get();
    const int64_t e = r->src(0)->arg_int();
    int64_t c = 0;
    for (const UOp* u : toposort(value))
      if ((u->op() == Op::IDIV || u->op() == Op::MOD) && u->src(0).get() == r &&
          u->src(1)->op() == Op::CONST) {
        const int64_t d = u->src(1)->arg_int();
        if (d > 1 && d < e && e % d == 0) c = std::max(c, d);
      }
    if (c == 0) continue;
    const UOpRef outer = new_range(e / c), inner = new_range(c);
    value = codegen::simplify_indexing(substitute(value, {{r, outer * c + inner}}));
    srcs[i] = outer;
    srcs.insert(srcs.begin() + static_cast<std::ptrdiff_t>(i) + 1, inner);  // examined next
  }
}

UOpRef KernelBuilder::reduce(const UOp* node, const std::vector<UOpRef>& idx, const UOpRef& gate) {
  if (UOpRef split = split_reduce(node)) {
    owner_.keep(split);
    return index(split.get(), idx, gate);
  }
  const std::set<const UOp*> deps = ranges_of(idx);
  if (node != root_ && !can_fuse_reduce(deps, node)) return load_realized(node, idx, gate);
  // A reduce read through two or more views (a max pool's gradient reads its output's gradient
  // through each window offset's pad) would be computed once per view and output element:
  // realised once instead.
  if (node != root_ && (views_[node] >= 2 || divides_a_range(idx)))
    return load_realized(node, idx, gate);
  // A product (a matmul) summing kLongProduct or more terms per element beside transcendental
  // functions that do not read it (an LSTM's dh = dz @ wh^T, 256 terms, times its gates'
  // sigmoids in the cell-state gradient) is realised: fused, the codegen tiles the kernel for
  // the product and the functions run scalar in its tile (the step's kernels 1.0 -> 1.5 ms).
  // Those that read it (softmax over attention's scores) keep it fused, as do short ones
  // (attention's dO @ V^T over a head of 32, beside its recomputed softmax: realised, a GPT
  // step took 0.4 ms more).
  if (node != root_ && node->src(0)->op() == Op::MUL && terms(node) >= kLongProduct &&
      beside_transcendentals(node))
    return load_realized(node, idx, gate);
  // A long reduce that several kernels fuse (a weight gradient summed over time steps, which
  // an optimizer's updates all read) is realised, as a long elementwise value is.
  if (node != root_ && ops(node) > kCostlyOps) {
    if (owner_.realise_first(node)) return load_realized(node, idx, gate);
    inlined_.insert(node);
  }
  const lazy::Shape& in = owner_.shape()(node->src(0));
  std::vector<UOpRef> x = idx;
  std::vector<UOpRef> srcs{UOpRef()};
  std::vector<UOpRef> outer = nest_;
  nest_.resize(nest_prefix(deps));  // where the codegen places this reduce
  for (int64_t a : lazy::reduce_axes(node)) {
    size_t j = static_cast<size_t>(a);
    if (in[j] == 1) {
      x[j] = idx_const(0);
      continue;
    }
    x[j] = new_range(in[j]);
    srcs.push_back(x[j]);
  }
  nest_.insert(nest_.end(), srcs.begin() + 1, srcs.end());
  ++reduce_depth_;
  const int64_t was_macs = product_macs_;
  product_macs_ = node->src(0)->op() == Op::MUL ? lazy::numel(in) : 0;
  UOpRef value = index(node->src(0).get(), x, gate);
  product_macs_ = was_macs;
  --reduce_depth_;
  nest_ = std::move(outer);
  if (srcs.size() == 1) return value;
  if (lazy::reduce_op(node) == Op::ADD && srcs.size() == 2)
    if (UOpRef picked = pick_one_hot(value, srcs[1])) return picked;
  // A one-hot sum over an output axis inside a larger value (a tied embedding's gradient, added
  // to the output projection's) is realised: its own kernel is a scatter-add (scatter.hpp).
  // It is written in the order this kernel reads it: read transposed, it would keep the
  // codegen from vectorising the output projection's gradient (a GPT step's 2048 x 128 x 512
  // weight gradient took 0.8 s in the scalar dot form).
  // (Not when it is the kernel's whole value, through views: that kernel is the scatter.)
  const UOp* top = root_;
  while (top != node && is_movement(top->op())) top = top->src(0).get();
  if (top != node && out_ranges_.size() >= 2)
    if (auto m = one_hot_over_output(value, {srcs.begin() + 1, srcs.end()}, lazy::reduce_op(node));
        m && std::find(out_ranges_.begin(), out_ranges_.end(), m->v->ref()) != out_ranges_.end())
      return load_realized_in_walk_order(node, idx, gate);
  split_ranges(value, srcs);
  // A factor the reduced ranges do not move is multiplied once, after the sum: the gradient
  // of a mean over a sequence, broadcast along the positions, times attention's weights
  // (P^T @ dO with dO constant along the positions) would otherwise be a product summed over
  // them for every feature (a ViT-like step's backward: 32 x 64 x 96 x 64 scalar multiply-adds).
  UOpRef scale;
  if (lazy::reduce_op(node) == Op::ADD)
    scale = factor_out_invariant(value, {srcs.begin() + 1, srcs.end()});
  // A contraction (a matmul: two loads along the reduced ranges) used more than
  // once, or inside another reduce, is realised: nested in another reduce (the logits in a
  // fused softmax or cross-entropy; a convolution's column gradient summed back over its
  // windows) it would be computed as scalar dot products, once per use, and a value used twice
  // is usually needed again by a later kernel (the pre-activation that a ReLU's backward masks
  // by). It then runs once, with the codegen's matmul tiling.
  if (node != root_ && (paths_[node] >= 2 || reduce_depth_ > 0) &&
      contraction(value, {srcs.begin() + 1, srcs.end()}))
    return load_realized(node, idx, gate);
  srcs[0] = value;
  UOpRef sum =
      UOp::make(Op::REDUCE, node->dtype(), srcs, static_cast<int64_t>(lazy::reduce_op(node)));
  return scale ? alu(Op::MUL, {sum, scale}) : sum;
}

}  // namespace polygrad::schedule
