// TANH and SIGMOID expanded before scheduling (see activations.hpp).
#include "schedule/activations.hpp"

#include "ir/graph.hpp"
#include "tensor/lazy.hpp"

#include <numbers>

namespace polygrad::schedule {

namespace {

/// The first `terms` odd Taylor coefficients of tanh, a_1 = 1, a_3 = -1/3, a_5 = 2/15, ...,
/// from tanh' = 1 - tanh^2: (k + 1) a_(k+1) = -sum over i + j = k of a_i a_j (every product of
/// one k has the same sign, so nothing cancels).
std::vector<double> tanh_series(int terms) {
  std::vector<long double> a(2 * static_cast<size_t>(terms), 0.0L);
  a[1] = 1.0L;
  for (size_t k = 2; k + 1 < a.size(); k += 2) {
    long double s = 0.0L;
    for (size_t i = 1; i < k; i += 2) s += a[i] * a[k - i];
    a[k + 1] = -s / static_cast<long double>(k + 1);
  }
  std::vector<double> odd_terms;
  for (size_t i = 1; i < a.size(); i += 2) odd_terms.push_back(static_cast<double>(a[i]));
  return odd_terms;
}

/// Elementwise ops over x's shape and dtype.
struct Ops {
  DType t;
  lazy::Shape shape;
  UOpRef k(double v) const { return lazy::full(t, v, shape); }
  static UOpRef ew(Op op, std::initializer_list<UOpRef> srcs) {
    return lazy::elementwise(op, srcs);
  }
  static UOpRef mul(const UOpRef& a, const UOpRef& b) { return ew(Op::MUL, {a, b}); }
  static UOpRef add(const UOpRef& a, const UOpRef& b) { return ew(Op::ADD, {a, b}); }
  static UOpRef sub(const UOpRef& a, const UOpRef& b) { return ew(Op::SUB, {a, b}); }
  static UOpRef pick(const UOpRef& c, const UOpRef& a, const UOpRef& b) {
    return ew(Op::WHERE, {c, a, b});
  }
  UOpRef exp(const UOpRef& v) const { return ew(Op::EXP2, {mul(v, k(std::numbers::log2e))}); }
};

UOpRef tanh_of(const UOpRef& x, lazy::ShapeOf& shape) {
  static const std::vector<double> a32 = tanh_series(6), a64 = tanh_series(13);
  const Ops o{x->dtype(), shape(x)};
  const std::vector<double>& a = o.t.scalar() == PG_DTYPE_FLOAT64 ? a64 : a32;
  UOpRef negative = Ops::ew(Op::CMPLT, {x, o.k(0.0)});
  UOpRef y = Ops::pick(negative, Ops::ew(Op::NEG, {x}), x);
  UOpRef z = Ops::mul(y, y);
  UOpRef p = o.k(a.back());
  for (size_t i = a.size() - 1; i-- > 0;) p = Ops::add(Ops::mul(p, z), o.k(a[i]));
  UOpRef u = o.exp(Ops::mul(y, o.k(-2.0)));
  UOpRef small = Ops::ew(Op::CMPLT, {y, o.k(std::numbers::ln2 / 2)});
  UOpRef r = Ops::pick(small, Ops::mul(y, p),
                       Ops::ew(Op::FDIV, {Ops::sub(o.k(1.0), u), Ops::add(o.k(1.0), u)}));
  return Ops::pick(negative, Ops::ew(Op::NEG, {r}), r);
}

UOpRef sigmoid_of(const UOpRef& x, lazy::ShapeOf& shape) {
  const Ops o{x->dtype(), shape(x)};
  UOpRef negative = Ops::ew(Op::CMPLT, {x, o.k(0.0)});
  UOpRef e = o.exp(Ops::pick(negative, x, Ops::ew(Op::NEG, {x})));
  return Ops::ew(Op::FDIV, {Ops::pick(negative, e, o.k(1.0)), Ops::add(o.k(1.0), e)});
}

}  // namespace

std::vector<UOpRef> expand_activations(const std::vector<UOpRef>& roots) {
  UOpRef sink = UOp::make(Op::SINK, dtypes::void_, std::span<const UOpRef>(roots));
  std::unordered_map<const UOp*, UOpRef> replace;
  std::vector<UOpRef> srcs;
  lazy::ShapeOf shape;  // one for the whole graph: a shape is found once
  bool any = false;
  for (const UOp* u : toposort(sink)) {
    srcs.clear();
    bool same = true;
    for (const UOpRef& s : u->srcs()) {
      auto it = replace.find(s.get());
      srcs.push_back(it == replace.end() ? s : it->second);
      same = same && srcs.back() == s;
    }
    if (u->op() == Op::TANH || u->op() == Op::SIGMOID) {
      replace.emplace(u,
                      u->op() == Op::TANH ? tanh_of(srcs[0], shape) : sigmoid_of(srcs[0], shape));
      any = true;
    } else if (!same) {
      replace.emplace(u, u->with_srcs(srcs));
    }
  }
  if (!any) return roots;
  std::vector<UOpRef> out;
  for (const UOpRef& r : roots) {
    auto it = replace.find(r.get());
    out.push_back(it == replace.end() ? r : it->second);
  }
  return out;
}

}  // namespace polygrad::schedule
