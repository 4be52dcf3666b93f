// Movement ops: reshape, permute, expand, squeeze, flatten, shrink, pad (and its modes), flip,
// repeat.
#include "tensor/tensor_impl.hpp"

#include "tensor/symbolic.hpp"

#include <algorithm>
#include <cmath>

namespace polygrad {

using detail::make;

namespace {
std::string ints_str(const std::vector<int64_t>& v) {
  return lazy::shape_str(v);
}
}  // namespace

Tensor Tensor::reshape(const Shape& shape_in) const {
  const detail::TensorImpl& p = detail::state(*this, "reshape");
  Shape s = shape_in;
  int64_t infer = -1, known = 1;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == -1) {
      if (infer >= 0) user_error("reshape: more than one -1 in " + ints_str(shape_in));
      infer = static_cast<int64_t>(i);
    } else if (s[i] < 0) {
      user_error("reshape: negative size in " + ints_str(shape_in));
    }
  }
  Shape given;  // the sizes given, checked before they are multiplied
  for (int64_t d : s)
    if (d != -1) given.push_back(d);
  detail::checked_numel("reshape", given);
  for (int64_t d : given) known *= d;
  const int64_t n = lazy::numel(p.shape);
  if (infer >= 0) {
    if (known == 0 || n % known != 0)
      user_error("reshape: cannot reshape " + lazy::shape_str(p.shape) + " to " +
                 ints_str(shape_in));
    s[static_cast<size_t>(infer)] = n / known;
  }
  if (lazy::numel(s) != n)
    user_error("reshape: cannot reshape " + lazy::shape_str(p.shape) + " to " + ints_str(shape_in));
  if (s == p.shape) return *this;
  if (lazy::any_bound()) {  // (a variable's axis keeps its expression, tensor/symbolic.hpp)
    const lazy::SymShape dims = lazy::reshape_dims(lazy::sym_shape(p.uop.get()), p.shape, s);
    if (lazy::has_symbolic(dims)) return make(lazy::reshape_sym(p.uop, dims), s, p.device);
  }
  return make(lazy::reshape(p.uop, s), s, p.device);
}

Tensor Tensor::permute(const std::vector<int64_t>& order) const {
  const detail::TensorImpl& p = detail::state(*this, "permute");
  const auto n = static_cast<int64_t>(p.shape.size());
  if (static_cast<int64_t>(order.size()) != n)
    user_error("permute: order " + ints_str(order) + " does not match shape " +
               lazy::shape_str(p.shape));
  std::vector<int64_t> o;
  std::vector<bool> seen(static_cast<size_t>(n), false);
  for (int64_t a : order) {
    int64_t x = detail::norm_axis("permute", a, n, p.shape);
    if (seen[static_cast<size_t>(x)])
      user_error("permute: order " + ints_str(order) + " repeats axis " + std::to_string(a));
    seen[static_cast<size_t>(x)] = true;
    o.push_back(x);
  }
  bool identity = true;
  for (int64_t i = 0; i < n; ++i) identity = identity && o[static_cast<size_t>(i)] == i;
  if (identity) return *this;
  Shape s;
  for (int64_t a : o) s.push_back(p.shape[static_cast<size_t>(a)]);
  return make(lazy::permute(p.uop, o), s, p.device);
}

Tensor Tensor::transpose(int64_t dim0, int64_t dim1) const {
  const detail::TensorImpl& p = detail::state(*this, "transpose");
  const auto n = static_cast<int64_t>(p.shape.size());
  if (n == 0) {  // (dims 0 or -1, as torch's: an axis of one element)
    detail::norm_axis("transpose", dim0, 1, p.shape);
    detail::norm_axis("transpose", dim1, 1, p.shape);
    return *this;
  }
  int64_t a = detail::norm_axis("transpose", dim0, n, p.shape);
  int64_t b = detail::norm_axis("transpose", dim1, n, p.shape);
  std::vector<int64_t> order;
  for (int64_t i = 0; i < n; ++i) order.push_back(i);
  std::swap(order[static_cast<size_t>(a)], order[static_cast<size_t>(b)]);
  return permute(order);
}

Tensor Tensor::expand(const Shape& shape_in) const {
  const detail::TensorImpl& p = detail::state(*this, "expand");
  if (shape_in.size() < p.shape.size())
    user_error("expand: cannot expand " + lazy::shape_str(p.shape) + " to " + ints_str(shape_in));
  Shape s = shape_in;
  const size_t lead = s.size() - p.shape.size();
  for (size_t i = 0; i < s.size(); ++i) {
    if (i >= lead && s[i] == -1) s[i] = p.shape[i - lead];
    if (s[i] < 0) user_error("expand: bad size in " + ints_str(shape_in));
  }
  return detail::broadcast_to("expand", *this, s);
}

