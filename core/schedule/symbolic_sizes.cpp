// See symbolic_sizes.hpp.
#include "schedule/symbolic_sizes.hpp"

#include "codegen/affine.hpp"
#include "ir/graph.hpp"
#include "symbolic/bounds.hpp"
#include "tensor/lazy.hpp"

#include <algorithm>
#include <climits>
#include <functional>
#include <set>
#include <unordered_map>

namespace polygrad::schedule {

namespace {

/// The DEFINE_VARs among `order` that `vars` binds, by the value bound.
std::unordered_map<int64_t, UOpRef> vars_by_value(const std::vector<const UOp*>& order,
                                                  const VarValues& vars) {
  std::unordered_map<int64_t, UOpRef> out;
  for (const UOp* u : order)
    if (u->op() == Op::DEFINE_VAR)
      for (const auto& [name, value] : vars)
        if (u->arg_var().name == name) out.emplace(value, u->ref());
  return out;
}

/// The coefficient of `r` in the offset `off` with every value loaded from memory taken as free
/// of r: a row's element picked by a loaded index (a class's logit, r * classes + label[r])
/// walks the rows with the row's stride.
std::optional<int64_t> coefficient_past_loads(const UOpRef& off, const UOp* r) {
  std::unordered_map<const UOp*, UOpRef> loads;
  for (const UOp* u : toposort(off))
    if (u->op() == Op::LOAD)
      loads.emplace(
          u, define_var("loaded" + std::to_string(loads.size()), INT64_MIN, INT64_MAX, u->dtype()));
  if (loads.empty()) return codegen::coefficient(off.get(), r);
  const UOpRef free = substitute(off, loads);
  return codegen::coefficient(free.get(), r);
}

/// True when the reduce range `r` (constant extent) is the outermost axis of every buffer it
/// walks.
bool walks_outer_axis(const std::vector<const UOp*>& order, const UOp* r,
                      const std::vector<UOpRef>& buffers) {
  const int64_t n = r->src(0)->arg_int();
  bool walks = false;
  for (const UOp* u : order) {
    if (u->op() != Op::INDEX || u->src(0)->op() != Op::DEFINE_GLOBAL) continue;
    const std::optional<int64_t> c = coefficient_past_loads(u->src(1), r);
    if (c && *c == 0) continue;
    const auto slot = static_cast<size_t>(u->src(0)->arg_int());
    if (!c || *c < 0 || slot >= buffers.size() || *c * n != lazy::buffer_count(buffers[slot].get()))
      return false;
    walks = true;
  }
  return walks;
}

/// The reduce ranges of `order` (a kernel's nodes) that run over the batch: a constant extent
/// of 2 or more that is the outermost axis of every buffer it walks. In order, each once.
std::vector<const UOp*> batch_ranges(const std::vector<const UOp*>& order,
                                     const std::vector<UOpRef>& buffers) {
  std::vector<const UOp*> out;
  for (const UOp* u : order) {
    if (u->op() != Op::REDUCE) continue;
    for (size_t i = 1; i < u->nsrcs(); ++i) {
      const UOp* r = u->src(i).get();
      if (r->src(0)->op() == Op::CONST && r->src(0)->arg_int() >= 2 &&
          std::find(out.begin(), out.end(), r) == out.end() && walks_outer_axis(order, r, buffers))
        out.push_back(r);
    }
  }
  return out;
}

}  // namespace

namespace {

/// int32_extent_limit and int32_var_limit: the largest `most` up to INT32_MAX for which the
/// buffer offsets of `ast`, with `node` replaced by at(most), stay within half the int32 range.
int64_t int32_limit(const UOpRef& ast, const UOp* node, const std::function<UOpRef(int64_t)>& at,
                    int64_t at_least) {
  std::vector<UOpRef> offsets;
  for (const UOp* u : toposort(ast))
    if (u->op() == Op::INDEX && u->src(0)->op() == Op::DEFINE_GLOBAL) offsets.push_back(u->src(1));
  // (Not an offset beyond the limit at `at_least` already: one that adds a value read from
  // the data, a gather's, whose bounds are the dtype's; its kernel keeps 64-bit math anyway.)
  auto reach_of = [](const UOpRef& o) {
    const std::optional<Bounds> b = bounds(o);
    return !b || b->lo == INT64_MIN ? INT64_MAX : std::max({int64_t{0}, -b->lo, b->hi});
  };
  const UOpRef first =
      substitute(UOp::make(Op::SINK, dtypes::void_, offsets), {{node, at(at_least)}});
  std::vector<UOpRef> moved;
  for (size_t i = 0; i < offsets.size(); ++i)
    if (reach_of(first->src(i)) <= INT32_MAX / 2) moved.push_back(offsets[i]);
  if (moved.empty()) return INT32_MAX;
  const UOpRef all = UOp::make(Op::SINK, dtypes::void_, moved);
  // How far from 0 an offset may go with the extent at most `most` (INT64_MAX: unbounded).
  auto reach = [&](int64_t most) {
    const UOpRef with = substitute(all, {{node, at(most)}});
    int64_t worst = 0;
    for (const UOpRef& o : with->srcs()) worst = std::max(worst, reach_of(o));
    return worst;
  };
  // (half the range: the counts and tile ends computed beside the offsets, n * 4096 beside
  // (n - 1) * 4096 + 4095, must fit too)
  auto fits = [&](int64_t most) { return reach(most) <= INT32_MAX / 2; };
  if (fits(INT32_MAX)) return INT32_MAX;  // (fits(at_least) holds: `moved` fit there)
  // Offsets are affine in the extent (a * n + b, clamps included) in every kernel the
  // scheduler builds: two reaches give the answer, checked; bisection otherwise.
  const int64_t r1 = reach(at_least), r2 = reach(at_least + 1);
  if (r2 > r1) {
    const int64_t a = r2 - r1, b = r1 - a * at_least;
    const int64_t guess = (INT32_MAX / 2 - b) / a;
    if (guess >= at_least && guess < INT32_MAX && fits(guess) && !fits(guess + 1)) return guess;
  }
  int64_t lo = at_least, hi = INT32_MAX;  // fits(lo), !fits(hi)
  while (hi - lo > 1) {
    const int64_t mid = lo + (hi - lo) / 2;
    (fits(mid) ? lo : hi) = mid;
  }
  return lo;
}

}  // namespace

int64_t int32_extent_limit(const UOpRef& ast, const UOp* r, int64_t at_least) {
  return int32_limit(
      ast, r, [&](int64_t most) { return range(define_var("n", 1, most), r->arg_int()); },
      at_least);
}

int64_t int32_var_limit(const UOpRef& ast, const UOp* var, int64_t at_least) {
  const Var& v = var->arg_var();
  return int32_limit(
      ast, var, [&](int64_t most) { return define_var(v.name, v.vmin, most, var->dtype()); },
      at_least);
}

int64_t symbolic_reduces(UOpRef& ast, const std::vector<UOpRef>& buffers, VarValues& vars) {
  const std::vector<const UOp*> order = toposort(ast);
  std::unordered_map<const UOp*, UOpRef> subs;
  int64_t batch = 0;
  // Each range its own variable, whatever its value: a batch that happens to equal another
  // extent (the output rows of a weight gradient, 32 hidden units at batch 32) would otherwise
  // share that extent's variable at that size only, and its kernel compile once more.
  for (const UOp* r : batch_ranges(order, buffers)) {
    const int64_t n = r->src(0)->arg_int();
    const int64_t most = int32_extent_limit(ast, r, n);
    if (batch == 0) batch = n;
    std::string name = "n";  // (not "n" + ...: GCC 12 warns -Wrestrict on that)
    name += std::to_string(vars.size());
    vars.emplace_back(name, n);
    subs.emplace(r, range(define_var(name, 1, most), r->arg_int()));
  }
  if (!subs.empty()) ast = substitute(ast, subs);
  return batch;
}

bool reduces_over_batch(const UOpRef& ast, const std::vector<UOpRef>& buffers) {
  return !batch_ranges(toposort(ast), buffers).empty();
}

namespace {

/// The REDUCE that the count cast `u` divides, when the kernel reads it so (a mean's
/// sum * 1/float(n), a variance's sum / float(n)): the other operand of the MUL by u's RECIP, or
/// of the FDIV by u. Null otherwise (a mean's gradient scales by the count with no sum).
const UOp* divided_reduce(const UOp* u,
                          const std::unordered_multimap<const UOp*, const UOp*>& users) {
  const UOp* by = u;
  auto recip = users.equal_range(u);
  for (auto it = recip.first; it != recip.second; ++it)
    if (it->second->op() == Op::RECIP) by = it->second;
  auto range = users.equal_range(by);
  for (auto it = range.first; it != range.second; ++it) {
    const UOp* m = it->second;
    const bool divides = (by != u && m->op() == Op::MUL) || (by == u && m->op() == Op::FDIV);
    if (!divides) continue;
    for (const UOpRef& s : m->srcs())
      if (s.get() != by && s->op() == Op::REDUCE) return s.get();
  }
  return nullptr;
}

}  // namespace

void symbolic_counts(UOpRef& ast, const VarValues& vars) {
  if (vars.empty()) return;
  const std::vector<const UOp*> order = toposort(ast);
  std::set<int64_t> other{1};  // 1 and the constant extents: a mean over (batch, q)
  std::unordered_multimap<const UOp*, const UOp*> users;
  for (const UOp* u : order) {
    if (u->op() == Op::RANGE && u->src(0)->op() == Op::CONST) other.insert(u->src(0)->arg_int());
    for (const UOpRef& s : u->srcs()) users.emplace(s.get(), u);
  }
  const std::unordered_map<int64_t, UOpRef> by_value = vars_by_value(order, vars);
  std::unordered_map<const UOp*, UOpRef> subs;
  for (const UOp* u : order) {
    if (u->op() != Op::CAST || !u->dtype().is_float() || u->dtype().is_vector()) continue;
    const UOp* k = u->src(0).get();
    if (k->op() != Op::CONST || !std::holds_alternative<int64_t>(k->arg())) continue;
    const int64_t count = k->arg_int();
    // A count that divides a sum over constant ranges only, as many terms as it counts (a
    // layernorm's mean over the features), is that sum's size and stays: a batch of the same
    // value would otherwise take it, at that batch size only.
    if (const UOp* red = divided_reduce(u, users)) {
      int64_t terms = 1;
      bool constant = true;
      for (size_t i = 1; i < red->nsrcs(); ++i) {
        const UOp* extent = red->src(i)->src(0).get();
        constant = constant && extent->op() == Op::CONST;
        if (extent->op() == Op::CONST) terms *= extent->arg_int();
      }
      if (constant && terms == count) continue;
    }
    for (const auto& [name, n] : vars) {  // in order: the first match, every time
      auto var = by_value.find(n);
      if (n < 2 || count < n || count % n != 0 || !other.count(count / n) || var == by_value.end())
        continue;  // (count < n: q = 0, a count over an empty axis is no size)
      const int64_t q = count / n;
      subs.emplace(u, cast(q > 1 ? var->second * q : var->second, u->dtype()));
      break;
    }
  }
  if (!subs.empty()) ast = substitute(ast, subs);
}

}  // namespace polygrad::schedule
