// Builders for tensor-level nodes and their shape inference.
#include "tensor/lazy.hpp"
#include "tensor/symbolic.hpp"

#include <atomic>

#include "ir/error.hpp"

#include <algorithm>
#include <unordered_set>
#include <vector>

namespace polygrad::lazy {

namespace {

UOpRef idx(int64_t v) {
  return const_int(dtypes::index, v);
}

std::vector<UOpRef> with_dims(const UOpRef& x, const std::vector<int64_t>& dims) {
  std::vector<UOpRef> srcs{x};
  for (int64_t d : dims) srcs.push_back(idx(d));
  return srcs;
}

}  // namespace

std::string shape_str(const Shape& s) {
  std::string out = "(";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + (s.size() == 1 ? ",)" : ")");
}

int64_t numel(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

std::vector<int64_t> int_srcs(const UOp* u, size_t first) {
  std::vector<int64_t> out;
  for (size_t i = first; i < u->nsrcs(); ++i) {
    out.push_back(dim_value(u->src(i).get()));
  }
  return out;
}

const Shape& ShapeOf::operator()(const UOp* u) {
  keep_.push_back(u->ref());
  if (const Shape* s = u->cached_shape()) return *s;
  // Iterative post-order so long chains do not overflow the stack.
  std::vector<std::pair<const UOp*, bool>> stack{{u, false}};
  while (!stack.empty()) {
    auto [n, ready] = stack.back();
    stack.pop_back();
    if (n->cached_shape()) continue;
    if (!ready) {
      stack.push_back({n, true});
      // Sources of movement ops beyond the first are sizes, not tensors.
      size_t nsrc = is_movement(n->op()) ? 1 : n->nsrcs();
      for (size_t i = 0; i < nsrc; ++i)
        if (!n->src(i)->cached_shape()) stack.push_back({n->src(i).get(), false});
      continue;
    }
    n->cache_shape(compute(n));
  }
  return *u->cached_shape();
}

Shape ShapeOf::compute(const UOp* u) {
  auto src_shape = [&](size_t i) -> const Shape& { return *u->src(i)->cached_shape(); };
  switch (u->op()) {
    case Op::BUFFER:
      return {buffer_count(u)};
    case Op::IOTA:
      return {u->arg_int()};
    case Op::CONST:
    case Op::DEFINE_VAR:
    case Op::BIND:
    case Op::SINK:
      return {};
    case Op::RESHAPE:
    case Op::EXPAND:
      return int_srcs(u, 1);
    case Op::PERMUTE: {
      const Shape& in = src_shape(0);
      Shape out;
      for (int64_t a : u->arg_ints()) out.push_back(in.at(static_cast<size_t>(a)));
      return out;
    }
    case Op::PAD:
    case Op::SHRINK: {
      Shape s = src_shape(0);
      std::vector<int64_t> v = int_srcs(u, 1);
      for (size_t i = 0; i < s.size(); ++i)
        s[i] = u->op() == Op::PAD ? s[i] + v[2 * i] + v[2 * i + 1] : v[2 * i + 1] - v[2 * i];
      return s;
    }
    case Op::REDUCE_AXIS: {
      Shape s = src_shape(0);
      for (int64_t a : reduce_axes(u)) s.at(static_cast<size_t>(a)) = 1;
      return s;
    }
    case Op::WHERE:
      return src_shape(1);
    case Op::ASSIGN:  // (through a view: the value has the view's shape)
      return src_shape(0);
    default:
      if (u->nsrcs() == 0) ir_error("shape: " + std::string(op_name(u->op())) + " has no shape");
      return src_shape(0);
  }
}

Shape shape_of(const UOpRef& u) {
  ShapeOf s;
  return s(u);
}

UOpRef buffer(DType dtype, int64_t count, int64_t id) {
  return UOp::make(Op::BUFFER, dtype, {}, std::vector<int64_t>{id, count});
}
int64_t buffer_id(const UOp* u) {
  return u->arg_ints().at(0);
}
int64_t buffer_count(const UOp* u) {
  return u->arg_ints().at(1);
}

UOpRef iota(DType dtype, int64_t n) {
  return UOp::make(Op::IOTA, dtype, {}, n);
}

UOpRef scalar(DType dtype, double v) {
  if (dtype.is_float()) return const_float(dtype, v);
  if (dtype.is_bool()) return const_bool(v != 0);
  return const_int(dtype, static_cast<int64_t>(v));
}

namespace {

/// The constant `c` broadcast to `shape`.
UOpRef broadcast_const(const UOpRef& c, const Shape& shape) {
  if (shape.empty()) return c;
  return expand(reshape(c, Shape(shape.size(), 1)), shape);
}

}  // namespace

UOpRef full(DType dtype, double v, const Shape& shape) {
  return broadcast_const(scalar(dtype, v), shape);
}

UOpRef full_int(DType dtype, int64_t v, const Shape& shape) {
  return broadcast_const(const_int(dtype, v), shape);
}

UOpRef reshape(const UOpRef& x, const Shape& shape) {
  return UOp::make(Op::RESHAPE, x->dtype(), with_dims(x, shape));
}
UOpRef expand(const UOpRef& x, const Shape& shape) {
  return UOp::make(Op::EXPAND, x->dtype(), with_dims(x, shape));
}
UOpRef permute(const UOpRef& x, const std::vector<int64_t>& order) {
  return UOp::make(Op::PERMUTE, x->dtype(), {x}, order);
}
UOpRef pad(const UOpRef& x, const std::vector<std::pair<int64_t, int64_t>>& pads) {
  std::vector<int64_t> v;
  for (auto [a, b] : pads) v.insert(v.end(), {a, b});
  return UOp::make(Op::PAD, x->dtype(), with_dims(x, v));
}
UOpRef shrink(const UOpRef& x, const std::vector<std::pair<int64_t, int64_t>>& bounds) {
  std::vector<int64_t> v;
  for (auto [a, b] : bounds) v.insert(v.end(), {a, b});
  return UOp::make(Op::SHRINK, x->dtype(), with_dims(x, v));
}
UOpRef flip(const UOpRef& x, const std::vector<int64_t>& axes) {
  return UOp::make(Op::FLIP, x->dtype(), {x}, axes);
}
UOpRef reduce(const UOpRef& x, Op op, const std::vector<int64_t>& axes) {
  std::vector<int64_t> arg{static_cast<int64_t>(op)};
  arg.insert(arg.end(), axes.begin(), axes.end());
  return UOp::make(Op::REDUCE_AXIS, x->dtype(), {x}, std::move(arg));
}
Op reduce_op(const UOp* u) {
  return static_cast<Op>(u->arg_ints().at(0));
}
std::vector<int64_t> reduce_axes(const UOp* u) {
  const auto& a = u->arg_ints();
  return std::vector<int64_t>(a.begin() + 1, a.end());
}

UOpRef elementwise(Op op, std::initializer_list<UOpRef> srcs) {
  const UOpRef* s = srcs.begin();
  DType t = is_compare(op) ? dtypes::bool_ : op == Op::WHERE ? s[1]->dtype() : s[0]->dtype();
  return UOp::make(op, t, srcs);
}
UOpRef cast(const UOpRef& x, DType dtype) {
  return x->dtype() == dtype ? x : UOp::make(Op::CAST, dtype, {x});
}
UOpRef bitcast(const UOpRef& x, DType dtype) {
  return UOp::make(Op::BITCAST, dtype, {x});
}
UOpRef contiguous(const UOpRef& x) {
  return UOp::make(Op::CONTIGUOUS, x->dtype(), {x});
}
UOpRef detach(const UOpRef& x) {
  return UOp::make(Op::DETACH, x->dtype(), {x});
}
UOpRef copy_to(const UOpRef& x, const std::string& device) {
  return UOp::make(Op::COPY, x->dtype(), {x}, device);
}
namespace {
// Each assign is a node of its own, told apart by a serial: a write happens once per call, and
// an optimizer's update is the same graph every step (hash-consing would make the next step's
// write the one that already ran). The schedule cache numbers them structurally.
int64_t next_assign_serial() {
  static std::atomic<int64_t> serial{0};
  return serial.fetch_add(1) + 1;
}
}  // namespace

UOpRef assign(const UOpRef& target, const UOpRef& value) {
  return UOp::make(Op::ASSIGN, target->dtype(), {target, value}, next_assign_serial());
}
UOpRef assign_view(const UOpRef& target, const UOpRef& value, const UOpRef& view) {
  return UOp::make(Op::ASSIGN, target->dtype(), {target, value, view}, next_assign_serial());
}

bool is_realized(const UOp* u) {
  if (u->op() == Op::BUFFER) return true;
  return u->op() == Op::RESHAPE && u->src(0)->op() == Op::BUFFER;
}

const UOp* placement(const UOp* u) {
  std::vector<const UOp*> stack{u};
  std::unordered_set<const UOp*> seen;
  while (!stack.empty()) {
    const UOp* n = stack.back();
    stack.pop_back();
    if (n->op() == Op::COPY || n->op() == Op::BUFFER) return n;
    if (!seen.insert(n).second) continue;
    for (const UOpRef& s : n->srcs()) stack.push_back(s.get());
  }
  return nullptr;
}

}  // namespace polygrad::lazy
