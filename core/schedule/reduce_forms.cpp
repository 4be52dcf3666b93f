// Rewrites of a reduce's body into cheaper forms (see reduce_forms.hpp).
#include "schedule/reduce_forms.hpp"

#include "ir/graph.hpp"

#include <set>

namespace polygrad::schedule {

bool uses_any(const UOpRef& e, const std::set<const UOp*>& ranges) {
  for (const UOp* u : toposort(e))
    if (u->op() == Op::RANGE && ranges.count(u)) return true;
  return false;
}

const UOp* strip_int_casts(const UOp* e) {
  while (e->op() == Op::CAST && e->dtype().is_int()) e = e->src(0).get();
  return e;
}

UOpRef pick_one_hot(const UOpRef& value, const UOpRef& r) {
  const UOp* v = value.get();
  const bool cast_back = v->op() == Op::CAST;
  if (cast_back) v = v->src(0).get();
  if (v->op() != Op::WHERE || !is_zero_const(v->src(2).get()) || v->src(0)->op() != Op::CMPEQ)
    return {};
  const UOp* c = v->src(0).get();
  UOpRef e;
  for (size_t s = 0; s < 2; ++s)
    if (strip_int_casts(c->src(s).get()) == r.get()) e = c->src(1 - s);
  if (!e || !e->dtype().is_int()) return {};
  if (uses_any(e, {r.get()})) return {};
  const UOp* end = r->src(0).get();
  const UOpRef n =
      end->op() == Op::CONST ? const_like(e, end->arg_int()) : cast(end->ref(), e->dtype());
  const UOpRef valid = alu(Op::AND, {alu(Op::NOT, {lt(e, const_like(e, 0))}), lt(e, n)});
  const UOpRef at = cast(where(valid, e, const_like(e, 0)), dtypes::index);
  UOpRef picked = where(valid, substitute(v->src(1), {{r.get(), at}}), v->src(2));
  return cast_back ? cast(picked, value->dtype()) : picked;
}

UOpRef factor_out_invariant(UOpRef& value, const std::vector<UOpRef>& ranges) {
  const DType t = value->dtype();
  if (t != dtypes::float32 && t != dtypes::float64 && !t.is_int()) return {};
  std::set<const UOp*> reduced;
  for (const UOpRef& r : ranges) reduced.insert(r.get());
  std::vector<UOpRef> stack{value}, moving, fixed;
  while (!stack.empty()) {
    UOpRef f = stack.back();
    stack.pop_back();
    if (f->op() == Op::MUL && f->dtype() == t) {
      stack.push_back(f->src(1));
      stack.push_back(f->src(0));
      continue;
    }
    (uses_any(f, reduced) ? moving : fixed).push_back(f);
  }
  if (moving.empty() || fixed.empty()) return {};
  auto product = [](const std::vector<UOpRef>& fs) {
    UOpRef p = fs[0];
    for (size_t i = 1; i < fs.size(); ++i) p = alu(Op::MUL, {p, fs[i]});
    return p;
  };
  value = product(moving);
  return product(fixed);
}

}  // namespace polygrad::schedule
