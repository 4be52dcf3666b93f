// See unroll.hpp.
#include "codegen/unroll.hpp"

#include "codegen/rebuild.hpp"
#include "ir/graph.hpp"
#include "symbolic/simplify.hpp"

#include <algorithm>
#include <numeric>
#include <unordered_set>
#include <vector>

namespace polygrad::codegen {

namespace {

constexpr int64_t kMaxCopies = 64;

bool is_const(const UOp* u) {
  return u->op() == Op::CONST;
}

bool const_true(const UOp* u) {
  return is_const(u) && !is_zero_const(u);
}

/// True when `v` is integer index math and comparisons only (no loaded value): what the
/// symbolic engine may rewrite.
bool index_only(const UOpRef& v) {
  if (v->dtype().is_vector()) return false;
  for (const UOp* u : toposort(v))
    if (u->op() == Op::LOAD || u->dtype().is_float()) return false;
  return true;
}

/// `n` with what a constant gate decides folded: gated loads to their value or their
/// alternative, selects to the side they pick, and the zero sums that the dropped pieces leave.
UOpRef fold_gates(const UOpRef& root) {
  return rebuild(root, [](const UOpRef& n) -> UOpRef {
    switch (n->op()) {
      case Op::LOAD: {
        if (n->nsrcs() != 3) return n;
        const UOpRef g = index_only(n->src(2)) ? simplify(n->src(2)) : n->src(2);
        if (is_const(g.get()))
          return const_true(g.get()) ? UOp::make(Op::LOAD, n->dtype(), {n->src(0)}, n->arg())
                                     : n->src(1);
        return n;
      }
      case Op::WHERE: {
        const UOpRef c = index_only(n->src(0)) ? simplify(n->src(0)) : n->src(0);
        if (is_const(c.get())) return const_true(c.get()) ? n->src(1) : n->src(2);
        return n;
      }
      case Op::ADD:
        if (n->dtype().is_vector()) return n;
        if (is_zero_const(n->src(0).get())) return n->src(1);
        if (is_zero_const(n->src(1).get())) return n->src(0);
        return n;
      default:
        return n;
    }
  });
}

size_t loads(const UOpRef& v) {
  size_t n = 0;
  for (const UOp* u : toposort(v)) n += u->op() == Op::LOAD;
  return n;
}

/// The ranges the unrolling passes leave alone: those a REDUCE binds, and the outermost output
/// range (the launch's dimension).
struct KeptRanges {
  explicit KeptRanges(const std::vector<const UOp*>& order) {
    for (const UOp* u : order)
      if (u->op() == Op::REDUCE)
        for (size_t i = 1; i < u->nsrcs(); ++i) reduced.insert(u->src(i).get());
    for (const UOp* u : order)
      if (u->op() == Op::RANGE && !reduced.count(u) && (!outer || u->arg_int() < outer->arg_int()))
        outer = u;
  }
  bool operator()(const UOp* r) const { return r == outer || reduced.count(r) != 0; }
  std::unordered_set<const UOp*> reduced;
  const UOp* outer = nullptr;
};

/// The output ranges of `sink` that a constant extent lets unroll and a comparison with a
/// constant marks as a selector, the outermost (the launch's dimension) left out.
std::vector<const UOp*> selector_ranges(const UOpRef& sink) {
  const std::vector<const UOp*> order = toposort(sink);
  const KeptRanges kept(order);
  std::vector<const UOp*> out;
  for (const UOp* u : order) {
    if (!is_compare(u->op()) || u->nsrcs() != 2) continue;
    for (int s = 0; s < 2; ++s) {
      const UOp* r = u->src(s).get();
      if (r->op() != Op::RANGE || kept(r) || !is_const(u->src(1 - s).get())) continue;
      const UOp* e = r->src(0).get();
      if (!is_const(e) || e->arg_int() < 2 || e->arg_int() > kMaxCopies) continue;
      if (std::find(out.begin(), out.end(), r) == out.end()) out.push_back(r);
    }
  }
  return out;
}

/// The output ranges r of `sink` (constant extent, not the outermost) that an index reads as
/// (r + k) // c or (r + k) % c, with c a constant from 2 to kMaxStride dividing the extent, and
/// that c (the first one found per range).
constexpr int64_t kMaxStride = 4;
std::vector<std::pair<const UOp*, int64_t>> strided_ranges(const UOpRef& sink) {
  const std::vector<const UOp*> order = toposort(sink);
  const KeptRanges kept(order);
  std::vector<std::pair<const UOp*, int64_t>> out;
  for (const UOp* u : order) {
    if ((u->op() != Op::MOD && u->op() != Op::IDIV) || !is_const(u->src(1).get())) continue;
    const UOp* r = u->src(0).get();
    if (r->op() == Op::ADD && is_const(r->src(1).get())) r = r->src(0).get();
    const int64_t c = u->src(1)->arg_int();
    if (r->op() != Op::RANGE || kept(r) || c < 2 || c > kMaxStride || !is_const(r->src(0).get()) ||
        r->src(0)->arg_int() % c != 0)
      continue;
    bool seen = false;
    for (const auto& [q, _] : out) seen = seen || q == r;
    if (!seen) out.emplace_back(r, c);
  }
  return out;
}

/// For each output range r of `sink` (constant extent E, not the outermost) compared with
/// constants (r < c, c < r, r == c, r != c), the segment length S: the greatest common
/// divisor of E and of the places where a comparison can change its answer, when it is at
/// least 2 and leaves 2 to kMaxCopies segments.
std::vector<std::pair<const UOp*, int64_t>> segmented_ranges(const UOpRef& sink) {
  const std::vector<const UOp*> order = toposort(sink);
  const KeptRanges kept(order);
  std::vector<std::pair<const UOp*, int64_t>> out;  // (range, gcd so far)
  for (const UOp* u : order) {
    if (!is_compare(u->op()) || u->nsrcs() != 2) continue;
    for (int s = 0; s < 2; ++s) {
      const UOp* r = u->src(s).get();
      const UOp* c = u->src(1 - s).get();
      if (r->op() != Op::RANGE || kept(r) || !is_const(c) || !is_const(r->src(0).get())) continue;
      // r < c changes at c, c < r at c + 1, r == c and r != c at both.
      std::vector<int64_t> at;
      if (u->op() != Op::CMPLT || s == 0) at.push_back(c->arg_int());
      if (u->op() != Op::CMPLT || s == 1) at.push_back(c->arg_int() + 1);
      auto it = std::find_if(out.begin(), out.end(), [&](const auto& e) { return e.first == r; });
      if (it == out.end()) it = out.insert(out.end(), {r, r->src(0)->arg_int()});
      for (int64_t b : at)
        if (b > 0 && b < r->src(0)->arg_int()) it->second = std::gcd(it->second, b);
    }
  }
  std::vector<std::pair<const UOp*, int64_t>> split;
  for (const auto& [r, len] : out) {
    const int64_t segments = r->src(0)->arg_int() / len;
    if (len >= 2 && segments >= 2 && segments <= kMaxCopies) split.emplace_back(r, len);
  }
  return split;
}

/// `st` stored once per value p < copies of `r` = p * step + `inner` (`inner` null: p alone),
/// with the gates folded; empty when some copy loads as much as `st`, so nothing is gained.
std::vector<UOpRef> copies_of(const UOpRef& st, const UOp* r, int64_t copies, int64_t step,
                              const UOpRef& inner) {
  const size_t before = loads(st);
  std::vector<UOpRef> out;
  for (int64_t p = 0; p < copies; ++p) {
    const UOpRef at = UOp::make(Op::CONST, r->dtype(), {}, p * step);
    UOpRef copy = fold_gates(simplify_indexing(substitute_range(st, r, inner ? at + inner : at)));
    if (copy->nsrcs() == 3 && is_const(copy->src(2).get())) {
      if (!const_true(copy->src(2).get())) continue;  // a store never made
      copy = UOp::make(Op::STORE, copy->dtype(), {copy->src(0), copy->src(1)}, copy->arg());
    }
    if (loads(copy) >= before) return {};
    out.push_back(copy);
  }
  return out;
}

/// `sink` with each store replaced by its `copies`, or unchanged when some store has none.
template <typename Copies>
UOpRef replace_stores(const UOpRef& sink, const Copies& copies) {
  std::vector<UOpRef> stores;
  for (const UOpRef& st : sink->srcs()) {
    std::vector<UOpRef> c = copies(st);
    if (c.empty()) return sink;
    stores.insert(stores.end(), c.begin(), c.end());
  }
  return UOp::make(Op::SINK, sink->dtype(), stores, sink->arg());
}

}  // namespace

UOpRef unroll_segments(const UOpRef& sink) {
  UOpRef out = sink;
  for (const auto& [r, len] : segmented_ranges(sink)) {
    const UOpRef inner = range(const_int(r->dtype(), len), r->arg_int());
    out = replace_stores(out, [&, r = r, len = len](const UOpRef& st) {
      return copies_of(st, r, r->src(0)->arg_int() / len, len, inner);
    });
  }
  return out;
}

UOpRef unroll_strides(const UOpRef& sink) {
  UOpRef out = sink;
  for (const auto& [r, c] : strided_ranges(sink)) {
    const UOpRef q = range(const_int(r->dtype(), r->src(0)->arg_int() / c), r->arg_int());
    out = replace_stores(
        out, [&, r = r, c = c](const UOpRef& st) { return copies_of(st, r, c, 1, q * c); });
  }
  return out;
}

UOpRef unroll_selectors(const UOpRef& sink) {
  UOpRef out = sink;
  for (const UOp* r : selector_ranges(sink)) {
    const int64_t extent = r->src(0)->arg_int();
    std::vector<UOpRef> stores;
    bool fewer = true;
    for (const UOpRef& st : out->srcs()) {
      const size_t before = loads(st);
      for (int64_t v = 0; v < extent && fewer; ++v) {
        UOpRef copy = fold_gates(
            simplify_indexing(substitute_range(st, r, UOp::make(Op::CONST, r->dtype(), {}, v))));
        if (copy->nsrcs() == 3 && is_const(copy->src(2).get())) {
          if (!const_true(copy->src(2).get())) continue;  // a store never made
          copy = UOp::make(Op::STORE, copy->dtype(), {copy->src(0), copy->src(1)}, copy->arg());
        }
        fewer = loads(copy) < before;
        stores.push_back(copy);
      }
    }
    if (fewer) out = UOp::make(Op::SINK, out->dtype(), stores, out->arg());
  }
  return out;
}

UOpRef unroll_small_reduces(const UOpRef& sink) {
  constexpr int64_t kMaxTerms = 16;
  return rebuild(sink, [](const UOpRef& n) -> UOpRef {
    if (n->op() != Op::REDUCE || n->dtype().is_vector()) return n;
    int64_t terms = 1;
    for (size_t i = 1; i < n->nsrcs(); ++i) {
      const UOp* e = n->src(i)->src(0).get();
      if (!is_const(e)) return n;
      terms *= e->arg_int();
      if (terms > kMaxTerms) return n;
    }
    const Op op = static_cast<Op>(n->arg_int());
    if (terms == 0) return reduce_identity(op, n->dtype());  // over an empty range
    UOpRef acc;
    std::vector<int64_t> at(n->nsrcs() - 1, 0);  // the ranges' values, the last fastest
    for (int64_t t = 0; t < terms; ++t) {
      UOpRef v = n->src(0);
      for (size_t i = 0; i < at.size(); ++i)
        v = substitute_range(v, n->src(i + 1).get(),
                             UOp::make(Op::CONST, n->src(i + 1)->dtype(), {}, at[i]));
      v = simplify_indexing(v);
      acc = acc ? alu(op, {acc, v}) : v;
      for (size_t i = at.size(); i-- > 0;) {
        if (++at[i] < n->src(i + 1)->src(0)->arg_int()) break;
        at[i] = 0;
      }
    }
    return acc;
  });
}

}  // namespace polygrad::codegen
