// The scatter-add form of a one-hot sum over an output axis (see scatter.hpp).
#include "schedule/scatter.hpp"

#include "ir/graph.hpp"
#include "schedule/reduce_forms.hpp"

#include <algorithm>
#include <set>
#include <unordered_map>

namespace polygrad::schedule {

std::optional<OneHotSum> one_hot_over_output(const UOpRef& value, const std::vector<UOpRef>& ranges,
                                             Op op) {
  const DType t = value->dtype();
  if (op != Op::ADD || (t != dtypes::float32 && t != dtypes::float64 && !t.is_int())) return {};
  std::set<const UOp*> reduced;
  for (const UOpRef& r : ranges) reduced.insert(r.get());
  OneHotSum m;
  m.where = value;
  m.cast_back = value->op() == Op::CAST;
  if (m.cast_back) m.where = value->src(0);
  const UOpRef& body = m.where;
  if (body->op() != Op::WHERE || !is_zero_const(body->src(2).get()) ||
      body->src(0)->op() != Op::CMPEQ)
    return {};
  const UOp* cmp = body->src(0).get();
  for (size_t s = 0; s < 2 && !m.v; ++s) {
    const UOp* side = strip_int_casts(cmp->src(s).get());
    if (side->op() == Op::RANGE && !reduced.count(side)) {
      m.v = side;
      m.e = cmp->src(1 - s);
    }
  }
  if (!m.v || !m.e->dtype().is_int() || m.v->src(0)->op() != Op::CONST || !uses_any(m.e, reduced) ||
      uses_any(m.e, {m.v}))
    return {};
  return m;
}

UOpRef scatter_form(const UOpRef& ast) {
  if (ast->op() != Op::SINK || ast->nsrcs() != 1) return {};
  const UOpRef& store = ast->src(0);
  if (store->nsrcs() != 2) return {};
  const UOpRef& red = store->src(1);
  if (red->op() != Op::REDUCE) return {};
  const std::vector<UOpRef> ranges(red->srcs().begin() + 1, red->srcs().end());
  const std::optional<OneHotSum> m =
      one_hot_over_output(red->src(0), ranges, static_cast<Op>(red->arg_int()));
  if (!m) return {};
  const DType t = red->dtype();
  const UOp* v = m->v;
  const UOpRef& e = m->e;
  const UOpRef& body = m->where;
  const bool cast_back = m->cast_back;
  std::set<const UOp*> reduced, nested;  // (nested: the ranges of REDUCEs inside x)
  for (const UOpRef& r : ranges) reduced.insert(r.get());
  for (const UOp* u : toposort(body->src(1)))
    if (u->op() == Op::REDUCE)
      for (size_t i = 1; i < u->nsrcs(); ++i) nested.insert(u->src(i).get());
  // The other output ranges, outermost first, then the reduced ones.
  std::vector<const UOp*> outs, loops;
  for (const UOp* u : toposort(ast))
    if (u->op() == Op::RANGE && u != v && !nested.count(u)) {
      if (u->src(0)->op() != Op::CONST) return {};
      (reduced.count(u) ? loops : outs).push_back(u);
    }
  if (outs.empty()) return {};
  auto by_id = [](const UOp* a, const UOp* b) { return a->arg_int() < b->arg_int(); };
  std::sort(outs.begin(), outs.end(), by_id);
  std::sort(loops.begin(), loops.end(), by_id);
  int64_t id = 0;
  for (const UOp* u : toposort(ast))
    if (u->op() == Op::RANGE) id = std::max(id, u->arg_int() + 1);
  std::unordered_map<const UOp*, UOpRef> renumber;
  auto fresh = [&](int64_t extent) { return range(const_int(dtypes::index, extent), id++); };
  const UOp* inner = outs.back();
  const int64_t inner_extent = inner->src(0)->arg_int();
  const bool blocks = inner_extent % kScatterBlock == 0 && inner_extent > kScatterBlock;
  for (const UOp* u : outs)
    if (u != inner || !blocks) renumber.emplace(u, fresh(u->src(0)->arg_int()));
  UOpRef block = blocks ? fresh(inner_extent / kScatterBlock) : UOpRef();
  for (const UOp* u : loops) renumber.emplace(u, fresh(u->src(0)->arg_int()));
  if (blocks) renumber.emplace(inner, block * kScatterBlock + fresh(kScatterBlock));
  // out[e] += where(0 <= e < n, x at v = e, 0), e clamped into range for the address.
  const UOpRef n = const_like(e, v->src(0)->arg_int());
  const UOpRef valid = alu(Op::AND, {alu(Op::NOT, {lt(e, const_like(e, 0))}), lt(e, n)});
  const UOpRef at = cast(where(valid, e, const_like(e, 0)), dtypes::index);
  UOpRef add = where(valid, substitute(body->src(1), {{v, at}}), body->src(2));
  if (cast_back) add = cast(add, t);
  const UOpRef& index = store->src(0);
  const UOpRef to =
      UOp::make(Op::INDEX, index->dtype(), {index->src(0), substitute(index->src(1), {{v, at}})});
  const UOpRef rmw =
      UOp::make(Op::STORE, store->dtype(), {to, alu(Op::ADD, {UOp::make(Op::LOAD, t, {to}), add})});
  return substitute(UOp::make(Op::SINK, ast->dtype(), {rmw}, ast->arg()), renumber);
}

}  // namespace polygrad::schedule
