// Reading a matmul operand from a copy in panels (see optimize.hpp: panel_packing).
#include <algorithm>
#include <optional>
#include <vector>

#include "codegen/upcast_parts.hpp"
#include "rewrite/graph_rewrite.hpp"
#include "symbolic/simplify.hpp"

namespace polygrad::codegen {

using upcast::CacheBudget;
using upcast::column_vectors;
using upcast::kMaxTransposeBytes;

UOpRef panel_offset(const UOpRef& off, const UOpRef& rows, const PanelPacking& p) {
  const UOpRef r = off / p.row, c = off % p.row;
  if (p.by_rows) return simplify(r / p.panel * (p.row * p.panel) + c * p.panel + r % p.panel);
  return simplify(c / p.panel * (rows * p.panel) + r * p.panel + c % p.panel);
}

UOpRef panel_offset(const UOpRef& off, int64_t rows, const PanelPacking& p) {
  return panel_offset(off, p.rows_var ? p.rows_var->ref() : const_int(dtypes::index, rows), p);
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

UOpRef write_to_panels(const UOpRef& sink, const UOpRef& rows, const PanelPacking& p) {
  std::vector<UOpRef> stores;
  for (const UOpRef& st : sink->srcs()) {
    const UOpRef& idx = st->src(0);
    std::vector<UOpRef> isrcs(idx->srcs().begin(), idx->srcs().end());
    isrcs[1] = panel_offset(isrcs[1], rows, p);
    std::vector<UOpRef> ssrcs(st->srcs().begin(), st->srcs().end());
    ssrcs[0] = UOp::make(Op::INDEX, idx->dtype(), isrcs);
    stores.push_back(UOp::make(Op::STORE, st->dtype(), ssrcs));
  }
  return UOp::make(Op::SINK, sink->dtype(), stores, sink->arg());
}

std::vector<UOpRef> copy_in_row_blocks(const UOpRef& sink, const UOpRef& rows,
                                       const PanelPacking& p) {
  constexpr int64_t kBlock = cpu_tuning::kCopyBlockRows, kMaxPanel = cpu_tuning::kMaxCopyPanel;
  const int64_t P = p.panel, full = p.row / P;
  if (P > kMaxPanel || (!p.by_rows && full == 0) || sink->nsrcs() != 1) return {};
  const UOp* r = nullptr;
  const UOp* c = nullptr;
  for (const UOp* u : toposort(sink)) {
    if (u->op() != Op::RANGE) continue;
    if (u->arg_int() == 0)
      r = u;
    else if (u->arg_int() == 1)
      c = u;
    else
      return {};
  }
  if (r == nullptr || c == nullptr || c->src(0)->op() != Op::CONST || c->src(0)->arg_int() != p.row)
    return {};
  const UOpRef& st = sink->src(0);
  const UOpRef& out = st->src(0)->src(0);
  const UOpRef& value = st->src(1);
  GraphRewriter simplifier(symbolic_rules());  // the stores' offsets share their terms
  auto store = [&](const UOpRef& row, const UOpRef& col, const UOpRef& at) {
    const UOpRef v = substitute(value, {{r, row}, {c, col}});
    return UOp::make(Op::STORE, st->dtype(),
                     {UOp::make(Op::INDEX, st->src(0)->dtype(), {out, simplifier.rewrite(at)}), v});
  };
  // Blocks of 8 rows, or a panel of rows; a last partial block's rows past `rows` copy the
  // last row again (into a panel's unread rows).
  const int64_t block_rows = p.by_rows ? P : kBlock;
  const bool exact = rows->op() == Op::CONST && rows->arg_int() % block_rows == 0;
  const UOpRef blocks =
      rows->op() == Op::CONST
          ? const_int(dtypes::index, (rows->arg_int() + block_rows - 1) / block_rows)
          : (rows + (block_rows - 1)) / block_rows;
  auto row_at = [&](const UOpRef& block, int64_t rr) {
    const UOpRef x = block * block_rows + rr;
    return exact ? x : where(lt(x, rows), x, rows - 1);
  };
  // The block's rows (and a narrow panel's columns) are copies, not loops: the ranges keep
  // their order (order_loops would run the panels innermost, along the loads).
  const UOpRef block = range(blocks, 0);
  std::vector<UOpRef> stores;
  if (p.by_rows) {
    // Panel `block`, column c: its P rows' elements, one after the other.
    const UOpRef col = range(const_int(dtypes::index, p.row), 1);
    for (int64_t rr = 0; rr < P; ++rr)
      stores.push_back(store(row_at(block, rr), col, block * (p.row * P) + col * P + rr));
    return {UOp::make(Op::SINK, sink->dtype(), stores, sink->arg())};
  }
  const UOpRef panel_stride = rows * P;
  const UOpRef cp = range(const_int(dtypes::index, full), 1);
  // A panel of a multiple of 4 columns is an inner loop, which the target's codegen writes in
  // vectors (16 floats of a 512x512 matmul's b: clang compiled the copy in 21 ms instead of 54
  // for its 128 scalar stores); a narrower or odd panel, P scalar stores per row.
  const bool vectors = P % 4 == 0;
  const UOpRef ci = vectors ? range(const_int(dtypes::index, P), 2) : UOpRef{};
  for (int64_t rr = 0; rr < kBlock; ++rr) {
    const UOpRef row = row_at(block, rr);
    if (vectors) {
      stores.push_back(store(row, cp * P + ci, cp * panel_stride + row * P + ci));
      continue;
    }
    for (int64_t c0 = 0; c0 < P; ++c0)
      stores.push_back(store(row, cp * P + c0, cp * panel_stride + row * P + c0));
  }
  std::vector<UOpRef> kernels = {UOp::make(Op::SINK, sink->dtype(), stores, sink->arg())};
  if (p.row % P != 0) {
    const UOpRef ct = range(const_int(dtypes::index, p.row % P), 1);
    const UOpRef col = ct + full * P;
    const UOpRef tail = store(r->ref(), col, panel_stride * full + r->ref() * P + ct);
    kernels.push_back(UOp::make(Op::SINK, sink->dtype(), {tail}, sink->arg()));
  }
  return kernels;
}

namespace {

/// b's rows a multiple of this apart fall into a few L1 sets; a column block's row of at most
/// this is short enough to prefetch poorly a row apart (see panel_packing).
using cpu_tuning::kSetConflictBytes;
using cpu_tuning::kShortBlockBytes;
/// A copy of a kernel's row operand costs about what a matmul of 20 columns does; the kernel
/// gains 10-20%: not worth it for fewer columns than this (see row_operand_in_panels; the
/// weight gradients' row operand too).
constexpr int64_t kMinColumns = cpu_tuning::kMinRowOperandColumns;

/// An input buffer's load of a matmul-shaped kernel: its slot, element size, and the strides
/// of its offset along the output columns j, the reduce range k and the output rows i
/// (nullopt: not affine, or no i).
struct Operand {
  int64_t slot = 0, elem = 0;
  std::optional<int64_t> cj, ck, ci;
};

/// The operands of the kernel whose nodes are `order`: every ungated INDEX of an input slot.
std::vector<Operand> operands(const std::vector<const UOp*>& order, const UOp* j, const UOp* k,
                              const UOp* i = nullptr) {
  std::vector<Operand> out;
  for (const UOp* u : order) {
    if (u->op() != Op::INDEX || u->nsrcs() != 2 || u->src(0)->op() != Op::DEFINE_GLOBAL ||
        u->src(0)->arg_int() == 0)
      continue;
    const int64_t elem = u->src(0)->dtype().base().scalar_size();
    if (elem <= 0) continue;
    out.push_back({u->src(0)->arg_int(), elem, coefficient(u->src(1).get(), j),
                   coefficient(u->src(1).get(), k),
                   i ? coefficient(u->src(1).get(), i) : std::nullopt});
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
  // Columns the width does not divide (1023, 50257): panels of the tail plan's column block
  // when its moved-back last vector lies within the last panel, which is partial (50257 in
  // panels of 32: 50241..50256 in the panel of 50240..; the panel's missing rows are never
  // read); else one panel of all of b's rows, b transposed, which the vector form takes in a
  // tail plan (a moved-back vector stays within its row). On a Sapphire Rapids host
  // (1023, 1023) @ (1023, 1023).T: 36 -> 13 ms (whole), the copy 1.2 of them.
  const bool tail = ej % plan.lanes != 0;
  for (const Operand& o : operands(toposort(sink), plan.j, k)) {
    if (o.ck != 1 || !o.cj || *o.cj <= 0) continue;
    if (ej * *o.cj * o.elem <= CacheBudget(target).whole_b()) continue;
    // (Panels of rows need no row count. The scheduler checks that the buffer holds whole
    // panels, or makes room for a partial last one; P divides the columns or the buffer's rows
    // are one batch's, so a batch's rows never share a panel with another's.)
    auto planned = [&](const PanelPacking& p) {
      return choose_upcast(read_from_panels(sink, 0, p), target);
    };
    auto keeps_form = [&](const UpcastPlan& q) {
      return q.j == plan.j && q.dot_k == nullptr && q.tail == tail;
    };
    if (!tail) {
      const int64_t panel = column_vectors(ej, plan.lanes) * plan.lanes;
      const PanelPacking p{o.slot, *o.cj, panel, true};
      const UpcastPlan q = planned(p);
      if (!keeps_form(q) || int64_t{q.vectors} * q.lanes != panel) return std::nullopt;
      return p;
    }
    // The tail plan's column block, found by planning with a guess (two vectors) first.
    PanelPacking p{
        .slot = o.slot, .row = *o.cj, .panel = 2 * plan.lanes, .by_rows = true, .padded = true};
    UpcastPlan q = planned(p);
    if (keeps_form(q) && int64_t{q.vectors} * q.lanes != p.panel) {
      p.panel = int64_t{q.vectors} * q.lanes;
      q = planned(p);
    }
    if (keeps_form(q) && int64_t{q.vectors} * q.lanes == p.panel &&
        (ej - q.lanes) / p.panel == (ej - 1) / p.panel)
      return p;
    // (A whole transpose is a plain copy kernel, which reads b a row apart per element: beyond
    // 16 MiB it cost more than it saved, (256, 768) @ (10001, 768).T: 20 -> 70 ms.)
    if (ej * *o.cj * o.elem > kMaxTransposeBytes) continue;
    const PanelPacking whole{o.slot, *o.cj, ej, true};
    if (!keeps_form(planned(whole))) return std::nullopt;
    return whole;
  }
  return std::nullopt;
}

/// Whether rows `stride` bytes apart drift through the sets of an L1 by less than a cache line
/// per row (within 64 bytes of a multiple of 4 KiB), so a k slice's rows share a few of them.
bool in_few_sets(int64_t stride) {
  constexpr int64_t kPage = 4096, kLine = 64;
  const int64_t d = stride % kPage;
  return std::min(d, kPage - d) < kLine;
}

/// Whether every load of o's slot reads it with o's strides: a buffer also read as another
/// operand (a @ a) would lose the layout that operand needs.
bool read_alone(const std::vector<Operand>& ops, const Operand& o) {
  for (const Operand& other : ops)
    if (other.slot == o.slot && (other.cj != o.cj || other.ck != o.ck || other.ci != o.ci))
      return false;
  return true;
}

/// Whether b, `bytes` in all, read along the columns `*o.ck` elements a row apart, is worth a
/// copy in column panels of `panel` elements: larger than half an L2, and either its rows fall
/// into a few L1 sets or a column block's row is short enough to prefetch poorly.
bool column_panels_pay(const Operand& o, int64_t bytes, int64_t panel, const Target& target) {
  if (bytes <= CacheBudget(target).whole_b()) return false;
  return *o.ck * o.elem % kSetConflictBytes == 0 || panel * o.elem <= kShortBlockBytes;
}

/// The plan of `sink` with p's operand in panels, when it keeps plan's tiling (the same ranges,
/// rows, vectors and k); nullopt otherwise.
std::optional<UpcastPlan> replanned(const UOpRef& sink, const Target& target,
                                    const UpcastPlan& plan, const PanelPacking& p, int64_t rows) {
  UpcastPlan q = choose_upcast(read_from_panels(sink, rows, p), target);
  if (q.j != plan.j || q.i != plan.i || q.rows != plan.rows || q.lanes != plan.lanes ||
      q.vectors != plan.vectors || q.tail != plan.tail || q.k != plan.k)
    return std::nullopt;
  return q;
}

/// a, the row operand of a vector-form kernel with 16 vector registers whose k is sliced, in
/// panels of its row blocks (see optimize.hpp). Per k step the 6 x 16 tile broadcasts one value
/// from each of 6 rows of a; a row apart, those lines share a few sets of an 8-way L1 with the
/// panel of b and the partial sums, so the k slices stayed short (KT 128: the panel's slice in
/// L1) and a still missed. In panels the row block's slice of a is one contiguous run and the
/// slices grow to 512. On an AMD EPYC Milan (AVX2, 2 cores, 32 KiB 8-way L1), the same loops
/// written out in C: matmul 1024^3 131.5 -> 162 GFLOP/s, 2048^3 143 -> 180; polygrad's own
/// kernels (fastest of 30 runs each, alternating builds): 1024^3 14.7-15.8 -> 11.4-11.9 ms plus
/// a 0.3 ms copy, 2048^3 106-109 -> 103 plus 1.5. The copy costs about what a matmul of 20
/// columns does, and the kernel gains 10-20%: not worth it for fewer than 256 columns (the
/// MLP's x @ w1.T, 256 x 784 x 128: 276 us either way, plus 53-63 us of copy).
std::optional<PanelPacking> row_operand_in_panels(const UOpRef& sink, const Target& target,
                                                  const UpcastPlan& plan,
                                                  const std::vector<const UOp*>& order,
                                                  const UOp* k, int64_t rows) {
  if (upcast::vector_registers(target) > 16 || plan.i == nullptr || plan.rows < 2 || plan.k != k ||
      plan.k_tile <= 0 || plan.k_outer != nullptr || plan.j->src(0)->op() != Op::CONST ||
      plan.j->src(0)->arg_int() < kMinColumns)
    return std::nullopt;
  const int64_t ek = k->src(0)->arg_int();
  const std::vector<Operand> ops = operands(order, plan.j, k, plan.i);
  for (const Operand& o : ops) {
    if (o.cj != 0 || o.ck != 1 || o.ci != ek || !read_alone(ops, o)) continue;
    const PanelPacking p{
        .slot = o.slot, .row = ek, .panel = plan.rows, .by_rows = true, .row_operand = true};
    const std::optional<UpcastPlan> q = replanned(sink, target, plan, p, rows);
    if (!q || q->k_tile <= 0) return std::nullopt;
    return p;
  }
  return std::nullopt;
}

/// The operands of a weight gradient over the batch (see optimize.hpp) in panels: b, read along
/// the columns a row of b apart per batch step, in panels of the column block (under the same
/// conditions as a constant k's b, the batch standing for k); then a, read along the rows a
/// row of a apart per batch step, in panels of the row block (with 256 or more columns, as for
/// the row operand above). The kernel reorders its loops column blocks outermost for a
/// batch-sized k (see choose_upcast): each column block's panel is then read by every row
/// block, and the row blocks' panels of a stream. On an AMD EPYC Milan host, 2 threads, the
/// loops written out in C (dW = dy.T @ x, 1024 x 512 x 1024, the SGD update fused in): 12.9 ms
/// as they were, 9.7 with b in panels, 5.7 with a as well.
std::optional<PanelPacking> batch_panels(const UOpRef& sink, const Target& target,
                                         const UpcastPlan& plan,
                                         const std::vector<const UOp*>& order, const UOp* k,
                                         int64_t batch) {
  if (plan.i == nullptr || plan.rows < 2 || plan.k != k || plan.k_tile != 0 ||
      plan.j->src(0)->op() != Op::CONST || k->src(0)->op() != Op::DEFINE_VAR)
    return std::nullopt;
  const int64_t panel = int64_t{plan.vectors} * plan.lanes;
  const std::vector<Operand> ops = operands(order, plan.j, k, plan.i);
  auto checked = [&](const PanelPacking& p) -> std::optional<PanelPacking> {
    if (!replanned(sink, target, plan, p, 0)) return std::nullopt;
    return p;
  };
  const UOp* var = k->src(0).get();
  for (const Operand& o : ops) {
    if (plan.tail || o.cj != 1 || o.ci != 0 || !o.ck || *o.ck <= 0 || *o.ck % panel != 0 ||
        !read_alone(ops, o) || !column_panels_pay(o, batch * *o.ck * o.elem, panel, target))
      continue;
    return checked(PanelPacking{.slot = o.slot, .row = *o.ck, .panel = panel, .rows_var = var});
  }
  // Fewer columns than kMinColumns too when a's rows fall into a few L1 sets: then every batch
  // step's line of a misses (dW = dy.T @ x, dy (512, 2048), kernel minima on an AMD EPYC
  // Milan, copy included: 128 columns 5.0-6.8 -> 3.8-5.9 ms, 200 9.4 -> 6.3, 64 2.3 -> 1.9).
  const bool wide = plan.j->src(0)->arg_int() >= kMinColumns;
  for (const Operand& o : ops) {
    if (o.ci != 1 || o.cj != 0 || !o.ck || *o.ck < plan.rows || !read_alone(ops, o) ||
        batch * *o.ck * o.elem <= CacheBudget(target).whole_b() ||
        !(wide || in_few_sets(*o.ck * o.elem)))
      continue;
    return checked(PanelPacking{.slot = o.slot, .row = *o.ck, .panel = plan.rows, .rows_var = var});
  }
  return std::nullopt;
}

}  // namespace

std::optional<PanelPacking> panel_packing(const UOpRef& sink, const Target& target, int64_t rows,
                                          int64_t batch) {
  if ((target.caps.flags & PG_CAP_GROUPS) || rows < cpu_tuning::kMinPanelRows) return std::nullopt;
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
  if (k != nullptr && batch > 0) return batch_panels(sink, target, plan, order, k, batch);
  if (k == nullptr || k->src(0)->op() != Op::CONST) return std::nullopt;
  const int64_t ek = k->src(0)->arg_int();
  const int64_t panel = int64_t{plan.vectors} * plan.lanes;
  if (plan.i != nullptr && plan.rows > 1)
    for (const Operand& o : operands(order, plan.j, k, plan.i)) {
      if (o.ci != 1 || o.cj != 0 || !o.ck || *o.ck < rows) continue;
      const int64_t bytes = ek * *o.ck * o.elem;
      if (bytes <= 2 * CacheBudget(target).whole_b() || bytes > kMaxTransposeBytes) continue;
      return PanelPacking{o.slot, *o.ck, 0, true, true};
    }
  const std::vector<Operand> ops = operands(order, plan.j, k);
  if (!plan.tail) {
    for (const Operand& o : ops) {
      if (o.cj != 1 || !o.ck || *o.ck <= 0 || *o.ck % panel != 0 ||
          !column_panels_pay(o, ek * *o.ck * o.elem, panel, target))
        continue;
      return PanelPacking{o.slot, *o.ck, panel, false};
    }
  } else {
    // A tail plan, whose moved-back vectors would cross panels of a view copy: column panels
    // written over b's rows, the last one partial, when its moved-back vector (the last W
    // columns) lies within one panel (777 columns of 8 lanes: 769..776 in the panel of
    // 768..783); else, when b's rows share a few L1 sets, one panel of padded rows (1025:
    // 1017..1024 would cross two panels).
    const int64_t ej = plan.j->src(0)->arg_int();
    const bool last_in_panel = (ej - plan.lanes) / panel == (ej - 1) / panel;
    for (const Operand& o : ops) {
      if (o.cj != 1 || !o.ck || *o.ck < ej || !read_alone(ops, o)) continue;
      const int64_t bytes = ek * *o.ck * o.elem;
      int64_t cols = 0;
      if (last_in_panel && column_panels_pay(o, bytes, panel, target)) {
        cols = panel;
      } else if (in_few_sets(*o.ck * o.elem) && bytes > CacheBudget(target).whole_b()) {
        cols = upcast::ceil_div(*o.ck, panel) * panel;
        while (in_few_sets(cols * o.elem)) cols += panel;
      }
      if (cols == 0) continue;
      const PanelPacking p{.slot = o.slot, .row = *o.ck, .panel = cols, .padded = true};
      if (!replanned(sink, target, plan, p, ek)) return std::nullopt;
      return p;
    }
  }
  return row_operand_in_panels(sink, target, plan, order, k, rows);
}

}  // namespace polygrad::codegen