Tensor Tensor::squeeze(std::optional<int64_t> dim) const {
  const detail::TensorImpl& p = detail::state(*this, "squeeze");
  Shape s;
  if (!dim) {
    for (int64_t d : p.shape)
      if (d != 1) s.push_back(d);
    return reshape(s);
  }
  if (p.shape.empty()) {  // (dim 0 or -1, as torch's: an axis of one element)
    detail::norm_axis("squeeze", *dim, 1, p.shape);
    return *this;
  }
  int64_t a = detail::norm_axis("squeeze", *dim, ndim(), p.shape);
  if (p.shape[static_cast<size_t>(a)] != 1) return *this;
  s = p.shape;
  s.erase(s.begin() + a);
  if (lazy::any_bound()) {  // (the other axes keep their expressions, even one whose value is 1)
    lazy::SymShape dims = lazy::sym_shape(p.uop.get());
    dims.erase(dims.begin() + a);
    if (lazy::has_symbolic(dims)) return make(lazy::reshape_sym(p.uop, dims), s, p.device);
  }
  return reshape(s);
}

Tensor Tensor::unsqueeze(int64_t dim) const {
  const detail::TensorImpl& p = detail::state(*this, "unsqueeze");
  int64_t a = detail::norm_axis("unsqueeze", dim, ndim() + 1, p.shape);
  Shape s = p.shape;
  s.insert(s.begin() + a, 1);
  if (lazy::any_bound()) {  // (the axes keep their expressions, even one whose value is 1)
    lazy::SymShape dims = lazy::sym_shape(p.uop.get());
    dims.insert(dims.begin() + a, lazy::dim_const(1));
    if (lazy::has_symbolic(dims)) return make(lazy::reshape_sym(p.uop, dims), s, p.device);
  }
  return reshape(s);
}

Tensor Tensor::flatten(int64_t start_dim, int64_t end_dim) const {
  const detail::TensorImpl& p = detail::state(*this, "flatten");
  if (p.shape.empty()) return reshape({1});
  int64_t a = detail::norm_axis("flatten", start_dim, ndim(), p.shape);
  int64_t b = detail::norm_axis("flatten", end_dim, ndim(), p.shape);
  if (a > b)
    user_error("flatten: start_dim " + std::to_string(start_dim) + " is after end_dim " +
               std::to_string(end_dim) + " for shape " + lazy::shape_str(p.shape));
  Shape s(p.shape.begin(), p.shape.begin() + a);
  int64_t m = 1;
  for (int64_t i = a; i <= b; ++i) m *= p.shape[static_cast<size_t>(i)];
  s.push_back(m);
  s.insert(s.end(), p.shape.begin() + b + 1, p.shape.end());
  return reshape(s);
}

Tensor Tensor::unflatten(int64_t dim, const Shape& sizes) const {
  const detail::TensorImpl& p = detail::state(*this, "unflatten");
  int64_t a = detail::norm_axis("unflatten", dim, ndim(), p.shape);
  Shape s(p.shape.begin(), p.shape.begin() + a);
  s.insert(s.end(), sizes.begin(), sizes.end());
  s.insert(s.end(), p.shape.begin() + a + 1, p.shape.end());
  int64_t want = p.shape[static_cast<size_t>(a)], got = 1;
  int64_t infer = 0;
  for (int64_t d : sizes) {
    if (d == -1)
      ++infer;
    else
      got *= d;
  }
  if (infer > 1 || (infer ? (got == 0 || want % got != 0) : got != want))
    user_error("unflatten: sizes " + ints_str(sizes) + " do not split axis " + std::to_string(dim) +
               " of shape " + lazy::shape_str(p.shape));
  // The -1 is the axis' size over the others' (reshape's -1, over all of them, is ambiguous
  // when another axis is 0: (2, 0) unflattened by (1, -1) is (1, 2, 0)).
  for (size_t i = 0; infer && i < sizes.size(); ++i)
    if (sizes[i] == -1) s[static_cast<size_t>(a) + i] = want / got;
  return reshape(s);
}

