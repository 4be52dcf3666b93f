// See symbolic_schedule.hpp.
#include "runtime/symbolic_schedule.hpp"

#include "ir/graph.hpp"

#include <unordered_map>
#include <variant>

namespace polygrad::runtime {

namespace {

bool is_size_const(const UOp* u) {
  return u->op() == Op::CONST && u->dtype().is_signed_int() && !u->dtype().is_vector() &&
         std::holds_alternative<int64_t>(u->arg());
}

/// A kernel AST as positions: its nodes but the integer constants, in toposort order, each
/// source a position or a slot holding a constant.
struct Positions {
  static constexpr uint32_t kSlot = UINT32_MAX;
  std::vector<const UOp*> order;
  std::vector<std::vector<uint32_t>> srcs;
  std::vector<int64_t> values;
  std::vector<DType> dtypes;

  explicit Positions(const UOpRef& root) {
    std::unordered_map<const UOp*, uint32_t> pos;
    for (const UOp* u : toposort(root)) {
      if (is_size_const(u)) continue;
      pos.emplace(u, static_cast<uint32_t>(order.size()));
      order.push_back(u);
      std::vector<uint32_t>& s = srcs.emplace_back();
      for (const UOpRef& src : u->srcs()) {
        if (is_size_const(src.get())) {
          s.push_back(kSlot);
          values.push_back(src->arg_int());
          dtypes.push_back(src->dtype());
        } else {
          s.push_back(pos.at(src.get()));
        }
      }
    }
  }

  bool aligned(const Positions& o) const {
    if (order.size() != o.order.size() || srcs != o.srcs || dtypes != o.dtypes) return false;
    for (size_t i = 0; i < order.size(); ++i) {
      const UOp *a = order[i], *b = o.order[i];
      if (a->op() != b->op() || a->dtype() != b->dtype()) return false;
      // (A kernel's own variable, n0, declares the most its offsets allow at this value of
      // the graph's: generalize() declares it anew.)
      if (a->op() == Op::DEFINE_VAR) {
        if (a->arg_var().name != b->arg_var().name || a->arg_var().vmin != b->arg_var().vmin)
          return false;
      } else if (!arg_equal(a->arg(), b->arg())) {
        return false;
      }
    }
    return true;
  }
};

}  // namespace

std::optional<SizeRule> fit_rule(const std::vector<int64_t>& ts, const std::vector<int64_t>& qs) {
  auto fits = [&](const SizeRule& r) {
    for (size_t i = 0; i < ts.size(); ++i)
      if (r.at(ts[i]) != qs[i]) return false;
    return true;
  };
  if (ts.size() < 3) return std::nullopt;
  const __int128 t0 = ts[0], t1 = ts[1], t2 = ts[2], q0 = qs[0], q1 = qs[1], q2 = qs[2];
  // Guard the products below: sizes and probes stay far below 2^31 in practice.
  for (int64_t t : ts)
    if (t > (int64_t{1} << 31) || t < -(int64_t{1} << 31)) return std::nullopt;
  if (fits({0, 0, qs[0]})) return SizeRule{0, 0, qs[0]};
  if ((q1 - q0) % (t1 - t0) == 0) {
    const int64_t b = static_cast<int64_t>((q1 - q0) / (t1 - t0));
    const SizeRule r{0, b, static_cast<int64_t>(q0 - b * t0)};
    if (fits(r)) return r;
  }
  const __int128 num = (q2 - q0) * (t1 - t0) - (q1 - q0) * (t2 - t0);
  const __int128 den = (t2 - t0) * (t1 - t0) * (t2 - t1);
  if (den == 0 || num % den != 0) return std::nullopt;
  const __int128 a = num / den;
  const __int128 rest = (q1 - q0) - a * (t1 * t1 - t0 * t0);
  if (rest % (t1 - t0) != 0) return std::nullopt;
  const __int128 b = rest / (t1 - t0);
  const SizeRule r{static_cast<int64_t>(a), static_cast<int64_t>(b),
                   static_cast<int64_t>(q0 - a * t0 * t0 - b * t0)};
  if (fits(r)) return r;
  return std::nullopt;
}

bool same_kernel_structure(const UOpRef& a, const UOpRef& b) {
  return Positions(a).aligned(Positions(b));
}

std::optional<UOpRef> generalize_kernel(const std::vector<UOpRef>& asts,
                                        const std::vector<int64_t>& ts, const UOpRef& var) {
  std::vector<Positions> ps;
  for (const UOpRef& a : asts) ps.emplace_back(a);
  for (size_t i = 1; i < ps.size(); ++i)
    if (!ps[0].aligned(ps[i])) return std::nullopt;
  const Positions& p = ps[0];
  std::vector<UOpRef> slots;
  for (size_t k = 0; k < p.values.size(); ++k) {
    std::vector<int64_t> qs;
    for (const Positions& o : ps) qs.push_back(o.values[k]);
    std::optional<SizeRule> r = fit_rule(ts, qs);
    if (!r) return std::nullopt;
    if (r->constant()) {
      slots.push_back(const_int(p.dtypes[k], r->c));
      continue;
    }
    UOpRef e;
    auto add = [&](UOpRef t) { e = e ? e + t : t; };
    if (r->a != 0) add(r->a == 1 ? var * var : var * var * r->a);
    if (r->b != 0) add(r->b == 1 ? var : var * r->b);
    if (r->c != 0) add(const_int(dtypes::index, r->c));
    slots.push_back(p.dtypes[k] == var->dtype() ? e : cast(e, p.dtypes[k]));
  }
  std::vector<UOpRef> made(p.order.size());
  size_t next = 0;
  for (size_t i = 0; i < p.order.size(); ++i) {
    std::vector<UOpRef> s;
    for (uint32_t j : p.srcs[i]) s.push_back(j == Positions::kSlot ? slots[next++] : made[j]);
    made[i] = p.order[i]->with_srcs(s);
  }
  return made.back();
}

}  // namespace polygrad::runtime
