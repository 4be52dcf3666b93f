// Tensor-level graphs of common patterns, built with the lazy builders, for the scheduler tests.
#ifndef POLYGRAD_TESTS_SCHEDULE_GRAPHS_HPP
#define POLYGRAD_TESTS_SCHEDULE_GRAPHS_HPP

#include "tensor/lazy.hpp"

#include <cmath>

namespace polygrad::testgraph {

using lazy::Shape;

inline UOpRef bcast(const UOpRef& x, const Shape& to) {
  return lazy::expand(x, to);
}
inline UOpRef ew(Op op, const UOpRef& a, const UOpRef& b) {
  return lazy::elementwise(op, {a, b});
}
inline UOpRef scalar_like(const UOpRef& x, double v, const Shape& s) {
  return lazy::full(x->dtype(), v, s);
}
inline UOpRef exp(const UOpRef& x, const Shape& s) {
  return lazy::elementwise(Op::EXP2, {ew(Op::MUL, x, scalar_like(x, 1.0 / std::log(2.0), s))});
}
inline UOpRef log(const UOpRef& x, const Shape& s) {
  return ew(Op::MUL, lazy::elementwise(Op::LOG2, {x}), scalar_like(x, std::log(2.0), s));
}

/// softmax over the last axis of a (n, m) tensor.
inline UOpRef softmax(const UOpRef& x, int64_t n, int64_t m) {
  Shape s{n, m};
  UOpRef mx = bcast(lazy::reduce(x, Op::MAX, {1}), s);
  UOpRef e = exp(ew(Op::SUB, x, mx), s);
  UOpRef sum = bcast(lazy::reduce(e, Op::ADD, {1}), s);
  return ew(Op::FDIV, e, sum);
}

/// log_softmax over the last axis.
inline UOpRef log_softmax(const UOpRef& x, int64_t n, int64_t m) {
  Shape s{n, m};
  UOpRef mx = bcast(lazy::reduce(x, Op::MAX, {1}), s);
  UOpRef sh = ew(Op::SUB, x, mx);
  UOpRef lse = bcast(lazy::reduce(exp(sh, s), Op::ADD, {1}), s);
  return ew(Op::SUB, sh, log(lse, s));
}

/// mean over the last axis, broadcast back.
inline UOpRef mean_b(const UOpRef& x, int64_t n, int64_t m) {
  Shape s{n, m};
  UOpRef sum = bcast(lazy::reduce(x, Op::ADD, {1}), s);
  return ew(Op::MUL, sum, scalar_like(x, 1.0 / static_cast<double>(m), s));
}

/// Population variance over the last axis, broadcast back.
inline UOpRef var_b(const UOpRef& x, int64_t n, int64_t m) {
  Shape s{n, m};
  UOpRef d = ew(Op::SUB, x, mean_b(x, n, m));
  return mean_b(ew(Op::MUL, d, d), n, m);
}

/// layernorm over the last axis without affine parameters.
inline UOpRef layernorm(const UOpRef& x, int64_t n, int64_t m, double eps = 1e-5) {
  Shape s{n, m};
  UOpRef d = ew(Op::SUB, x, mean_b(x, n, m));
  UOpRef v = ew(Op::ADD, var_b(x, n, m), scalar_like(x, eps, s));
  UOpRef inv = lazy::elementwise(Op::RECIP, {lazy::elementwise(Op::SQRT, {v})});
  return ew(Op::MUL, d, inv);
}

/// a (m, k) @ b (k, n) as the Tensor layer builds it: broadcast product, sum over k.
inline UOpRef matmul(const UOpRef& a, const UOpRef& b, int64_t m, int64_t k, int64_t n) {
  UOpRef ae = lazy::expand(lazy::reshape(a, {m, 1, k}), {m, n, k});
  UOpRef be = lazy::expand(lazy::reshape(lazy::permute(b, {1, 0}), {1, n, k}), {m, n, k});
  return lazy::reshape(lazy::reduce(ew(Op::MUL, ae, be), Op::ADD, {2}), {m, n});
}

/// 1 / count of dtype `t`, shape `s`, as Tensor::mean builds it: an integer constant cast and
/// inverted (the scheduler reads such a count as a size).
inline UOpRef inverse_count(int64_t count, DType t, const Shape& s) {
  return lazy::elementwise(
      Op::RECIP, {lazy::cast(lazy::full(dtypes::int64, static_cast<double>(count), s), t)});
}

/// Mean cross-entropy of logits (n, m) against one-hot targets (n, m): a scalar.
inline UOpRef cross_entropy(const UOpRef& x, const UOpRef& onehot, int64_t n, int64_t m) {
  UOpRef nll = ew(Op::MUL, log_softmax(x, n, m), onehot);
  UOpRef total = lazy::reduce(nll, Op::ADD, {0, 1});
  UOpRef mean = ew(Op::MUL, total, inverse_count(n, x->dtype(), {1, 1}));
  return lazy::reshape(lazy::elementwise(Op::NEG, {mean}), {});
}

}  // namespace polygrad::testgraph

#endif  // POLYGRAD_TESTS_SCHEDULE_GRAPHS_HPP
