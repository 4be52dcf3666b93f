// Linear algebra and nn functions: matmul, linear, softmax, log_softmax, logsumexp, layernorm,
// cross_entropy, binary_crossentropy, scaled_dot_product_attention.
#include "tensor/tensor_impl.hpp"

#include <cmath>

namespace polygrad {

Tensor Tensor::matmul(const Tensor& o) const {
  const detail::TensorImpl& p = detail::state(*this, "matmul");
  const detail::TensorImpl& q = detail::state(o, "matmul");
  detail::check_same_device("matmul", *this, o);
  if (p.shape.empty() || q.shape.empty())
    user_error("matmul: shapes " + lazy::shape_str(p.shape) + " and " + lazy::shape_str(q.shape) +
               ": both operands need at least one dimension");
  const bool vec_a = p.shape.size() == 1, vec_b = q.shape.size() == 1;
  Tensor a = vec_a ? unsqueeze(0) : *this;  // (..., n, k)
  Tensor b = vec_b ? o.unsqueeze(-1) : o;   // (..., k, m)
  const int64_t k = a.size(-1), kb = b.size(-2);
  if (k != kb)
    user_error("matmul: shapes " + lazy::shape_str(p.shape) + " and " + lazy::shape_str(q.shape) +
               " do not match (" + std::to_string(k) + " != " + std::to_string(kb) + ")");
  // The batch axes broadcast as the operands' own shapes say (the error names those, not the
  // broadcast product's internal (..., n, 1, k) and (..., 1, m, k) views).
  if (const Shape ba(a.shape().begin(), a.shape().end() - 2),
      bb(b.shape().begin(), b.shape().end() - 2);
      !detail::try_broadcast_shape(ba, bb))
    user_error("matmul: shapes " + lazy::shape_str(p.shape) + " and " + lazy::shape_str(q.shape) +
               ": batch axes " + lazy::shape_str(ba) + " and " + lazy::shape_str(bb) +
               " do not broadcast");
  DType t = detail::promote_for("matmul", detail::dt(a), detail::dt(b));
  // A right operand whose batch axes are all 1 is a 2-d matrix for every batch.
  bool b_unbatched = b.ndim() > 2;
  for (int64_t i = 0; i + 2 < b.ndim(); ++i) b_unbatched = b_unbatched && b.size(i) == 1;
  if (b_unbatched && a.ndim() >= b.ndim()) b = b.reshape({b.size(-2), b.size(-1)});
  if (a.ndim() > 2 && b.ndim() == 2) {
    // (..., n, k) @ (k, m): one 2-d matmul over the flattened leading axes, materialised in
    // that shape. The cpu codegen runs 2-d matmul kernels ~100x faster than batched ones
    // (tensor_bench: (8, 1024, 144) @ (144, 32) 1.8 ms as a 2-d kernel, 170 ms batched).
    Shape out(a.shape().begin(), a.shape().end() - 1);
    const int64_t rows = lazy::numel(out);  // (not -1: with k = 0 that is ambiguous)
    out.push_back(b.size(-1));
    Tensor r = a.reshape({rows, k}).matmul(b).contiguous().reshape(out);
    return vec_b ? r.squeeze(-1) : r;
  }
  // (..., n, 1, k) * (..., 1, m, k), summed over k.
  Tensor x = a.cast(t.scalar()).unsqueeze(-2);
  Tensor y = b.cast(t.scalar()).transpose(-1, -2).unsqueeze(-3);
  lazy::Shape bs = detail::broadcast_shape("matmul", x.shape(), y.shape());
  Tensor r = detail::broadcast_to("matmul", x, bs, &y)
                 .mul(detail::broadcast_to("matmul", y, bs, &x))
                 .sum(-1)
                 .cast(t.scalar());
  if (vec_a) r = r.squeeze(-2);
  if (vec_b) r = r.squeeze(-1);
  return r;
}

Tensor Tensor::linear(const Tensor& weight, const std::optional<Tensor>& bias) const {
  const Shape &xs = detail::state(*this, "linear").shape,
              &ws = detail::state(weight, "linear").shape;
  if (xs.empty() || ws.empty() || xs.back() != ws.back())
    user_error("linear: input shape " + lazy::shape_str(xs) + " and weight shape " +
               lazy::shape_str(ws) + " do not match (x @ weight.T needs their last axes equal)");
  Tensor r = matmul(weight.T());
  if (bias && !detail::try_broadcast_shape(r.shape(), bias->shape()))
    user_error("linear: bias shape " + lazy::shape_str(bias->shape()) +
               " does not broadcast with the output shape " + lazy::shape_str(r.shape()) +
               " (input " + lazy::shape_str(xs) + ", weight " + lazy::shape_str(ws) + ")");
  return bias ? r + *bias : r;
}

Tensor Tensor::softmax(int64_t axis) const {
  // The max only keeps exp in range: softmax does not depend on it, so its gradient (0 in
  // exact arithmetic, a mask of the max's positions otherwise) is not taken.
  if (ndim() == 0) {  // (axis 0 or -1: one element)
    detail::norm_axis("softmax", axis, 1, shape());
    return reshape({1}).softmax(0).reshape({});
  }
  const int64_t a = detail::norm_axis("softmax", axis, ndim(), shape());
  return detail::widened(detail::to_float(*this), [a](const Tensor& x) {
    Tensor e = (x - detail::reduce_max(x, {a}, true).detach()).exp();
    // One reciprocal per row and a multiply per element (as torch's kernel does), not a
    // division per element.
    return e * e.sum(a, true).reciprocal();
  });
}

Tensor Tensor::log_softmax(int64_t axis) const {
  if (ndim() == 0) {  // (axis 0 or -1: one element)
    detail::norm_axis("log_softmax", axis, 1, shape());
    return reshape({1}).log_softmax(0).reshape({});
  }
  const int64_t a = detail::norm_axis("log_softmax", axis, ndim(), shape());
  return detail::widened(detail::to_float(*this), [a](const Tensor& x) {
    Tensor s = x - detail::reduce_max(x, {a}, true).detach();  // (as in softmax)
    return s - s.exp().sum(a, true).log();
  });
}

Tensor Tensor::logsumexp(int64_t axis, bool keepdim) const {
  if (ndim() == 0) {  // (axis 0 or -1: one element)
    detail::norm_axis("logsumexp", axis, 1, shape());
    return reshape({1}).logsumexp(0, false);
  }
  const int64_t a = detail::norm_axis("logsumexp", axis, ndim(), shape());
  Tensor r = detail::widened(detail::to_float(*this), [a](const Tensor& x) {
    // The max keeps exp in range; an infinite one (a row of -inf, or one holding +inf) shifts
    // by 0 instead, or inf - inf would make the result NaN, not -inf or +inf. Its gradient
    // cancels in exact arithmetic, so it is not taken (the result's is the softmax).
    Tensor m = detail::reduce_max(x, {a}, true).detach();
    m = m.isinf().where(0.0, m);
    return (x - m).exp().sum(a, true).log() + m;
  });
  return keepdim ? r : r.squeeze(a);
}

Tensor Tensor::layernorm(const std::vector<int64_t>& axes, double eps) const {
  detail::state(*this, "layernorm");
  return detail::widened(*this, [&](const Tensor& w) {  // (half types in float32, as var is)
    Tensor d = detail::centered("layernorm", detail::to_float(w), axes);
    return d * ((d * d).mean(axes, true) + eps).rsqrt();
  });
}

namespace {

Tensor reduce_loss(const Tensor& loss, Reduction reduction) {
  switch (reduction) {
    case Reduction::mean:
      return loss.mean();
    case Reduction::sum:
      return loss.sum();
    case Reduction::none:
      return loss;
  }
  user_error("loss: unknown reduction " + std::to_string(static_cast<int>(reduction)));
}

// A composite's own error for an operand that does not broadcast with the input (else the
// message is that of the mul or add inside, naming neither the op nor its operands).
void check_broadcasts(const char* op, const char* what, const Tensor& x, const Tensor& t) {
  if (!detail::try_broadcast_shape(x.shape(), t.shape()))
    user_error(std::string(op) + ": " + what + " shape " + lazy::shape_str(t.shape()) +
               " does not broadcast with input shape " + lazy::shape_str(x.shape()));
}

}  // namespace

Tensor Tensor::cross_entropy(const Tensor& target, int64_t axis, double label_smoothing,
                             Reduction reduction, int64_t ignore_index) const {
  const detail::TensorImpl& p = detail::state(*this, "cross_entropy");
  const detail::TensorImpl& tp = detail::state(target, "cross_entropy");
  const int64_t a = detail::norm_axis("cross_entropy", axis, ndim(), p.shape);
  const int64_t classes = p.shape[static_cast<size_t>(a)];
  // kept: the positions whose class is not ignore_index; hot: their classes' one-hot mask
  Tensor probs, kept, hot;
  if (DType(target.dtype()).is_float()) {
    if (tp.shape != p.shape)
      user_error("cross_entropy: probability target shape " + lazy::shape_str(tp.shape) +
                 " does not match logits shape " + lazy::shape_str(p.shape));
    probs = target;
  } else {
    lazy::Shape want = p.shape;
    want.erase(want.begin() + a);
    if (tp.shape != want)
      user_error("cross_entropy: class target shape " + lazy::shape_str(tp.shape) +
                 " does not match logits shape " + lazy::shape_str(p.shape) + " without axis " +
                 std::to_string(axis));
    if (const std::optional<int64_t> bad =
            detail::host_ints_outside(target, 0, classes, ignore_index))
      user_error("cross_entropy: class " + std::to_string(*bad) + " is out of range for " +
                 std::to_string(classes) + " classes");
    hot = detail::move_last_to(detail::class_mask(target, classes), a);
    kept = target != Scalar(ignore_index);
  }
  if (!(label_smoothing >= 0.0 && label_smoothing <= 1.0))
    user_error("cross_entropy: label_smoothing must be in [0, 1], not " +
               std::to_string(label_smoothing));
  Tensor loss;
  if (hot.defined() && label_smoothing == 0.0) {
    // Class targets: logsumexp(x) - x[class] per position, the class's logit picked by a
    // select (not a product, and no sum of one-hot terms in the gradient: its gradient is
    // softmax(x) - one_hot, one pass over the classes after the softmax's). 0 where ignored.
    Tensor picked = detail::widened(detail::to_float(*this), [&](const Tensor& x) {
      Tensor s = x - detail::reduce_max(x, {a}, true).detach();  // (as in log_softmax)
      return s.exp().sum(a).log() - hot.where(s, 0.0).sum(a);
    });
    loss = kept.where(picked, 0.0);
  } else {
    if (hot.defined()) probs = hot.cast(detail::to_float(*this).dtype());
    if (label_smoothing != 0.0)
      probs = probs * (1.0 - label_smoothing) + label_smoothing / static_cast<double>(classes);
    if (kept.defined()) probs = probs * kept.unsqueeze(a).cast(probs.dtype());
    // Classes of probability 0 add nothing, even at a logit of -inf (0 * -inf would be NaN).
    loss = -(probs != 0.0).where(log_softmax(a) * probs, 0.0).sum(a);
  }
  if (reduction == Reduction::mean && kept.defined())
    return loss.sum() / kept.cast(loss.dtype()).sum();
  return reduce_loss(loss, reduction);
}

Tensor Tensor::binary_crossentropy(const Tensor& target, Reduction reduction) const {
  // torch's: each log clamped at -100, so p = 0 or 1 stays finite, and the gradient
  // (p - y) / max(p (1 - p), 1e-12). Inside, that is the logs' own gradient; within 1e-12 of 0
  // or at 1 (a sigmoid saturated in float32) the logs' is 0 * inf = NaN, so there the loss is
  // its value plus (p - p') (p' - y) 1e12, p' = p detached (value 0, gradient torch's). The
  // logs inside see 1/2 where that branch is taken. float16 and bfloat16 are worked in float32
  // (1e12 is no float16), the result in the dtype p and y promote to.
  check_broadcasts("binary_crossentropy", "target", *this, target);
  const DType out = detail::promote_for("binary_crossentropy", detail::dt(detail::to_float(*this)),
                                        detail::dt(target));
  Tensor p = detail::to_float(*this);
  if (p.dtype() == PG_DTYPE_FLOAT16 || p.dtype() == PG_DTYPE_BFLOAT16) p = p.cast(PG_DTYPE_FLOAT32);
  Tensor edge = (p <= 1e-12).logical_or(p >= 1.0 - 1e-12);
  Tensor ps = edge.where(0.5, p);
  Tensor inside = -(target * ps.log() + (1.0 - target) * (1.0 - ps).log());
  Tensor pd = p.detach(), yd = target.detach();
  Tensor lp = pd.log().maximum(-100.0), lq = (1.0 - pd).log().maximum(-100.0);
  Tensor at_edge = -(target * lp + (1.0 - target) * lq) + (p - pd) * ((pd - yd) * 1e12);
  return reduce_loss(edge.where(at_edge, inside).cast(out.scalar()), reduction);
}

Tensor Tensor::binary_crossentropy_logits(const Tensor& target, Reduction reduction,
                                          const std::optional<Tensor>& pos_weight) const {
  // -log(sigmoid(x)) = softplus(x) - x and -log(1 - sigmoid(x)) = softplus(x): unweighted,
  // their mix is softplus(x) - x*y (torch's gradient at 0 too: 1/2 - y).
  check_broadcasts("binary_crossentropy_logits", "target", *this, target);
  if (pos_weight) check_broadcasts("binary_crossentropy_logits", "pos_weight", *this, *pos_weight);
  Tensor x = detail::to_float(*this);
  Tensor sp = x.softplus();
  if (!pos_weight) return reduce_loss(sp - x * target, reduction);
  return reduce_loss(*pos_weight * target * (sp - x) + (1.0 - target) * sp, reduction);
}

Tensor Tensor::scaled_dot_product_attention(const Tensor& key, const Tensor& value,
                                            const std::optional<Tensor>& attn_mask,
                                            bool is_causal) const {
  const detail::TensorImpl& p = detail::state(*this, "scaled_dot_product_attention");
  if (p.shape.size() < 2)
    user_error("scaled_dot_product_attention: query shape " + lazy::shape_str(p.shape) +
               " needs at least 2 dimensions");
  // refused, as tinygrad and torch do, rather than combined with the causal mask
  if (is_causal && attn_mask)
    user_error("scaled_dot_product_attention: cannot set attn_mask (shape " +
               lazy::shape_str(attn_mask->shape()) + ") when is_causal=True");
  const Shape &ks = detail::state(key, "scaled_dot_product_attention").shape,
              &vs = detail::state(value, "scaled_dot_product_attention").shape;
  const auto batch = [](const Shape& s) { return Shape(s.begin(), s.end() - 2); };
  std::optional<Shape> qkv;
  if (ks.size() >= 2 && vs.size() >= 2 && ks.back() == p.shape.back() &&
      ks[ks.size() - 2] == vs[vs.size() - 2])
    if (auto qk = detail::try_broadcast_shape(batch(p.shape), batch(ks)))
      qkv = detail::try_broadcast_shape(*qk, batch(vs));
  if (!qkv)
    user_error("scaled_dot_product_attention: query " + lazy::shape_str(p.shape) + ", key " +
               lazy::shape_str(ks) + " and value " + lazy::shape_str(vs) +
               " do not fit (..., L, E), (..., S, E) and (..., S, Ev)");
  Tensor q = detail::to_float(*this);
  const double scale = 1.0 / std::sqrt(static_cast<double>(size(-1)));
  Tensor scores = q.matmul(key.transpose(-2, -1)) * scale;  // (..., L, S)
  const int64_t L = scores.size(-2), S = scores.size(-1);
  if (is_causal) scores = detail::triangle_mask(L, S, 0, true, p.device).where(scores, -INFINITY);
  if (attn_mask) {
    if (!detail::try_broadcast_shape(scores.shape(), attn_mask->shape()))
      user_error("scaled_dot_product_attention: attn_mask shape " +
                 lazy::shape_str(attn_mask->shape()) + " does not broadcast with the scores' " +
                 lazy::shape_str(scores.shape()) + " (query " + lazy::shape_str(p.shape) +
                 ", key " + lazy::shape_str(key.shape()) + ")");
    if (DType(attn_mask->dtype()).is_bool())
      scores = attn_mask->where(scores, -INFINITY);
    else
      scores = scores + *attn_mask;
  }
  return scores.softmax(-1).matmul(value);
}

}  // namespace polygrad