Tensor Tensor::shrink(const std::vector<std::pair<int64_t, int64_t>>& bounds) const {
  const detail::TensorImpl& p = detail::state(*this, "shrink");
  if (bounds.size() != p.shape.size())
    user_error("shrink: " + std::to_string(bounds.size()) + " bounds for shape " +
               lazy::shape_str(p.shape));
  Shape s;
  bool same = true;
  for (size_t i = 0; i < bounds.size(); ++i) {
    auto [b, e] = bounds[i];
    if (b < 0 || e < b || e > p.shape[i])
      user_error("shrink: bounds (" + std::to_string(b) + ", " + std::to_string(e) +
                 ") out of range for axis " + std::to_string(i) + " of shape " +
                 lazy::shape_str(p.shape));
    s.push_back(e - b);
    same = same && b == 0 && e == p.shape[i];
  }
  if (same) return *this;
  return make(lazy::shrink(p.uop, bounds), s, p.device);
}

Tensor Tensor::pad(const std::vector<std::pair<int64_t, int64_t>>& pads, double value) const {
  const detail::TensorImpl& p = detail::state(*this, "pad");
  if (pads.size() != p.shape.size())
    user_error("pad: " + std::to_string(pads.size()) + " pad pairs for shape " +
               lazy::shape_str(p.shape));
  // Negative amounts crop first.
  std::vector<std::pair<int64_t, int64_t>> crop, grow;
  bool any_crop = false, any_grow = false;
  constexpr int64_t kMax = detail::kMaxElements;  // (checked before the sums could overflow)
  for (size_t i = 0; i < pads.size(); ++i) {
    auto [b, a] = pads[i];
    if (b < -kMax || b > kMax || a < -kMax || a > kMax || p.shape[i] + b + a > kMax)
      user_error("pad: pads (" + std::to_string(b) + ", " + std::to_string(a) + ") of axis " +
                 std::to_string(i) + " of shape " + lazy::shape_str(p.shape) +
                 " make it longer than 2^62");
    int64_t cb = b < 0 ? -b : 0, ca = a < 0 ? -a : 0;
    if (cb + ca > p.shape[i])
      user_error("pad: pads (" + std::to_string(b) + ", " + std::to_string(a) +
                 ") crop more than axis " + std::to_string(i) + " of shape " +
                 lazy::shape_str(p.shape));
    crop.push_back({cb, p.shape[i] - ca});
    grow.push_back({std::max<int64_t>(b, 0), std::max<int64_t>(a, 0)});
    any_crop = any_crop || cb || ca;
    any_grow = any_grow || b > 0 || a > 0;
  }
  Tensor x = any_crop ? shrink(crop) : *this;
  if (!any_grow) return x;
  const detail::TensorImpl& q = *x.impl();
  Shape s = q.shape;
  for (size_t i = 0; i < s.size(); ++i) s[i] += grow[i].first + grow[i].second;
  Tensor padded = make(lazy::pad(q.uop, grow), s, q.device);
  // (-0.0 pads with -0.0 in a float dtype, as torch's pad: the lazy pad's fill is +0.)
  if (value == 0.0 && (!std::signbit(value) || !q.uop->dtype().is_float())) return padded;
  Tensor inside = detail::constant(1, dtypes::bool_, q.shape, q.device);
  Tensor mask = make(lazy::pad(inside.impl()->uop, grow), s, q.device);
  // The fill in the tensor's dtype (torch's), not promoted to a float one: converted as a cast
  // converts it (an int dtype truncates, bool is value != 0).
  const DType t = q.uop->dtype();
  Scalar fill = value;
  if (t.is_bool())
    fill = Scalar(value != 0.0);
  else if (t.is_int() && value >= -0x1p63 && value < 0x1p63)  // (int64's least value included)
    fill = Scalar(static_cast<long long>(std::trunc(value)));
  return mask.where(padded, detail::constant(fill, t, s, q.device));
}

