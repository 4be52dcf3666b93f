// Output upcasting; the transformation and its heuristic are described in optimize.hpp.
#include "codegen/optimize.hpp"

#include <algorithm>
#include <optional>
#include <vector>

#include "codegen/upcast_parts.hpp"
#include "ir/error.hpp"

namespace polygrad::codegen {

using namespace upcast;  // NOLINT: the pieces of this pass (upcast_parts.hpp)

namespace {

/// An elementwise kernel (no REDUCE) whose loads and stores are contiguous along its innermost
/// output range j: j becomes one W-lane vector per step. The explicit vector store is what
/// lets the linearizer hint large outputs as streaming (see linearize.cpp).
UpcastPlan choose_elementwise(const UOpRef& sink, const std::vector<const UOp*>& outputs,
                              const Target& target) {
  const UOp* j = outputs.back();
  const int64_t elem = sink->src(0)->src(1)->dtype().scalar_size();
  if (elem <= 0 || j->src(0)->op() != Op::CONST) return {};
  const int64_t w = lanes_dividing(target, elem, j->src(0)->arg_int());
  const bool any_op = (target.caps.flags & PG_CAP_EXPLICIT_SIMD) != 0;
  if (w < 2 || !vectorizable(sink, j, w, true, any_op)) return {};
  UpcastPlan plan;
  plan.j = j;
  plan.lanes = static_cast<int>(w);
  return plan;
}

/// Whether the row operand of a vector-form kernel is read in panels of its R-row blocks
/// (PanelPacking::row_operand): a load steps by R along k and not at all along j.
bool row_operand_in_panels(const std::vector<const UOp*>& order, const UOp* j, const UOp* k,
                           int rows) {
  for (const UOp* u : order)
    if (u->op() == Op::INDEX && u->src(0)->op() == Op::DEFINE_GLOBAL && u->src(0)->arg_int() != 0 &&
        coefficient(u->src(1).get(), j) == 0 && coefficient(u->src(1).get(), k) == rows)
      return true;
  return false;
}

/// A product of one row with a large b read along its rows (x @ w with x (1, k), w (k, n)):
/// out[j] = sum_k x[k] * w[k, j], no output range but j. Memory-bound: per launch step a
/// block of V*W columns over all of k reads V*W elements of each of k rows a row apart, too
/// few per row for the prefetchers (768 rows of 128 bytes per step, 201 KB apart: 35% of the
/// read bandwidth). Instead each launch step takes 16 KiB of every row (kRowProductBytes:
/// column blocks in groups), k in slices of KT rows (kRowProductKTile) outside the column
/// blocks, partial sums in the output (in L1): a slice reads KT runs of 16 KiB, streams the
/// prefetchers follow. A symbolic k (the scheduler may take it for a batch) counts as large.
/// `plan` is the vector form's (j, W, V, tail) with no row range; sets its vectors, k slices
/// and column groups and returns true when it applies.
bool one_row_product(const UOpRef& sink, const std::vector<const UOp*>& order, UpcastPlan& plan,
                     const Target& target) {
  if (sink->nsrcs() != 1) return false;
  const std::optional<AffineInReduce> stored = affine_in_reduce(sink->src(0)->src(1));
  if (!stored) return false;
  const UOp* rd = stored->reduce;
  if (rd->nsrcs() != 2 || static_cast<Op>(rd->arg_int()) != Op::ADD || !rd->dtype().is_float())
    return false;
  const UOp* k = rd->src(1).get();
  const UOp* j = plan.j;
  const int64_t ej = j->src(0)->arg_int();
  const bool fixed_k = k->src(0)->op() == Op::CONST;
  const int64_t ek = fixed_k ? k->src(0)->arg_int() : 0;
  bool row = false, large = false;  // a load of one row (free of j), a large b along j
  for (const UOp* u : order) {
    if (u->op() != Op::INDEX || u->src(0)->op() != Op::DEFINE_GLOBAL || u->src(0)->arg_int() == 0)
      continue;
    const std::optional<int64_t> cj = coefficient(u->src(1).get(), j);
    const std::optional<int64_t> ck = coefficient(u->src(1).get(), k);
    if (!cj || !ck) return false;
    const int64_t elem = u->src(0)->dtype().base().scalar_size();
    row = row || (*cj == 0 && *ck != 0);
    large = large || (*cj == 1 && *ck >= ej &&
                      (!fixed_k || ek * *ck * elem > CacheBudget(target).whole_b()));
  }
  if (!row || !large) return false;
  const int64_t elem = sink->src(0)->src(1)->dtype().scalar_size();
  // (Without a tail, V divides the columns' vectors: no block runs past the row.)
  int64_t vectors = vector_registers(target) > 16 ? kMaxColumnVectors : kMaxColumnVectors / 2;
  while (!plan.tail && vectors > plan.vectors && (ej / plan.lanes) % vectors != 0) vectors /= 2;
  const int64_t block = vectors * plan.lanes;
  const int64_t blocks = ceil_div(ej, block);
  const int64_t units = std::max<int64_t>(1, target.caps.compute_units);
  if (blocks < 2 * units || (fixed_k && ek < 2 * cpu_tuning::kRowProductKTile)) return false;
  UpcastPlan q = plan;
  q.vectors = static_cast<int>(vectors);
  q.k = k;
  q.k_tile = static_cast<int>(cpu_tuning::kRowProductKTile);
  for (int64_t cb = cpu_tuning::kRowProductBytes / (block * elem); cb >= 2; cb /= 2)
    if (groups_blocks(q, blocks, cb) && ceil_div(blocks, cb) >= 2 * units) {
      q.col_blocks = static_cast<int>(cb);
      break;
    }
  plan = q;
  return true;
}

}  // namespace

UpcastPlan choose_upcast(const UOpRef& sink, const Target& target) {
  std::vector<const UOp*> order = toposort(sink);
  std::vector<int64_t> reduced;
  bool constant_k = true;  // every reduce range of a constant extent
  for (const UOp* u : order)
    if (u->op() == Op::REDUCE)
      for (size_t i = 1; i < u->nsrcs(); ++i) {
        reduced.push_back(u->src(i)->arg_int());
        constant_k = constant_k && u->src(i)->src(0)->op() == Op::CONST;
      }
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
  // With 16 registers, so too when full vectors divide the columns but pairs of them do not
  // (1000 = 125 x 8): the plain plan would take V = 5 and only 2 rows (7 loads per 10 FMAs),
  // the tail plan the 6 x 2 tile. And when pairs divide them but an odd count of pairs (2000 =
  // 125 x 16) with a constant k, so the k slices' column groups can take a short last group.
  // On the AVX2 host, matmul 1000^3 17.0 -> 12.0 ms of kernel, 2000^3 166 -> 99 ms (2048^3:
  // 105).
  const bool odd_vectors = vector_registers(target) <= 16 && w == full &&
                           ((ej % (2 * w) != 0 && ej >= 8 * full) ||
                            ((ej / (2 * w)) % 2 != 0 && ej >= 64 * full && constant_k));
  const bool tail =
      elem > 0 && ((w < 2 && ej >= kMinTailLanes) || (w < full && ej >= 4 * full) || odd_vectors);
  if (tail) w = tail_lanes(target, elem, ej);
  if (!vectorizable(sink, j, w)) {
    UpcastPlan dot = choose_dot(sink, order, outputs, target);
    // No REDUCE depends on j (softmax's normalised row): where nothing vectorises scalar
    // loops, j is vectorised as an elementwise kernel's (its REDUCEs' lanes are the
    // linearizer's).
    if (dot.j == nullptr && (target.caps.flags & PG_CAP_EXPLICIT_SIMD) != 0)
      return choose_elementwise(sink, outputs, target);
    return dot;
  }
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

  if (plan.i == nullptr && one_row_product(sink, order, plan, target)) return plan;

  // No other output range to upcast (a column sum, its rows a row apart): up to 8 column
  // vectors per step, so each visit to a row reads 4 cache lines of its page, not one or two
  // (a page and a TLB entry per row, a row apart: on the AVX2 host a 4096 x 4096 column sum
  // 7.1 -> 3.1 ms, torch 4.6; its max 7.0 -> 3.8; 16384 x 512 2.5 -> 1.1. 16 vectors was no
  // faster in all, 32 slower).
  if (plan.i == nullptr && !tail) {
    const int64_t units = std::max<int64_t>(1, target.caps.compute_units);
    for (int64_t v = kMaxColumnVectors; v > plan.vectors; v /= 2)
      if ((ej / w) % v == 0 && ej / (v * w) >= 2 * units) {
        plan.vectors = static_cast<int>(v);
        break;
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
    // With 16 registers and a in panels, up to 16 column blocks, their slices of b the whole
    // of L2 (below).
    bool wide_groups = false;
    if (!fixed_k) {
      // A batch-sized k (weight gradients): whatever the batch, reusing each panel across the
      // row blocks beats streaming all of b past each (the MLP's first weight gradient at
      // batch 256, whose b is 784 KiB: 489 -> 321 us; 361 us as a constant k's one slice).
      if (blocks >= 2 * units) plan.k = rd->src(1).get();
    } else if (ek * row_bytes > cache.panel() && blocks >= units) {
      // (Column blocks outermost need a launch step per compute unit: a single block would
      // leave only the k slices to launch over, and they all add into the same outputs.)
      // With 32 registers, when column blocks can loop inside the row loop (below), the slice
      // is as long as the row block's slice of a (R rows of KT) fits half an L1: that is the
      // operand the CB column blocks share from L1 while their panels stream from L2 (BLIS's
      // order), and longer slices mean fewer passes over the partial sums (matmul 1024 on a
      // Sapphire Rapids host, KT 128 -> 512: 6.5 -> 5.9 ms; 2048: 55 -> 48 ms). With 16
      // registers, so too when a is read in panels of the row blocks (a row block's slice is
      // then contiguous); otherwise, as measured on AVX2, the slice of the panel stays in L1.
      bool groups = false;
      for (int64_t cb = 2; cb <= kMaxColBlocks; cb *= 2)
        groups = groups || (groups_blocks(plan, blocks, cb) && blocks / cb >= 2 * units);
      const bool a_panels = row_operand_in_panels(order, j, rd->src(1).get(), plan.rows);
      const bool a_slice = (registers > 16 || a_panels) && groups;
      wide_groups = registers <= 16 && a_panels;
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
    // The launch keeps at least two steps per compute unit. With 16 registers and a in
    // panels, a's slice of all rows is what streams from L3 once per column group (4 MiB at
    // matmul 2048 on AVX2, and per group of 64 columns 512 MiB in all), so groups are up to
    // 256 columns, their slices of b filling L2 (2048^3 on a Zen 3 host: 124-141 -> 114-116
    // ms in a C driver of the generated kernel; 1024^3 the same).
    if (plan.k != nullptr && plan.k_tile > 0) {
      const int64_t most = wide_groups ? 2 * kMaxColBlocks : kMaxColBlocks;
      const int64_t budget = wide_groups ? cache.l2 : cache.col_blocks();
      for (int64_t cb = most; cb >= 2; cb /= 2)
        if (groups_blocks(plan, blocks, cb) && blocks / cb >= 2 * units &&
            cb * plan.k_tile * row_bytes <= budget) {
          plan.col_blocks = static_cast<int>(cb);
          break;
        }
    }
  }
  return plan;
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
    // One k range sliced (k -> k0 * KT + k1), or the outer of two as k0 and the inner as k1.
    // A last slice shorter than KT (KT does not divide k, or k is symbolic: a one-row
    // product's) runs the k slices' remainder.
    const Slices sl(plan.k->src(0), plan.k_tile, id_k0);
    const UOpRef k0 = plan.k_outer != nullptr ? range(plan.k_outer->src(0), id_k0) : sl.slice;
    const UOpRef k1 =
        range(plan.k_outer != nullptr ? const_int(dtypes::index, plan.k_tile) : sl.length,
              plan.k->arg_int());
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
