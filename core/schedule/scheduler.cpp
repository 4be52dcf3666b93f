// Realising roots: one kernel per realised node, then the write-after-read ordering.
#include "schedule/scheduler.hpp"

#include "codegen/lower.hpp"
#include "codegen/optimize.hpp"
#include "ir/error.hpp"
#include "ir/graph.hpp"
#include "schedule/activations.hpp"
#include "schedule/kernel_builder.hpp"
#include "schedule/scatter.hpp"
#include "schedule/symbolic_sizes.hpp"

#include <polygrad/error.hpp>

#include <algorithm>
#include <queue>
#include <unordered_set>

namespace polygrad::schedule {

std::string Scheduler::device_of(const UOp* node) {
  // (Not the first BUFFER in sources-first order: under a COPY, that is the copy's source, on
  // the other device; `x.to("cpu") * 2` of an x on another device ran there.)
  const UOp* p = lazy::placement(node);
  if (p == nullptr) return ctx_.device;  // constants only: where the roots are realised
  return p->op() == Op::COPY ? p->arg_str() : ctx_.buffer_device(p);
}

UOpRef Scheduler::new_buffer(const std::string& device, DType dtype, int64_t count) {
  UOpRef b = ctx_.new_buffer(device, dtype, count);
  made_.insert(b.get());
  return b;
}

void Scheduler::mark_packing(size_t first, const UOpRef& source) {
  if (made_.count(source.get())) return;  // made by this schedule: new every time it runs
  std::vector<size_t> slots;
  for (size_t i = first; i < sched_.items.size(); ++i) {
    const std::vector<UOpRef>& b = sched_.items[i].buffers;
    const auto at = std::find(b.begin(), b.end(), source);
    if (at == b.end()) return;
    slots.push_back(static_cast<size_t>(at - b.begin()));
  }
  for (size_t i = first; i < sched_.items.size(); ++i)
    sched_.items[i].packing =
        Item::Packing{slots[i - first], sched_.items[first].ast, static_cast<int>(i - first)};
}

UOpRef Scheduler::realize(const UOp* node, std::optional<size_t>& item, bool root) {
  auto it = done_.find(node);
  if (it != done_.end()) {
    item = it->second.second;
    return it->second.first;
  }
  UOpRef view = realize_uncached(node, item, root);
  keep_.push_back(node->ref());
  done_.emplace(node, std::make_pair(view, item));
  return view;
}

UOpRef Scheduler::realize_uncached(const UOp* node, std::optional<size_t>& item, bool root) {
  const lazy::Shape& shape = shape_(node);
  if (lazy::is_realized(node))
    return node->op() == Op::BUFFER ? lazy::reshape(node->ref(), shape) : node->ref();
  if (node->op() == Op::DETACH) return realize(node->src(0).get(), item, root);
  if (node->op() == Op::RESHAPE) {  // a reshape of a realised buffer is a view of it, no copy
    const UOp* src = node->src(0).get();
    while (src->op() == Op::RESHAPE) src = src->src(0).get();
    if (src->op() == Op::BUFFER) return lazy::reshape(src->ref(), shape);
    // So is a reshape of a value this schedule realises anyway (CONTIGUOUS), unless a root
    // would view a buffer already realised as an intermediate (the planner may reuse it).
    if (src->op() == Op::CONTIGUOUS && (!root || !done_.count(src))) {
      const UOpRef v = realize(src, item, root);
      return lazy::reshape(lazy::realized_buffer(v.get())->ref(), shape);
    }
  }
  const int64_t count = lazy::numel(shape);
  if (node->op() == Op::COPY) {
    std::optional<size_t> src_item;
    UOpRef src = realize(node->src(0).get(), src_item, false);
    UOpRef dst = new_buffer(node->arg_str(), node->dtype(), count);
    if (!root) sched_.intermediates.push_back(dst);
    std::set<size_t> deps;
    if (src_item) deps.insert(*src_item);
    std::set<int64_t> reads;
    if (!src_item) reads.insert(lazy::buffer_id(lazy::realized_buffer(src.get())));
    item =
        add_copy(dst, src->src(0), count * node->dtype().itemsize(), node->arg_str(), deps, reads);
    if (node->src(0)->op() == Op::ASSIGN)
      meta_[*item].version_reads.insert(lazy::assigned_buffer_id(node->src(0).get()));
    return lazy::reshape(dst, shape);
  }
  const std::string device = device_of(node);
  if (node->op() == Op::ASSIGN) {
    const UOp* target = node->src(0).get();
    std::optional<size_t> before;  // an earlier assign of a chain to the same tensor
    if (target->op() == Op::ASSIGN) {
      realize(target, before, false);
      target = lazy::assign_root(target);
    }
    if (!lazy::is_realized(target))
      user_error("assign: the target must be a realised tensor, got a lazy " +
                 std::string(op_name(target->op())));
    const UOp* buf = lazy::realized_buffer(target);
    if (node->nsrcs() == 3) {  // a write through a view: only the view's elements
      const UOp* view = node->src(2).get();
      check_writable_view(view, target);
      const lazy::Shape& vshape = shape_(view);
      if (vshape != shape_(node->src(1)))
        user_error("assign: shapes " + lazy::shape_str(vshape) + " and " +
                   lazy::shape_str(shape_(node->src(1))) + " differ");
      if (lazy::numel(vshape) == 0) return target->ref();
      item = add_kernel(node->src(1).get(), vshape, buf->ref(), device, lazy::buffer_id(buf), view);
      if (before) meta_[*item].deps.insert(*before);
      return target->ref();
    }
    if (shape_(target) != shape_(node->src(1)))
      user_error("assign: shapes " + lazy::shape_str(shape_(target)) + " and " +
                 lazy::shape_str(shape_(node->src(1))) + " differ");
    if (count == 0) return target->ref();  // nothing to write
    item = add_kernel(node->src(1).get(), shape, buf->ref(), device, lazy::buffer_id(buf));
    if (before) meta_[*item].deps.insert(*before);
    return target->ref();
  }
  UOpRef out = new_buffer(device, node->dtype(), count);
  if (!root) sched_.intermediates.push_back(out);
  // An empty value needs no kernel: one was built over its other axes (exp of a (0, 64)
  // tensor wrote 64 floats into an empty buffer and corrupted the heap).
  if (count == 0) return lazy::reshape(out, shape);
  item = add_kernel(node, shape, out, device, std::nullopt);
  return lazy::reshape(out, shape);
}

namespace {

/// The inner extent of a split flat range: a multiple of every target's vector lanes.
constexpr int64_t kFlatInner = 256;

// The block split of split_flat_range (below); returns the variable's value (extent when unsplit).
int64_t split_blocks(UOpRef& ast, const UOp* var, int64_t extent) {
  const UOp* outer = nullptr;
  int64_t top = 0;
  for (const UOp* u : toposort(ast)) {
    if (u->op() != Op::RANGE) continue;
    if (outer != nullptr) return extent;  // a second range: the dims below are constant
    outer = u;
    top = u->arg_int();
  }
  if (outer == nullptr || outer->src(0).get() != var || extent % kFlatInner != 0 ||
      extent < 2 * kFlatInner)
    return extent;
  const UOpRef inner = range(const_int(dtypes::index, kFlatInner), top + 1);
  const UOpRef v = var->ref();
  ast = substitute(ast, {{outer, outer->ref() * kFlatInner + inner}, {var, v * kFlatInner}});
  return extent / kFlatInner;
}

// A flat elementwise kernel (one output range, the launch variable's) has no constant range for
// the codegen to vectorise. When the extent is a multiple of kFlatInner, the range r becomes
// r' * kFlatInner + r'' with r' over the variable, now extent / kFlatInner (other uses of the
// variable are scaled back), so every such size still shares one kernel. A kernel writing at
// least codegen::kStreamBytes is compiled for its size instead (the variable becomes that
// constant): its work dwarfs a compile, and the codegen needs the size to stream the stores.
// Returns the value the variable is bound to, or 0 when it was replaced.
int64_t split_flat_range(UOpRef& ast, const UOp* var, int64_t extent) {
  int64_t bound = split_blocks(ast, var, extent);
  const int64_t elem = ast->src(0)->src(1)->dtype().itemsize();
  if (extent * elem < codegen::kStreamBytes) return bound;
  ast = substitute(ast, {{var, const_int(dtypes::index, bound)}});
  return 0;
}

}  // namespace

// A matmul operand streamed in column blocks is read from a copy in panels
// (codegen::panel_packing), written by kernels of this schedule; the operand's loads move to
// the panels' layout.
bool Scheduler::pack_panels(UOpRef& ast, std::vector<UOpRef>& buffers, std::set<size_t>& deps,
                            const std::string& device, int64_t rows, const UOp* outer_var,
                            int64_t outer_extent, int64_t batch) {
  if (!ctx_.target) return false;
  bool bound = false;
  // Up to three times: a transposed a (a.T @ b) leaves b to pack in column panels, b in
  // panels of columns or rows leaves a to pack in panels of rows.
  for (int pass = 0; pass < 3; ++pass) {
    std::optional<codegen::PanelPacking> p =
        codegen::panel_packing(ast, ctx_.target(device), rows, batch);
    if (!p) break;
    const UOpRef buf = buffers[static_cast<size_t>(p->slot)];
    const int64_t count = lazy::buffer_count(buf.get());
    if (count % p->row != 0 || buffers[0] == buf) break;
    const int64_t nrows = count / p->row;
    // A transposed a: one panel of all rows, read with the row count compiled in (its offsets
    // then split into row and column without a division; a's stride pins the rows anyway).
    if (p->transpose_rows) p->panel = nrows;
    const int64_t P = p->panel;
    if (!p->by_rows || p->row_operand || p->padded) {
      // Written by kernels over the buffer's rows (codegen::copy_in_row_blocks), as many as a
      // launch variable says (nothing reads a last partial panel's other rows or columns), so
      // every row count (a's rows; the batch of a weight gradient) shares one copy kernel as
      // it shares the kernel reading it. Panels of columns of a constant row count are whole.
      if (p->rows_var && nrows != batch) break;
      if (!p->by_rows && !p->rows_var && !p->padded && p->row % P != 0) break;
      // (Padded rows: one panel of P >= row columns, P * nrows.)
      const int64_t packed_count =
          p->by_rows ? (nrows + P - 1) / P * P * p->row : (p->row + P - 1) / P * P * nrows;
      buffers[static_cast<size_t>(p->slot)] =
          copy_to_panels(buf, nrows, *p, packed_count, device, deps);
      ast = codegen::read_from_panels(ast, nrows, *p);
      continue;
    }
    // Panels of rows, (rows / P, P, row) -> (rows / P, row, P): a copy kernel over that view,
    // which the codegen runs in tiles (a transpose; in row blocks, a (1024, 1024) copy in
    // panels of 16 rows took 0.65-0.79 ms against 0.59-0.63 on the AVX2 host).
    if (nrows % P != 0) break;
    const UOpRef view = lazy::permute(lazy::reshape(buf, {nrows / P, P, p->row}), {0, 2, 1});
    keep_.push_back(view);
    UOpRef packed = new_buffer(device, buf->dtype(), count);
    if (made_.count(buf.get())) sched_.intermediates.push_back(packed);
    KernelBuilder kb(*this, device);
    UOpRef copy = kb.build(view.get(), shape_(view.get()), packed);
    POLYGRAD_VERIFY(copy);
    sched_.items.push_back({Item::Kind::kernel, device, copy, kb.buffers(), 0, {}});
    meta_.push_back({kb.deps(), kb.old_reads(), std::nullopt});
    deps.insert(sched_.items.size() - 1);
    mark_packing(sched_.items.size() - 1, buf);
    buffers[static_cast<size_t>(p->slot)] = packed;
    if (p->transpose_rows && outer_var != nullptr) {
      ast = substitute(ast, {{outer_var, const_int(dtypes::index, outer_extent)}});
      outer_var = nullptr;
      bound = true;
    }
    ast = codegen::read_from_panels(ast, nrows, *p);
  }
  return bound;
}

UOpRef Scheduler::copy_to_panels(const UOpRef& buf, int64_t nrows, const codegen::PanelPacking& p,
                                 int64_t count, const std::string& device, std::set<size_t>& deps) {
  const UOpRef rows_of = lazy::reshape(buf, {nrows, p.row});
  keep_.push_back(rows_of);
  UOpRef packed = new_buffer(device, buf->dtype(), count);
  // (A copy of an input is kept by the runtime between runs: never memory the planner shares.)
  if (made_.count(buf.get())) sched_.intermediates.push_back(packed);
  KernelBuilder kb(*this, device);
  kb.set_symbolic_outer(true);
  UOpRef copy = kb.build(rows_of.get(), shape_(rows_of.get()), packed);
  const UOp* var = kb.outer_var();
  const UOpRef rows = var ? var->ref() : const_int(dtypes::index, nrows);
  std::vector<UOpRef> kernels = codegen::copy_in_row_blocks(copy, rows, p);
  if (kernels.empty()) kernels.push_back(codegen::write_to_panels(copy, rows, p));
  std::vector<std::pair<std::string, int64_t>> vars;
  if (var != nullptr) vars.emplace_back(var->arg_var().name, nrows);
  const size_t first = sched_.items.size();
  for (const UOpRef& k : kernels) {
    POLYGRAD_VERIFY(k);
    sched_.items.push_back({Item::Kind::kernel, device, k, kb.buffers(), 0, vars});
    meta_.push_back({kb.deps(), kb.old_reads(), std::nullopt});
    deps.insert(sched_.items.size() - 1);
  }
  mark_packing(first, buf);
  return packed;
}

void Scheduler::check_writable_view(const UOp* view, const UOp* target) const {
  const UOp* u = view;
  while (u != target && !lazy::is_realized(u)) {
    if (u->op() == Op::EXPAND || u->op() == Op::PAD)
      user_error(std::string("assign: cannot write through a ") +
                 (u->op() == Op::EXPAND ? "broadcast" : "padded") + " view (" +
                 std::string(op_name(u->op())) +
                 "): its elements are not each one element of the target");
    if (!is_movement(u->op()))
      user_error("assign: a view to write through is movement ops over a realised tensor, not " +
                 std::string(op_name(u->op())));
    u = u->src(0).get();
  }
  if (lazy::realized_buffer(u) != lazy::realized_buffer(target))
    user_error("assign: the view written through is not a view of the assigned tensor");
}

size_t Scheduler::add_kernel(const UOp* value, const lazy::Shape& shape, const UOpRef& out,
                             const std::string& device, std::optional<int64_t> assign_target,
                             const UOp* store_view) {
  // The outermost extent is built as a launch-time variable, so a new batch size reuses the
  // compiled kernel (the codegen's register tiling clamps and gates a last partial block of
  // rows). A reduce kernel whose only output range the codegen would vectorise (a column sum)
  // gets it back as a constant: vectors need a static extent. Reduces over the batch and the
  // counts a mean divides by become variables too (symbolic_sizes.hpp).
  KernelBuilder kb(*this, device);
  kb.set_symbolic_outer(lazy::numel(shape) > 1);
  kb.set_store_view(store_view);
  UOpRef ast = kb.build(value, shape, out);
  std::vector<UOpRef> buffers = kb.buffers();
  std::set<size_t> deps = kb.deps();
  // A one-hot sum over an output axis (an embedding's gradient: V x tokens x D multiply-adds)
  // is a scatter-add into the zeroed output instead (tokens x D), compiled for its sizes.
  if (!assign_target) {
    const UOp* var = kb.outer_var();
    if (UOpRef scatter = scatter_form(
            var ? substitute(ast, {{var, const_int(dtypes::index, kb.outer_extent())}}) : ast)) {
      const UOpRef zeros = lazy::full(out->dtype(), 0.0, shape);
      keep(zeros);
      deps.insert(add_kernel(zeros.get(), shape, out, device, std::nullopt));
      POLYGRAD_VERIFY(scatter);
      sched_.items.push_back({Item::Kind::kernel, device, scatter, buffers, 0, {}});
      meta_.push_back({deps, kb.old_reads(), std::nullopt, kb.version_reads()});
      return sched_.items.size() - 1;
    }
  }
  bool bound = false;  // the outer variable compiled in by the packing
  int64_t rows = 1;    // the other output extents (the outer one as built)
  for (size_t i = 0; i + 1 < shape.size(); ++i) rows *= shape[i];
  // A reduce over the batch (a weight gradient) takes it at launch, and only then are its
  // operands packed, in panels that keep it a variable (below).
  const bool over_batch = reduces_over_batch(ast, buffers);
  if (!assign_target && !over_batch)
    bound = pack_panels(ast, buffers, deps, device, rows, kb.outer_var(), kb.outer_extent());
  std::vector<std::pair<std::string, int64_t>> vars;
  bool blocks = false;  // the variable counts blocks of a split flat range, not a size
  if (const UOp* var = bound ? nullptr : kb.outer_var()) {
    bool has_reduce = false;
    for (const UOp* u : toposort(ast)) has_reduce = has_reduce || u->op() == Op::REDUCE;
    if (!has_reduce) {
      if (int64_t bound = split_flat_range(ast, var, kb.outer_extent()); bound > 0) {
        vars.emplace_back(var->arg_var().name, bound);
        blocks = bound != kb.outer_extent();
      }
    } else if (kb.output_ranges() == 1 && codegen::vectorizes_along(ast, kb.outer_range())) {
      ast = substitute(ast, {{var, const_int(dtypes::index, kb.outer_extent())}});
    } else {
      vars.emplace_back(var->arg_var().name, kb.outer_extent());
    }
  }
  const int64_t batch = symbolic_reduces(ast, buffers, vars);
  if (!blocks) symbolic_counts(ast, vars);  // (a block count is no size)
  POLYGRAD_VERIFY(ast);
  Meta meta{deps, kb.old_reads(), assign_target, kb.version_reads()};
  if (assign_target) {
    // A value that reads the target at other positions than it writes (a.assign(a.T)), or
    // that reads the target of another assign of this schedule (an optimizer step: each
    // parameter's update reads the others, so fused writes could not be ordered), is computed
    // into a temporary first, then copied.
    const UOp* store = ast->src(0).get();
    const UOpRef& off = store->src(0)->src(1);
    bool conflict = false;
    for (int64_t id : kb.old_reads())
      if (id != *assign_target && assign_targets_.count(id)) conflict = true;
    for (const UOp* u : toposort(store->src(1)))
      if (u->op() == Op::INDEX && u->src(0)->op() == Op::DEFINE_GLOBAL &&
          u->src(0)->arg_int() == 0 && u->src(1) != off)
        conflict = true;
    if (conflict) {
      UOpRef tmp = new_buffer(device, out->dtype(), lazy::numel(shape));
      sched_.intermediates.push_back(tmp);
      KernelBuilder kb2(*this, device);
      UOpRef ast2 = kb2.build(value, shape, tmp);
      sched_.items.push_back({Item::Kind::kernel, device, ast2, kb2.buffers(), 0, {}});
      meta_.push_back({kb2.deps(), kb2.old_reads(), std::nullopt, kb2.version_reads()});
      size_t first = sched_.items.size() - 1;
      if (store_view) {  // the temporary then goes through the view
        const UOpRef from = lazy::reshape(tmp, shape);
        keep(from);
        const size_t write = add_kernel(from.get(), shape, out, device, assign_target, store_view);
        meta_[write].deps.insert(first);
        meta_[write].old_reads.erase(lazy::buffer_id(tmp.get()));  // (written by `first`)
        return write;
      }
      return add_copy(out, tmp, lazy::numel(shape) * out->dtype().itemsize(), device, {first}, {});
    }
  }
  if (batch > 0) {  // (only when over_batch: no packing came first)
    pack_panels(ast, buffers, meta.deps, device, rows, nullptr, 0, batch);
    POLYGRAD_VERIFY(ast);
  }
  sched_.items.push_back({Item::Kind::kernel, device, ast, buffers, 0, std::move(vars)});
  meta_.push_back(std::move(meta));
  return sched_.items.size() - 1;
}

size_t Scheduler::add_copy(const UOpRef& dst, const UOpRef& src, int64_t nbytes,
                           const std::string& device, std::set<size_t> deps,
                           std::set<int64_t> old_reads) {
  sched_.items.push_back({Item::Kind::copy, device, {}, {dst, src}, nbytes, {}});
  meta_.push_back({std::move(deps), std::move(old_reads), lazy::buffer_id(dst.get())});
  return sched_.items.size() - 1;
}

// Kahn's algorithm over read-after-write edges (deps), write-after-read edges (a kernel that
// read a buffer's old contents runs before the write to it) and write-after-write edges
// (writes to one buffer keep their order); ties keep the order the items were made in.
void Scheduler::order() {
  const size_t n = sched_.items.size();
  std::vector<std::vector<size_t>> after(n);
  std::vector<size_t> indegree(n, 0);
  auto edge = [&](size_t a, size_t b) {
    after[a].push_back(b);
    ++indegree[b];
  };
  for (size_t j = 0; j < n; ++j)
    for (size_t d : meta_[j].deps) edge(d, j);
  // An item that reads one write of a chain of assigns to a buffer runs before the chain's
  // later writes, those it does not depend on, directly or not (its upstream items, found
  // once per such reader).
  std::vector<std::vector<bool>> upstream(n);
  auto depends_on = [&](size_t r, size_t w) {
    std::vector<bool>& up = upstream[r];
    if (up.empty()) {
      up.assign(n, false);
      std::vector<size_t> stack(meta_[r].deps.begin(), meta_[r].deps.end());
      while (!stack.empty()) {
        const size_t d = stack.back();
        stack.pop_back();
        if (up[d]) continue;
        up[d] = true;
        for (size_t e : meta_[d].deps)
          if (!up[e]) stack.push_back(e);
      }
    }
    return static_cast<bool>(up[w]);
  };
  for (size_t w = 0; w < n; ++w) {
    if (!meta_[w].writes) continue;
    const int64_t b = *meta_[w].writes;
    for (size_t r = 0; r < n; ++r) {
      if (r == w) continue;
      if (meta_[r].old_reads.count(b) && !meta_[r].deps.count(w)) edge(r, w);
      if (meta_[r].writes == b && r < w) edge(r, w);
      if (meta_[r].version_reads.count(b) && !depends_on(r, w)) edge(r, w);
    }
  }
  std::priority_queue<size_t, std::vector<size_t>, std::greater<size_t>> ready;
  for (size_t i = 0; i < n; ++i)
    if (indegree[i] == 0) ready.push(i);
  std::vector<Item> ordered;
  while (!ready.empty()) {
    size_t i = ready.top();
    ready.pop();
    ordered.push_back(std::move(sched_.items[i]));
    for (size_t j : after[i])
      if (--indegree[j] == 0) ready.push(j);
  }
  if (ordered.size() != n)
    user_error(
        "realize: the graph reads a buffer's old contents after an assign to it that it also "
        "depends on; realize the assign first");
  sched_.items = std::move(ordered);
}

Schedule Scheduler::run(const std::vector<UOpRef>& roots) {
  for (const UOp* u : toposort(roots)) {
    if (u->op() == Op::ASSIGN && lazy::is_realized(lazy::assign_root(u)))
      assign_targets_.insert(lazy::assigned_buffer_id(u));
    for (size_t i = 0; i < u->nsrcs(); ++i) {
      bool again = false;  // a source used twice by one node counts once
      for (size_t j = 0; j < i; ++j) again = again || u->src(j) == u->src(i);
      if (!again) ++users_[u->src(i).get()];
    }
  }
  for (const UOpRef& r : roots) {
    std::optional<size_t> item;
    sched_.outputs.push_back(realize(r.get(), item, true));
  }
  order();
  return std::move(sched_);
}

std::unordered_set<const UOp*> Scheduler::inlined_twice() const {
  std::unordered_set<const UOp*> twice;
  std::vector<UOpRef> roots;
  for (const auto& [node, kernels] : inlined_)
    if (kernels.size() >= 2) {
      twice.insert(node);
      roots.push_back(node->ref());
    }
  // A value inside another of them, in no kernel the other is not in, is only reached through
  // it (the partial sums of a long sum): realising the outer one is enough. One walk, users
  // before sources: each node carries the kernel sets of the values above it, only the
  // largest (a set inside another answers nothing the other does not).
  using Kernels = const std::set<int>*;
  std::unordered_map<const UOp*, std::vector<Kernels>> above;
  auto add = [](std::vector<Kernels>& sets, Kernels k) {
    for (Kernels s : sets)
      if (s == k || std::includes(s->begin(), s->end(), k->begin(), k->end())) return;
    std::erase_if(
        sets, [&](Kernels s) { return std::includes(k->begin(), k->end(), s->begin(), s->end()); });
    sets.push_back(k);
  };
  std::unordered_set<const UOp*> out = twice;
  const std::vector<const UOp*> order = toposort(roots);
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    const UOp* u = *it;
    const std::vector<Kernels>& mine = above[u];
    const bool inner = twice.count(u) != 0;
    Kernels ku = inner ? &inlined_.at(u) : nullptr;
    if (inner)
      for (Kernels s : mine)
        if (std::includes(s->begin(), s->end(), ku->begin(), ku->end())) {
          out.erase(u);
          break;
        }
    for (const UOpRef& src : u->srcs()) {
      std::vector<Kernels>& theirs = above[src.get()];
      for (Kernels s : mine) add(theirs, s);
      if (inner) add(theirs, ku);
    }
    above.erase(u);  // (its users are all done: nothing adds to it again)
  }
  return out;
}

Schedule make_schedule(const std::vector<UOpRef>& roots, const Context& ctx) {
  // A long value that two kernels compute inline is found only once both are built; then the
  // schedule is made again with it realised where the first of them meets it. (The first
  // pass stays alive meanwhile, so no node it made is freed and its address reused.)
  const std::vector<UOpRef> expanded = expand_activations(roots);
  Scheduler first(ctx);
  Schedule s = first.run(expanded);
  std::unordered_set<const UOp*> again = first.inlined_twice();
  if (again.empty()) return s;
  Scheduler second(ctx, std::move(again));
  return second.run(expanded);
}

}  // namespace polygrad::schedule