Tensor Tensor::pad(const std::vector<std::pair<int64_t, int64_t>>& pads, PadMode mode,
                   double value) const {
  if (mode == PadMode::constant) return pad(pads, value);
  const detail::TensorImpl& p = detail::state(*this, "pad");
  const char* name = nullptr;
  const char* limit = nullptr;  // what a pad too long for the axis violates
  switch (mode) {
    case PadMode::reflect:
      name = "reflect", limit = " must be less than the axis' size";
      break;
    case PadMode::replicate:
      name = "replicate", limit = " need a non-empty axis and a length of at most 2^62";
      break;
    case PadMode::circular:
      name = "circular", limit = " must be at most the axis' size";
      break;
    default:
      user_error("pad: unknown pad mode " + std::to_string(static_cast<int>(mode)));
  }
  if (pads.size() != p.shape.size())
    user_error("pad: " + std::to_string(pads.size()) + " pad pairs for shape " +
               lazy::shape_str(p.shape));
  // Positive amounts pad axis by axis, each a cat of its edge pieces; negative ones crop,
  // after the padding for reflect and replicate and before it for circular (torch's orders:
  // the values agree wherever both are defined; tinygrad crops first).
  std::vector<std::pair<int64_t, int64_t>> crops;
  for (auto [b, a] : pads) crops.emplace_back(std::min<int64_t>(b, 0), std::min<int64_t>(a, 0));
  const bool crop_first = mode == PadMode::circular;
  Tensor x = crop_first ? pad(crops) : *this;
  for (size_t d = 0; d < pads.size(); ++d) {
    const int64_t s = x.shape()[d];
    const int64_t b = std::max<int64_t>(pads[d].first, 0), a = std::max<int64_t>(pads[d].second, 0);
    if (b == 0 && a == 0) continue;
    bool fits = s > 0 && b <= detail::kMaxElements && a <= detail::kMaxElements - s - b;
    if (mode == PadMode::reflect) fits = b < s && a < s;
    if (mode == PadMode::circular) fits = b <= s && a <= s;
    if (!fits)
      user_error(std::string("pad: ") + name + " pads (" + std::to_string(pads[d].first) + ", " +
                 std::to_string(pads[d].second) + ") of axis " + std::to_string(d) + " of shape " +
                 lazy::shape_str(p.shape) + limit);
    auto range = [&](int64_t lo, int64_t hi) {
      std::vector<std::pair<int64_t, int64_t>> bounds;
      for (int64_t n : x.shape()) bounds.emplace_back(0, n);
      bounds[d] = {lo, hi};
      return x.shrink(bounds);
    };
    const auto ad = static_cast<int64_t>(d);
    // The n elements that go before (`before`) or after the axis.
    auto piece = [&](bool before, int64_t n) {
      if (mode == PadMode::reflect)
        return (before ? range(1, n + 1) : range(s - 1 - n, s - 1)).flip(ad);
      if (mode == PadMode::circular) return before ? range(s - n, s) : range(0, n);
      Shape e = x.shape();  // replicate: the edge element, n times
      e[d] = n;
      return (before ? range(0, 1) : range(s - 1, s)).expand(e);
    };
    std::vector<Tensor> parts;
    if (b > 0) parts.push_back(piece(true, b));
    parts.push_back(x);
    if (a > 0) parts.push_back(piece(false, a));
    x = cat(parts, ad);
  }
  return crop_first ? x : x.pad(crops);
}

Tensor Tensor::flip(const std::vector<int64_t>& axes) const {
  const detail::TensorImpl& p = detail::state(*this, "flip");
  // A 0-d tensor takes axis 0 or -1, as one of one element, and is its own flip (torch's).
  const int64_t n = std::max<int64_t>(ndim(), 1);
  std::vector<int64_t> ax;
  for (int64_t a : axes) ax.push_back(detail::norm_axis("flip", a, n, p.shape));
  std::sort(ax.begin(), ax.end());
  if (std::adjacent_find(ax.begin(), ax.end()) != ax.end())
    user_error("flip: axes " + ints_str(axes) + " repeat an axis");
  if (ax.empty() || ndim() == 0) return *this;
  return make(lazy::flip(p.uop, ax), p.shape, p.device);
}

Tensor Tensor::repeat(const std::vector<int64_t>& repeats) const {
  const detail::TensorImpl& p = detail::state(*this, "repeat");
  if (repeats.size() < p.shape.size())
    user_error("repeat: " + std::to_string(repeats.size()) + " repeats for shape " +
               lazy::shape_str(p.shape));
  for (int64_t r : repeats)
    if (r < 0) user_error("repeat: negative repeat in " + ints_str(repeats));
  Shape base(repeats.size() - p.shape.size(), 1);
  base.insert(base.end(), p.shape.begin(), p.shape.end());
  // (1, s0, 1, s1, ...) -> (r0, s0, r1, s1, ...) -> (r0*s0, r1*s1, ...)
  Shape inter, expanded, out;
  for (size_t i = 0; i < base.size(); ++i) {
    inter.insert(inter.end(), {1, base[i]});
    expanded.insert(expanded.end(), {repeats[i], base[i]});
  }
  detail::checked_numel("repeat", expanded);  // (so no product below overflows)
  for (size_t i = 0; i < base.size(); ++i) out.push_back(repeats[i] * base[i]);
  return reshape(inter).expand(expanded).reshape(out);
}

}  // namespace polygrad
