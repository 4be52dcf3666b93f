// Pieces the output-upcasting passes share (see upcast_parts.hpp).
#include "codegen/upcast_parts.hpp"

#include <algorithm>

namespace polygrad::codegen::upcast {

int64_t ceil_div(int64_t a, int64_t b) {
  return (a + b - 1) / b;
}

int64_t column_vectors(int64_t ej, int64_t w) {
  if (ej % (2 * w) == 0) return 2;
  for (int64_t v = 8; v >= 3; --v)
    if ((ej / w) % v == 0) return v;
  return 1;
}

std::unordered_set<const UOp*> dependents(const std::vector<const UOp*>& order, const UOp* j) {
  std::unordered_set<const UOp*> dep{j};
  for (const UOp* n : order)
    for (const UOpRef& s : n->srcs())
      if (dep.count(s.get())) {
        dep.insert(n);
        break;
      }
  return dep;
}

bool contiguous_in(const UOpRef& off, const UOp* j, int64_t lanes) {
  std::optional<int64_t> a = coefficient(off.get(), j);
  if (a) return *a == 1;
  const UOpRef& end = j->src(0);
  if (lanes < 2 || end->op() != Op::CONST) return false;
  const int64_t ej = end->arg_int();
  // Loop ids beyond any a kernel uses: the ranges are only for this proof.
  constexpr int64_t kGroupId = int64_t{1} << 40;
  const UOpRef jl = range(const_int(dtypes::index, lanes), kGroupId + 1);
  const UOpRef jo = range(const_int(dtypes::index, (ej + lanes - 1) / lanes), kGroupId);
  const UOpRef grouped = simplify(substitute_range(off, j, jo * lanes + jl));
  a = coefficient(grouped.get(), jl.get());
  if (!a || *a != 1) return false;
  if (ej % lanes == 0) return true;
  // A tail plan also loads the last `lanes` steps as one vector, moved back to end at the last.
  const UOpRef last = simplify(substitute_range(off, j, const_int(dtypes::index, ej - lanes) + jl));
  a = coefficient(last.get(), jl.get());
  return a && *a == 1;
}

bool native_vector_op(Op op, DType t) {
  switch (op) {
    case Op::ADD:
    case Op::SUB:
    case Op::MUL:
    case Op::NEG:
    case Op::MULACC:
      return !t.is_bool();
    case Op::FDIV:
      return t.is_float();
    case Op::MAX:  // a mask and ?:, as are the comparisons and WHERE
    case Op::CMPLT:
    case Op::CMPNE:
    case Op::CMPEQ:
    case Op::WHERE:
      return true;
    default:
      return false;
  }
}

bool vectorizable(const UOpRef& sink, const UOp* j, int64_t lanes, bool elementwise) {
  std::vector<const UOp*> order = toposort(sink);
  std::unordered_set<const UOp*> dep = dependents(order, j);
  std::unordered_set<const UOp*> index_math{j};
  bool reduces = false;
  for (const UOp* n : order) {
    if (!dep.count(n) || n == j || n->op() == Op::SINK) continue;
    bool all_index = is_alu(n->op()) && n->dtype() == dtypes::index;
    for (const UOpRef& s : n->srcs())
      if (dep.count(s.get()) && !index_math.count(s.get())) all_index = false;
    if (all_index) {
      index_math.insert(n);
      continue;
    }
    for (size_t i = 0; i < n->nsrcs(); ++i)
      if (index_math.count(n->src(i).get()) && !(n->op() == Op::INDEX && i == 1) &&
          !(n->op() == Op::REDUCE && n->src(i).get() == j))
        return false;
    const pg_dtype s = n->dtype().scalar();
    if (s == PG_DTYPE_FLOAT16 || s == PG_DTYPE_BFLOAT16) return false;
    switch (n->op()) {
      case Op::INDEX:
        if (n->nsrcs() != 2 || !contiguous_in(n->src(1), j, lanes)) return false;
        break;
      case Op::LOAD:
        if (n->nsrcs() != 1) return false;
        break;
      case Op::STORE:
        if (n->nsrcs() != 2) return false;
        break;
      case Op::REDUCE:
        reduces = true;
        break;
      default:
        if (elementwise && !native_vector_op(n->op(), n->dtype())) return false;
        if (!is_alu(n->op()) && n->op() != Op::CAST && n->op() != Op::BITCAST) return false;
    }
  }
  for (const UOpRef& st : sink->srcs())
    if (!dep.count(st.get())) return false;
  return elementwise || reduces;
}

int64_t vector_lanes(const Target& target, int64_t elem) {
  return std::min<int64_t>(target.caps.vector_width_bytes / elem,
                           int64_t{target.caps.max_vector_lanes});
}

int64_t lanes_dividing(const Target& target, int64_t elem, int64_t extent) {
  constexpr int64_t kMinLanes = 4;
  for (int64_t w = vector_lanes(target, elem); w >= kMinLanes; w /= 2)
    if (extent % w == 0) return w;
  return 1;
}

bool groups_blocks(const UpcastPlan& plan, int64_t blocks, int64_t cb) {
  return blocks % cb == 0 || (plan.tail && (ceil_div(blocks, cb) * cb - blocks) * 16 <= blocks);
}

int64_t tail_lanes(const Target& target, int64_t elem, int64_t extent) {
  int64_t w = vector_lanes(target, elem);
  while (w > kMinTailLanes && w > extent) w /= 2;
  return w;
}

int vector_registers(const Target& target) {
  return target.caps.vector_width_bytes >= 64 ? 32 : 16;
}

UOpRef both(const UOpRef& a, const UOpRef& b) {
  if (!a) return b;
  if (!b) return a;
  return alu(Op::AND, {a, b});
}

UOpRef gated_store(const UOpRef& st, const UOpRef& gate) {
  if (!gate) return st;
  return UOp::make(Op::STORE, st->dtype(), {st->src(0), st->src(1), gate});
}

UOpRef lane_sum(UOpRef v) {
  const DType t = v->dtype().scalar_type();
  auto lane = [&](const UOpRef& x, int l) {
    return UOp::make(Op::GEP, t, {x}, std::vector<int64_t>{l});
  };
  int n = v->dtype().lanes();
  while (n > 1 && n % 2 == 0) {
    const int half = n / 2;
    if (half == 1) return lane(v, 0) + lane(v, 1);
    std::vector<UOpRef> lo, hi;
    for (int l = 0; l < half; ++l) {
      lo.push_back(lane(v, l));
      hi.push_back(lane(v, half + l));
    }
    v = UOp::make(Op::VECTORIZE, t.vec(half), lo) + UOp::make(Op::VECTORIZE, t.vec(half), hi);
    n = half;
  }
  UOpRef sum = lane(v, 0);
  for (int l = 1; l < n; ++l) sum = sum + lane(v, l);
  return sum;
}

int64_t top_range_id(const UOpRef& sink) {
  int64_t top = 0;
  for (const UOp* u : toposort(sink))
    if (u->op() == Op::RANGE) top = std::max(top, u->arg_int());
  return top;
}

UOpRef slice_store(const UOpRef& st, const AffineInReduce& f, const UOpRef& part,
                   const UOpRef& k0) {
  const DType t = f.reduce->dtype();
  const UOpRef start = f.a ? f.a : UOp::make(Op::CONST, t, {}, 0.0);
  const UOpRef idx = st->src(0);
  const UOpRef prev = UOp::make(Op::LOAD, t, {idx, start, ne(k0, const_int(dtypes::index, 0))});
  return UOp::make(Op::STORE, st->dtype(), {idx, prev + (f.b ? f.b * part : part)});
}

Slices::Slices(const UOpRef& n, int64_t size, int64_t id) {
  const UOpRef count = simplify((n + (size - 1)) / size);
  slice = range(count, id);
  const UOpRef last = simplify(n - (count - 1) * size);
  const UOpRef whole = const_int(dtypes::index, size);
  length = last->op() == Op::CONST && last->arg_int() == size
               ? whole
               : simplify(where(lt(slice, count - 1), whole, last));
}

}  // namespace polygrad::codegen::upcast
