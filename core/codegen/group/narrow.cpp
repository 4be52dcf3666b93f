// narrow_indices(): 32-bit index math (narrow.hpp).
#include "codegen/group/narrow.hpp"

#include <polygrad/error.hpp>

#include <unordered_map>
#include <unordered_set>

#include "ir/graph.hpp"
#include "symbolic/bounds.hpp"

namespace polygrad::codegen {

namespace {

bool is_index(const UOp* u) {
  return u->dtype() == dtypes::index;
}

/// Whether `u` (an int64 node) is index math: a leaf of it, or an ALU op or WHERE whose int64
/// sources all are.
bool index_math(const UOp* u, const std::unordered_set<const UOp*>& math) {
  switch (u->op()) {
    case Op::CONST:
    case Op::RANGE:
    case Op::SPECIAL:
    case Op::DEFINE_VAR:
      return true;
    default:
      break;
  }
  if (!is_alu(u->op())) return false;
  for (const UOpRef& s : u->srcs())
    if (is_index(s.get()) && !math.count(s.get())) return false;
  return true;
}

}  // namespace

UOpRef narrow_indices(const UOpRef& sink, std::vector<Stage>& stages, const Target& target) {
  std::vector<UOpRef> roots(sink->srcs().begin(), sink->srcs().end());
  for (const Stage& st : stages) roots.insert(roots.end(), st.stores.begin(), st.stores.end());
  const UOpRef all = UOp::make(Op::SINK, dtypes::void_, roots);
  const std::vector<const UOp*> order = toposort(all);
  std::unordered_set<const UOp*> math;
  int64_t worst = 0;
  for (const UOp* u : order) {
    if (!is_index(u) || !index_math(u, math)) continue;
    math.insert(u);
    const std::optional<Bounds> b = bounds(*u);
    // (how far from 0 it may go; INT64_MAX when unbounded, and for INT64_MIN, which has no
    // negation)
    const int64_t reach =
        !b || b->lo == INT64_MIN ? INT64_MAX : std::max(b->lo < 0 ? -b->lo : 0, b->hi);
    worst = std::max(worst, reach);
  }
  if (worst > INT32_MAX) {
    if (target.caps.dtype_mask & (uint64_t{1} << PG_DTYPE_INT64)) return sink;  // stays int64
    throw Error(
        ErrorKind::user,
        "codegen: a kernel's index math reaches " +
            (worst == INT64_MAX ? std::string("an unbounded value") : std::to_string(worst)) +
            ", past the 32-bit indices of device " + target.device + ", which has no int64",
        PG_ERR_UNSUPPORTED);
  }
  // Rebuild: index math in int32; an int64 use of it (outside the math) casts back, except an
  // INDEX offset and a comparison of two index values, which take int32 as they are.
  std::unordered_map<const UOp*, UOpRef> done;
  std::vector<UOpRef> srcs;
  for (const UOp* u : order) {
    srcs.clear();
    const bool narrow = math.count(u) > 0;
    const bool compare_of_math =
        is_compare(u->op()) && math.count(u->src(0).get()) && math.count(u->src(1).get());
    for (size_t i = 0; i < u->nsrcs(); ++i) {
      const UOp* s = u->src(i).get();
      UOpRef v = done.at(s);
      const bool takes_int32 = narrow || compare_of_math || (u->op() == Op::INDEX && i == 1) ||
                               (u->op() == Op::REDUCE && i > 0);
      if (math.count(s) && !takes_int32) v = cast(v, dtypes::index);
      srcs.push_back(std::move(v));
    }
    UOpRef out;
    if (!narrow) {
      out = u->with_srcs(srcs);
    } else if (u->op() == Op::CONST) {
      out = const_int(dtypes::int32, u->arg_int());
    } else if (u->op() == Op::DEFINE_VAR) {
      out = cast(u->ref(), dtypes::int32);
    } else {
      out = UOp::make(u->op(), dtypes::int32, srcs, u->arg());
    }
    done.emplace(u, std::move(out));
  }
  size_t at = sink->nsrcs();
  for (Stage& st : stages)
    for (UOpRef& store : st.stores) store = done.at(all->src(at++).get());
  std::vector<UOpRef> stores;
  for (const UOpRef& s : sink->srcs()) stores.push_back(done.at(s.get()));
  return UOp::make(Op::SINK, dtypes::void_, stores);
}

}  // namespace polygrad::codegen
