// conv2d (im2col and a matmul) and 2-d pooling, from shifted, strided views of the input.
#include "tensor/tensor_impl.hpp"

#include <cmath>

namespace polygrad {

namespace {

// The input positions that kernel offset (i, j) meets, for every output position:
// out[..., y, x] = t[..., y*s.h + i*d.h, x*s.w + j*d.w], shape (..., oy, ox). Only shrinks and
// stride splits, so kernels index the input with plain affine expressions.
Tensor shifted(const Tensor& t, int64_t i, int64_t j, int64_t oy, int64_t ox, Size2 s, Size2 d) {
  const size_t nd = t.shape().size();
  Tensor::Shape lead(t.shape().begin(), t.shape().end() - 2);
  std::vector<std::pair<int64_t, int64_t>> b;
  for (int64_t v : lead) b.push_back({0, v});
  const int64_t y0 = i * d.h, x0 = j * d.w;
  b.push_back({y0, y0 + (oy - 1) * s.h + 1});
  b.push_back({x0, x0 + (ox - 1) * s.w + 1});
  Tensor r = t.shrink(b);
  if (s.h == 1 && s.w == 1) return r;
  // pad to (oy*s.h, ox*s.w), split each axis (o, s) and keep offset 0
  std::vector<std::pair<int64_t, int64_t>> pads(nd, {0, 0});
  pads[nd - 2] = {0, oy * s.h - r.shape()[nd - 2]};
  pads[nd - 1] = {0, ox * s.w - r.shape()[nd - 1]};
  Tensor::Shape split = lead, out = lead;
  split.insert(split.end(), {oy, s.h, ox, s.w});
  out.insert(out.end(), {oy, ox});
  std::vector<std::pair<int64_t, int64_t>> keep(b.begin(), b.end() - 2);
  keep.insert(keep.end(), {{0, oy}, {0, 1}, {0, ox}, {0, 1}});
  return r.pad(pads).reshape(split).shrink(keep).reshape(out);
}

// Windows along one axis of n inputs padded by `pad` on both sides; ceil_mode keeps a last,
// partial window that starts inside the input or its left padding (torch's rule).
int64_t window_count(int64_t n, int64_t pad, int64_t k, int64_t s, int64_t d, bool ceil_mode) {
  const int64_t span = n + 2 * pad - d * (k - 1) - 1;
  if (!ceil_mode) return span / s + 1;
  int64_t o = (span + s - 1) / s + 1;
  if ((o - 1) * s >= n + pad) --o;
  return o;
}

// Windows that tile the input (stride = kernel, no dilation): t cropped to (oy*kh, ox*kw) and
// split into (..., oy, kh, ox, kw), so a pool is a reduce over axes -3 and -1. Its gradient
// is then a broadcast, not a sum of strided pads.
Tensor tiles(const Tensor& t, int64_t kh, int64_t kw, int64_t oy, int64_t ox) {
  std::vector<std::pair<int64_t, int64_t>> b;
  for (int64_t v : t.shape()) b.push_back({0, v});
  b[b.size() - 2] = {0, oy * kh};
  b[b.size() - 1] = {0, ox * kw};
  Tensor::Shape shape(t.shape().begin(), t.shape().end() - 2);
  shape.insert(shape.end(), {oy, kh, ox, kw});
  return t.shrink(b).reshape(shape);
}

}  // namespace

namespace {

/// 16 elements: a 64-byte cache line of float32, and a whole number of vectors on every CPU
/// target (8 or 16 float lanes).
constexpr int64_t kWholeLine = 16;

void check_spatial(const char* op, const Tensor& x, int64_t kh, int64_t kw, Size2 stride,
                   Size2 dilation, Size2 padding) {
  if (x.ndim() < 2)
    user_error(std::string(op) + ": input shape " + lazy::shape_str(x.shape()) +
               " needs two spatial dimensions");
  if (stride.h <= 0 || stride.w <= 0 || dilation.h <= 0 || dilation.w <= 0 || padding.h < 0 ||
      padding.w < 0 || kh <= 0 || kw <= 0)
    user_error(std::string(op) + ": kernel, stride and dilation must be positive, padding >= 0");
  const int64_t h = x.size(-2) + 2 * padding.h, w = x.size(-1) + 2 * padding.w;
  if (dilation.h * (kh - 1) + 1 > h || dilation.w * (kw - 1) + 1 > w)
    user_error(std::string(op) + ": kernel (" + std::to_string(kh) + ", " + std::to_string(kw) +
               ") does not fit padded input shape " + lazy::shape_str(x.shape()));
}

// torch's rule for pooling: padding at most half the kernel's extent (dilated), so every
// window holds an input element.
void check_pool_padding(const char* op, Size2 kernel, Size2 dilation, Size2 padding) {
  const int64_t eh = dilation.h * (kernel.h - 1) + 1, ew = dilation.w * (kernel.w - 1) + 1;
  if (2 * padding.h > eh || 2 * padding.w > ew)
    user_error(std::string(op) + ": padding (" + std::to_string(padding.h) + ", " +
               std::to_string(padding.w) + ") exceeds half the kernel (" + std::to_string(eh) +
               ", " + std::to_string(ew) + ")");
}

Tensor pad_spatial(const Tensor& x, Size2 padding, double value) {
  if (padding.h == 0 && padding.w == 0) return x;
  std::vector<std::pair<int64_t, int64_t>> pads(x.shape().size(), {0, 0});
  pads[pads.size() - 2] = {padding.h, padding.h};
  pads[pads.size() - 1] = {padding.w, padding.w};
  return x.pad(pads, value);
}

}  // namespace

Tensor Tensor::conv2d(const Tensor& weight, const std::optional<Tensor>& bias, int64_t groups,
                      Size2 stride, Size2 dilation, Size2 padding) const {
  const detail::TensorImpl& p = detail::state(*this, "conv2d");
  const detail::TensorImpl& w = detail::state(weight, "conv2d");
  if (p.shape.size() != 4 || w.shape.size() != 4)
    user_error("conv2d: input " + lazy::shape_str(p.shape) + " and weight " +
               lazy::shape_str(w.shape) + " must both be 4-d (NCHW, OIHW)");
  const int64_t bs = p.shape[0], cin = p.shape[1], cout = w.shape[0];
  if (groups <= 0) user_error("conv2d: groups must be positive, not " + std::to_string(groups));
  if (bias && detail::state(*bias, "conv2d").shape != Shape{cout})
    user_error("conv2d: bias shape " + lazy::shape_str(bias->shape()) + " does not match weight " +
               lazy::shape_str(w.shape) + " (" + std::to_string(cout) + " output channels)");
  if (cin % groups != 0 || cout % groups != 0 || w.shape[1] * groups != cin)
    user_error("conv2d: input " + lazy::shape_str(p.shape) + " and weight " +
               lazy::shape_str(w.shape) + " do not match for groups=" + std::to_string(groups));
  const int64_t kh = w.shape[2], kw = w.shape[3];
  check_spatial("conv2d", *this, kh, kw, stride, dilation, padding);
  Tensor x = pad_spatial(*this, padding, 0.0);
  const int64_t oy = window_count(x.size(-2), 0, kh, stride.h, dilation.h, false);
  const int64_t ox = window_count(x.size(-1), 0, kw, stride.w, dilation.w, false);
  const int64_t cg = cin / groups, og = cout / groups;
  x = x.reshape({bs, groups, cg, x.size(-2), x.size(-1)});
  // im2col from the kernel offsets' shifted views stacked (a sum of pads): the codegen unrolls
  // the offset axis, so the copy is one (padding-gated) load per element, and the gradient is
  // the sum of the views' pads of the column gradient (affine: col2im with no div/mod).
  std::vector<Tensor> views;
  for (int64_t i = 0; i < kh; ++i)
    for (int64_t j = 0; j < kw; ++j) views.push_back(shifted(x, i, j, oy, ox, stride, dilation));
  const int64_t kk = cg * kh * kw, yx = oy * ox;
  Tensor wm = weight.reshape({groups, og, kk});
  Tensor r;
  if (yx % kWholeLine == 0) {
    // As Caffe lays it out, cols (bs, g, cg*kh*kw, oy*ox), and out (bs, g, og, yx) =
    // w (g, og, kk) @ cols: the output positions are the matmul's columns, read and written in
    // vectors, and the result is NCHW as it stands (realised before the reshape splits the
    // positions into rows of ox).
    Tensor cols = Tensor::stack(views, 3).contiguous().reshape({bs, groups, kk, yx});
    r = wm.matmul(cols).contiguous();
  } else {
    // Output positions that fill no whole vectors (14 x 14): cols transposed, (bs, g, yx, kk),
    // and out^T = cols @ w^T, permuted to NCHW. Every matmul of the step then reads an operand
    // contiguous along its columns or both along k: the forward (k = kk), the weight gradient
    // dout^T @ cols (columns kk of cols), the column gradient dout @ w (columns kk of w).
    Tensor cols = Tensor::stack(views, -1).reshape({bs, groups, cg, yx, kh * kw});
    cols = cols.permute({0, 1, 3, 2, 4}).contiguous().reshape({bs, groups, yx, kk});
    r = cols.matmul(wm.transpose(-1, -2)).transpose(-1, -2);
  }
  r = r.reshape({bs, cout, oy, ox});
  return bias ? r + bias->reshape({1, cout, 1, 1}) : r;
}

namespace {

// x padded by `padding` on both sides with `value`, and on the right past that with `tail`
// (the part of ceil_mode's last windows beyond the padding) so oy x ox windows fit.
Tensor pad_for_windows(const Tensor& x, Size2 padding, int64_t oy, int64_t ox, Size2 k, Size2 s,
                       Size2 d, double value, double tail) {
  Tensor r = pad_spatial(x, padding, value);
  const int64_t ey = std::max<int64_t>(0, (oy - 1) * s.h + d.h * (k.h - 1) + 1 - r.size(-2));
  const int64_t ex = std::max<int64_t>(0, (ox - 1) * s.w + d.w * (k.w - 1) + 1 - r.size(-1));
  if (ey == 0 && ex == 0) return r;
  std::vector<std::pair<int64_t, int64_t>> pads(r.shape().size(), {0, 0});
  pads[pads.size() - 2] = {0, ey};
  pads[pads.size() - 1] = {0, ex};
  return r.pad(pads, tail);
}

// The kernel offsets' views combined by `f`, element by element: each window's value.
template <class F>
Tensor fold_windows(const Tensor& x, Size2 k, Size2 s, Size2 d, int64_t oy, int64_t ox, F f) {
  Tensor r;
  for (int64_t i = 0; i < k.h; ++i)
    for (int64_t j = 0; j < k.w; ++j) {
      Tensor v = shifted(x, i, j, oy, ox, s, d);
      r = r.defined() ? f(r, v) : v;
    }
  return r;
}

// The sum over each window (a reduce over tiles when the windows tile the input).
Tensor window_sum(const Tensor& x, Size2 k, Size2 s, int64_t oy, int64_t ox) {
  if (s.h == k.h && s.w == k.w) return tiles(x, k.h, k.w, oy, ox).sum({-3, -1});
  return fold_windows(x, k, s, 1, oy, ox, [](const Tensor& a, const Tensor& b) { return a + b; });
}

}  // namespace

Tensor Tensor::max_pool2d(Size2 kernel, std::optional<Size2> stride, Size2 dilation, Size2 padding,
                          bool ceil_mode) const {
  detail::state(*this, "max_pool2d");
  Size2 s = stride ? *stride : kernel;
  check_spatial("max_pool2d", *this, kernel.h, kernel.w, s, dilation, padding);
  check_pool_padding("max_pool2d", kernel, dilation, padding);
  const int64_t oy = window_count(size(-2), padding.h, kernel.h, s.h, dilation.h, ceil_mode);
  const int64_t ox = window_count(size(-1), padding.w, kernel.w, s.w, dilation.w, ceil_mode);
  // Padded with max's identity: -inf, or an int dtype's least value and false (tinygrad's
  // dtypes.min; an int tensor's -inf became 0, a bool one's true).
  const DType t = detail::dt(*this);
  const double least = t.is_float()  ? -INFINITY
                       : t.is_bool() ? 0.0
                                     : static_cast<double>(t.int_min());
  Tensor x = pad_for_windows(*this, padding, oy, ox, kernel, s, dilation, least, least);
  if (s.h == kernel.h && s.w == kernel.w && dilation.h == 1 && dilation.w == 1)
    return tiles(x, kernel.h, kernel.w, oy, ox).max({-3, -1});
  // A select, not maximum, per kernel offset: at a tie the earlier offset keeps the window's
  // gradient whole (torch's: the first maximum), where maximum's halves would leave 1/2, 1/4,
  // ... 1/256 along the chain. A NaN wins, as in maximum.
  return fold_windows(x, kernel, s, dilation, oy, ox, [](const Tensor& a, const Tensor& b) {
    return ((b > a) | b.isnan()).where(b, a);
  });
}

Tensor Tensor::avg_pool2d(Size2 kernel, std::optional<Size2> stride, Size2 padding, bool ceil_mode,
                          bool count_include_pad) const {
  detail::state(*this, "avg_pool2d");
  Size2 s = stride ? *stride : kernel;
  check_spatial("avg_pool2d", *this, kernel.h, kernel.w, s, 1, padding);
  check_pool_padding("avg_pool2d", kernel, 1, padding);
  const int64_t oy = window_count(size(-2), padding.h, kernel.h, s.h, 1, ceil_mode);
  const int64_t ox = window_count(size(-1), padding.w, kernel.w, s.w, 1, ceil_mode);
  Tensor x = pad_for_windows(detail::to_float(*this), padding, oy, ox, kernel, s, 1, 0.0, 0.0);
  Tensor sum = window_sum(x, kernel, s, oy, ox);
  const bool partial =
      x.size(-2) > size(-2) + 2 * padding.h || x.size(-1) > size(-1) + 2 * padding.w;
  const bool pads = padding.h > 0 || padding.w > 0;
  if (!partial && (!pads || count_include_pad))
    return sum * (1.0 / static_cast<double>(kernel.h * kernel.w));
  // Windows of different sizes: each divides by the pooled count of the positions it counts,
  // a (oy, ox) tensor from a mask of ones over the input (and its padding when counted).
  Tensor mask = Tensor::ones({size(-2), size(-1)}, x.dtype(), device());
  if (count_include_pad)
    mask = pad_for_windows(pad_spatial(mask, padding, 1.0), 0, oy, ox, kernel, s, 1, 0.0, 0.0);
  else
    mask = pad_for_windows(mask, padding, oy, ox, kernel, s, 1, 0.0, 0.0);
  return sum / window_sum(mask, kernel, s, oy, ox);
}

}  // namespace polygrad
