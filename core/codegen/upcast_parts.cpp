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

bool vectorizable(const UOpRef& sink, const UOp* j, int64_t lanes, bool elementwise, bool any_op) {
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
        if (elementwise && !any_op && !native_vector_op(n->op(), n->dtype())) return false;
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
  for (int64_t w = vector_lanes(target, elem); w >= cpu_tuning::kMinLanes; w /= 2)
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

namespace {

/// A vector whose lanes are `ids.size()` groups of `span` lanes; group g's lanes add up to the
/// sum of vector ids[g] of lane_sums' input.
struct Folding {
  UOpRef v;
  int span;
  std::vector<size_t> ids;
};

UOpRef gep(const UOpRef& x, int l) {
  return UOp::make(Op::GEP, x->dtype().scalar_type(), {x}, std::vector<int64_t>{l});
}

/// The first (`second` false) or second halves of each group of every folding of `fs`, one
/// after another, as one vector (a scalar when that is one lane).
UOpRef halves(const std::vector<const Folding*>& fs, bool second) {
  std::vector<UOpRef> lanes;
  for (const Folding* f : fs) {
    const int half = f->span / 2;
    for (size_t g = 0; g < f->ids.size(); ++g)
      for (int l = 0; l < half; ++l)
        lanes.push_back(gep(f->v, static_cast<int>(g) * f->span + (second ? half : 0) + l));
  }
  if (lanes.size() == 1) return lanes[0];
  const DType t = fs[0]->v->dtype().scalar_type().vec(static_cast<int>(lanes.size()));
  return UOp::make(Op::VECTORIZE, t, lanes);
}

/// The sum of the lanes of `v` alone: halves added while the lanes are even, then the rest
/// one by one (a target may declare widths that are no power of two).
UOpRef lane_sum_alone(UOpRef v) {
  int n = v->dtype().lanes();
  while (n > 1 && n % 2 == 0) {
    const Folding f{v, n, {0}};
    v = halves({&f}, false) + halves({&f}, true);
    n /= 2;
  }
  if (n == 1) return v;
  UOpRef sum = gep(v, 0);
  for (int l = 1; l < n; ++l) sum = sum + gep(v, l);
  return sum;
}

}  // namespace

std::vector<UOpRef> lane_sums(const std::vector<UOpRef>& vs) {
  std::vector<UOpRef> out(vs.size());
  std::vector<Folding> items;
  for (size_t i = 0; i < vs.size(); ++i) {
    const int n = vs[i]->dtype().lanes();
    if (n >= 2 && (n & (n - 1)) == 0 && vs[i]->dtype() == vs[0]->dtype())
      items.push_back({vs[i], n, {i}});
    else
      out[i] = lane_sum_alone(vs[i]);
  }
  // Each round halves every group: two foldings of the same shape side by side (their lanes
  // stay as many), or one alone (it narrows).
  for (bool folding = true; folding;) {
    folding = false;
    std::vector<Folding> next;
    for (size_t i = 0; i < items.size(); ++i) {
      const Folding& a = items[i];
      if (a.span == 1) {
        next.push_back(a);
        continue;
      }
      folding = true;
      std::vector<const Folding*> fs{&a};
      if (i + 1 < items.size() && items[i + 1].span == a.span &&
          items[i + 1].ids.size() == a.ids.size())
        fs.push_back(&items[++i]);
      Folding f{halves(fs, false) + halves(fs, true), a.span / 2, {}};
      for (const Folding* x : fs) f.ids.insert(f.ids.end(), x->ids.begin(), x->ids.end());
      next.push_back(std::move(f));
    }
    items = std::move(next);
  }
  for (const Folding& f : items)
    for (size_t g = 0; g < f.ids.size(); ++g)
      out[f.ids[g]] =
          f.ids.size() == 1 && f.v->dtype().lanes() == 1 ? f.v : gep(f.v, static_cast<int>(g));
  return out;
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
