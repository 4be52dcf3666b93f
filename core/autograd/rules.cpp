// One gradient rule per tensor-level op: d(root)/d(source) from d(root)/d(node).
#include "autograd/rules.hpp"

#include "ir/error.hpp"
#include "runtime/runtime.hpp"
#include "tensor/symbolic.hpp"

#include <array>
#include <cmath>
#include <numbers>
#include <optional>
#include <unordered_set>
#include <utility>

namespace polygrad::autograd::detail {

namespace {

using lazy::ShapeOf;

UOpRef ew(Op op, std::initializer_list<UOpRef> srcs) {
  return lazy::elementwise(op, srcs);
}
UOpRef add(const UOpRef& a, const UOpRef& b) {
  return ew(Op::ADD, {a, b});
}
UOpRef mul(const UOpRef& a, const UOpRef& b) {
  return ew(Op::MUL, {a, b});
}
UOpRef div(const UOpRef& a, const UOpRef& b) {
  return ew(Op::FDIV, {a, b});
}
UOpRef neg(const UOpRef& a) {
  return ew(Op::NEG, {a});
}
UOpRef equals(const UOpRef& a, const UOpRef& b) {
  return ew(Op::CMPEQ, {a, b});
}
UOpRef pick(const UOpRef& c, const UOpRef& a, const UOpRef& b) {
  return ew(Op::WHERE, {c, a, b});
}
/// `v` in x's dtype, broadcast to x's shape.
UOpRef like(const UOpRef& x, double v, ShapeOf& shape) {
  if (lazy::any_bound()) {  // (sizes that are bound variables stay expressions)
    const lazy::SymShape dims = lazy::sym_shape(x.get());
    if (lazy::has_symbolic(dims))
      return lazy::expand_sym(
          lazy::reshape(lazy::scalar(x->dtype(), v), lazy::Shape(dims.size(), 1)), dims);
  }
  return lazy::full(x->dtype(), v, shape(x));
}

/// `x`'s size expressions when some is symbolic (tensor/symbolic.hpp), else nothing.
std::optional<lazy::SymShape> symbolic_shape(const UOp* x) {
  if (!lazy::any_bound()) return std::nullopt;
  lazy::SymShape dims = lazy::sym_shape(x);
  if (!lazy::has_symbolic(dims)) return std::nullopt;
  return dims;
}

/// The device a node's value lives on (lazy::placement); "" for a graph of constants.
std::string device_of(const UOp* node) {
  const UOp* p = lazy::placement(node);
  if (p == nullptr) return "";
  return p->op() == Op::COPY ? p->arg_str() : runtime::buffer_device(p);
}

/// True when `node`'s unrealised graph holds a REDUCE_AXIS.
bool holds_reduce(const UOp* node) {
  std::vector<const UOp*> stack{node};
  std::unordered_set<const UOp*> seen;
  while (!stack.empty()) {
    const UOp* u = stack.back();
    stack.pop_back();
    if (!seen.insert(u).second || u->op() == Op::BUFFER) continue;
    if (u->op() == Op::REDUCE_AXIS) return true;
    for (size_t i = 0; i < tensor_src_count(u); ++i) stack.push_back(u->src(i).get());
  }
  return false;
}

// ---- rules ----------------------------------------------------------------------------------
// Each takes (node, g = gradient of the node's output, shapes) and returns one gradient per
// tensor source. `x`, `y`, `z` are the node's sources, `out` the node itself.

SourceGrads none(const UOp* u, const UOpRef&, ShapeOf&) {
  return SourceGrads(tensor_src_count(u));
}
SourceGrads identity(const UOp*, const UOpRef& g, ShapeOf&) {
  return {g};
}
SourceGrads zero(const UOp*, const UOpRef& g, ShapeOf& s) {
  return {like(g, 0, s)};  // d trunc(x) = 0 almost everywhere
}
SourceGrads neg_rule(const UOp*, const UOpRef& g, ShapeOf&) {
  return {neg(g)};  // d(-x) = -g
}
SourceGrads recip(const UOp* u, const UOpRef& g, ShapeOf&) {
  UOpRef out = u->ref();
  return {neg(mul(g, mul(out, out)))};  // d(1/x) = -g/x^2
}
SourceGrads sqrt_rule(const UOp* u, const UOpRef& g, ShapeOf& s) {
  UOpRef out = u->ref();
  return {div(g, mul(out, like(out, 2, s)))};  // d sqrt(x) = g/(2 sqrt(x))
}
SourceGrads exp2(const UOp* u, const UOpRef& g, ShapeOf& s) {
  UOpRef out = u->ref();
  return {mul(g, mul(out, like(out, std::numbers::ln2, s)))};  // d 2^x = g 2^x ln2
}
SourceGrads log2(const UOp* u, const UOpRef& g, ShapeOf& s) {
  const UOpRef& x = u->src(0);
  return {div(g, mul(x, like(x, std::numbers::ln2, s)))};  // d log2(x) = g/(x ln2)
}
SourceGrads sin_rule(const UOp* u, const UOpRef& g, ShapeOf& s) {
  const UOpRef& x = u->src(0);
  UOpRef cos_x = ew(Op::SIN, {add(x, like(x, std::numbers::pi / 2, s))});
  return {mul(g, cos_x)};  // d sin(x) = g cos(x) = g sin(x + pi/2)
}
SourceGrads tanh_rule(const UOp* u, const UOpRef& g, ShapeOf& s) {
  UOpRef out = u->ref();  // d tanh(x) = g (1 - tanh(x)^2)
  return {mul(g, ew(Op::SUB, {like(out, 1.0, s), mul(out, out)}))};
}
SourceGrads sigmoid_rule(const UOp* u, const UOpRef& g, ShapeOf& s) {
  UOpRef out = u->ref();
  return {mul(g, mul(out, ew(Op::SUB, {like(out, 1.0, s), out})))};  // d s(x) = g s (1 - s)
}
SourceGrads add_rule(const UOp*, const UOpRef& g, ShapeOf&) {
  return {g, g};
}
SourceGrads sub_rule(const UOp*, const UOpRef& g, ShapeOf&) {
  return {g, neg(g)};
}
SourceGrads mul_rule(const UOp* u, const UOpRef& g, ShapeOf&) {
  return {mul(g, u->src(1)), mul(g, u->src(0))};
}
SourceGrads fdiv(const UOp* u, const UOpRef& g, ShapeOf&) {
  // d(x/y) = g/y, -g (x/y)/y as torch's: x/y^2 overflowed where (x/y)/y is finite, and its
  // own gradient took 0 * inf = NaN through y*y at y = 0 (torch's d2 of 1/y there is +-inf).
  const UOpRef& y = u->src(1);
  return {div(g, y), neg(mul(g, div(u->ref(), y)))};
}
SourceGrads max_rule(const UOp* u, const UOpRef& g, ShapeOf& s) {
  // The larger source takes g and the smaller 0; on a tie each takes half, and where either is
  // NaN (unordered) each takes g, as torch's (a NaN gave both 0).
  const UOpRef &x = u->src(0), &y = u->src(1);
  UOpRef half = mul(g, like(g, 0.5, s)), zero = like(g, 0, s);
  UOpRef share = pick(equals(x, y), half, g);
  return {pick(ew(Op::CMPLT, {x, y}), zero, share), pick(ew(Op::CMPLT, {y, x}), zero, share)};
}
SourceGrads where_rule(const UOp* u, const UOpRef& g, ShapeOf& s) {
  const UOpRef& c = u->src(0);
  UOpRef zero = like(g, 0, s);
  return {UOpRef(), pick(c, g, zero), pick(c, zero, g)};
}
SourceGrads mulacc(const UOp* u, const UOpRef& g, ShapeOf&) {
  return {mul(g, u->src(1)), mul(g, u->src(0)), g};  // d(a*b + c)
}
SourceGrads cast_rule(const UOp* u, const UOpRef& g, ShapeOf&) {
  return {lazy::cast(g, u->src(0)->dtype())};
}
SourceGrads reshape(const UOp* u, const UOpRef& g, ShapeOf& s) {
  if (auto dims = symbolic_shape(u->src(0).get())) return {lazy::reshape_sym(g, *dims)};
  return {lazy::reshape(g, s(u->src(0)))};
}
SourceGrads permute(const UOp* u, const UOpRef& g, ShapeOf&) {
  const std::vector<int64_t>& order = u->arg_ints();
  std::vector<int64_t> inverse(order.size());
  for (size_t i = 0; i < order.size(); ++i) inverse[static_cast<size_t>(order[i])] = int64_t(i);
  return {lazy::permute(g, inverse)};
}
SourceGrads expand(const UOp* u, const UOpRef& g, ShapeOf& s) {
  const lazy::Shape &in = s(u->src(0)), &out = s(u);
  if (in.size() != out.size())
    ir_error("gradient: EXPAND from " + lazy::shape_str(in) + " to " + lazy::shape_str(out) +
             " changes the rank; the Tensor layer reshapes before expanding");
  std::vector<int64_t> axes;
  // (An axis of 1 expanded to a variable sums over it at every value, 1 included.)
  const auto dims = symbolic_shape(u);
  for (size_t i = 0; i < in.size(); ++i)
    if (in[i] != out[i] || (dims && in[i] == 1 && !lazy::is_static((*dims)[i].get())))
      axes.push_back(int64_t(i));
  return {axes.empty() ? g : lazy::reduce(g, Op::ADD, axes)};  // sum over broadcast axes
}
SourceGrads pad(const UOp* u, const UOpRef& g, ShapeOf& s) {
  const lazy::Shape& in = s(u->src(0));
  if (auto dims = symbolic_shape(u->src(0).get())) {
    std::vector<std::pair<UOpRef, UOpRef>> bounds;
    for (size_t i = 0; i < dims->size(); ++i)
      bounds.emplace_back(u->src(1 + 2 * i), lazy::dim_add(u->src(1 + 2 * i), (*dims)[i]));
    return {lazy::shrink_sym(g, bounds)};
  }
  std::vector<int64_t> p = lazy::int_srcs(u, 1);
  std::vector<std::pair<int64_t, int64_t>> bounds;
  for (size_t i = 0; i < in.size(); ++i) bounds.emplace_back(p[2 * i], p[2 * i] + in[i]);
  return {lazy::shrink(g, bounds)};
}
SourceGrads shrink(const UOp* u, const UOpRef& g, ShapeOf& s) {
  const lazy::Shape& in = s(u->src(0));
  if (auto dims = symbolic_shape(u->src(0).get())) {
    std::vector<std::pair<UOpRef, UOpRef>> pads;
    for (size_t i = 0; i < dims->size(); ++i)
      pads.emplace_back(
          u->src(1 + 2 * i),
          lazy::dim_add((*dims)[i], lazy::dim_mul(u->src(2 + 2 * i), lazy::dim_const(-1))));
    return {lazy::pad_sym(g, pads)};
  }
  std::vector<int64_t> b = lazy::int_srcs(u, 1);
  std::vector<std::pair<int64_t, int64_t>> pads;
  for (size_t i = 0; i < in.size(); ++i) pads.emplace_back(b[2 * i], in[i] - b[2 * i + 1]);
  return {lazy::pad(g, pads)};
}
SourceGrads flip(const UOp* u, const UOpRef& g, ShapeOf&) {
  return {lazy::flip(g, u->arg_ints())};
}
SourceGrads reduce(const UOp* u, const UOpRef& g, ShapeOf& s) {
  const UOpRef& x = u->src(0);
  const lazy::Shape& in = s(x);
  std::vector<int64_t> axes = lazy::reduce_axes(u);
  const auto dims = symbolic_shape(x.get());
  UOpRef gx = dims ? lazy::expand_sym(g, *dims) : lazy::expand(g, in),
         out = dims ? lazy::expand_sym(u->ref(), *dims) : lazy::expand(u->ref(), in);
  switch (lazy::reduce_op(u)) {
    case Op::ADD:
      return {gx};
    case Op::MAX: {
      // Split among the positions equal to the max. A value holding a reduce (a max of sums)
      // is realised first and the max taken again of that: the forward's kernel and this
      // one could sum in different orders, and then no position would equal the max.
      UOpRef hit;
      if (holds_reduce(x.get())) {
        UOpRef xr = lazy::contiguous(x);
        hit = lazy::cast(equals(xr, lazy::expand(lazy::reduce(xr, Op::MAX, axes), in)), x->dtype());
      } else {
        hit = lazy::cast(equals(x, out), x->dtype());
      }
      UOpRef count = lazy::expand(lazy::reduce(hit, Op::ADD, axes), in);
      return {mul(gx, div(hit, count))};
    }
    case Op::MUL: {
      // The product of the others: prod/x where no factor is zero; with one zero only that
      // position's is nonzero, the product of the nonzero factors; with two or more all are
      // zero. Those zeros are written as products with the zero factors (their sum: the one
      // zero, or the other of two) so that they keep their derivatives in the zeros: the
      // second derivative of [2, 0, 3].prod() in x1 is 3 + 2, not 0.
      UOpRef zero = like(x, 0, s), one = like(x, 1, s), two = like(x, 2, s);
      UOpRef is_zero = equals(x, zero), safe = pick(is_zero, one, x);
      UOpRef nonzero = lazy::expand(lazy::reduce(safe, Op::MUL, axes), in);
      UOpRef zeros = lazy::expand(lazy::reduce(lazy::cast(is_zero, x->dtype()), Op::ADD, axes), in);
      UOpRef zero_sum = lazy::expand(lazy::reduce(pick(is_zero, x, zero), Op::ADD, axes), in);
      UOpRef one_zero = equals(zeros, one);
      UOpRef at_zero =
          pick(one_zero, nonzero,
               pick(equals(zeros, two), mul(nonzero, ew(Op::SUB, {zero_sum, x})), zero));
      UOpRef others = div(nonzero, safe);
      UOpRef at_nonzero =
          pick(equals(zeros, zero), others, pick(one_zero, mul(others, zero_sum), zero));
      return {mul(gx, pick(is_zero, at_zero, at_nonzero))};
    }
    default:
      ir_error("gradient: REDUCE_AXIS with op " + std::string(op_name(lazy::reduce_op(u))) +
               " has no rule");
  }
}
SourceGrads copy(const UOp* u, const UOpRef& g, ShapeOf&) {
  std::string dev = device_of(u->src(0).get());
  return {dev.empty() ? g : lazy::copy_to(g, dev)};  // back to the source's device
}

struct RuleEntry {
  Op op;
  GradRule rule;
};

// clang-format off
constexpr RuleEntry kRules[] = {
    {Op::BUFFER, none}, {Op::IOTA, none}, {Op::CONST, none}, {Op::DEFINE_VAR, none}, {Op::BIND, none},
    {Op::NEG, neg_rule}, {Op::RECIP, recip}, {Op::SQRT, sqrt_rule}, {Op::EXP2, exp2},
    {Op::LOG2, log2}, {Op::SIN, sin_rule}, {Op::TANH, tanh_rule},
    {Op::SIGMOID, sigmoid_rule},
    {Op::TRUNC, zero},
    {Op::ADD, add_rule}, {Op::SUB, sub_rule}, {Op::MUL, mul_rule}, {Op::FDIV, fdiv},
    {Op::MAX, max_rule}, {Op::WHERE, where_rule}, {Op::MULACC, mulacc},
    {Op::CMPLT, none}, {Op::CMPNE, none}, {Op::CMPEQ, none},
    {Op::NOT, none}, {Op::IDIV, none}, {Op::MOD, none}, {Op::AND, none}, {Op::OR, none},
    {Op::XOR, none}, {Op::SHL, none}, {Op::SHR, none}, {Op::BITCAST, none},
    {Op::CAST, cast_rule},
    {Op::RESHAPE, reshape}, {Op::PERMUTE, permute}, {Op::EXPAND, expand}, {Op::PAD, pad},
    {Op::SHRINK, shrink}, {Op::FLIP, flip}, {Op::REDUCE_AXIS, reduce},
    {Op::CONTIGUOUS, identity}, {Op::DETACH, none}, {Op::COPY, copy}, {Op::ASSIGN, none},
};
// clang-format on

constexpr std::array<GradRule, kOpCount> make_table() {
  std::array<GradRule, kOpCount> t{};
  for (const RuleEntry& e : kRules) t[static_cast<size_t>(e.op)] = e.rule;
  return t;
}
constexpr std::array<GradRule, kOpCount> kTable = make_table();

}  // namespace

GradRule grad_rule(Op op) {
  return kTable[static_cast<size_t>(op)];
}

size_t tensor_src_count(const UOp* node) {
  return is_movement(node->op()) ? 1 : node->nsrcs();
}

}  // namespace polygrad::autograd::detail
