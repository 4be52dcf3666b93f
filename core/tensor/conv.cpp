// conv2d and 2-d pooling as sums / maxima over kernel offsets of shifted, strided views.
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

// The windows along the last axis of t (..., n): (..., k, o) with element (a, y) =
// t[..., a*d + y*s], from movement ops alone (tinygrad's pooling view): the axis repeated
// e times and read as k rows of L = d + m*n elements (L >= o*s), so row a starts at a*L, which
// is a*d modulo n; each row's first o*s elements split into (o, s) and the stride's offset 0
// kept. Kernels index it as (a*L + y*s) % n, which the symbolic engine reduces to a*d + y*s
// (a*d + y*s < n for every window), so the im2col copy reads t with affine offsets.
Tensor windows(const Tensor& t, int64_t k, int64_t s, int64_t d, int64_t o) {
  const int64_t n = t.size(-1);
  const int64_t m = std::max<int64_t>(1, (o * s - d + n - 1) / n);
  const int64_t L = d + m * n, e = (k * L + n - 1) / n;
  std::vector<int64_t> reps(t.shape().size(), 1);
  reps.back() = e;
  std::vector<std::pair<int64_t, int64_t>> b;
  for (int64_t v : t.shape()) b.push_back({0, v});
  Tensor::Shape shape = t.shape();
  b.back() = {0, k * L};
  shape.back() = k;
  shape.push_back(L);
  Tensor r = t.repeat(reps).shrink(b).reshape(shape);  // (..., k, L)
  b.back() = {0, k};
  b.push_back({0, o * s});
  shape.back() = o;
  shape.push_back(s);
  r = r.shrink(b).reshape(shape);  // (..., k, o, s)
  b.back() = {0, o};
  b.push_back({0, 1});
  shape.pop_back();
  return r.shrink(b).reshape(shape);  // (..., k, o)
}

int64_t out_size(int64_t n, int64_t k, int64_t s, int64_t d) {
  return (n - d * (k - 1) - 1) / s + 1;
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
  if (groups <= 0 || cin % groups != 0 || cout % groups != 0 || w.shape[1] * groups != cin)
    user_error("conv2d: input " + lazy::shape_str(p.shape) + " and weight " +
               lazy::shape_str(w.shape) + " do not match for groups=" + std::to_string(groups));
  const int64_t kh = w.shape[2], kw = w.shape[3];
  check_spatial("conv2d", *this, kh, kw, stride, dilation, padding);
  Tensor x = pad_spatial(*this, padding, 0.0);
  const int64_t oy = out_size(x.size(-2), kh, stride.h, dilation.h);
  const int64_t ox = out_size(x.size(-1), kw, stride.w, dilation.w);
  const int64_t cg = cin / groups, og = cout / groups;
  x = x.reshape({bs, groups, cg, x.size(-2), x.size(-1)});
  // im2col as Caffe lays it out: cols (bs, g, cg*kh*kw, oy*ox), each kernel offset's rows of
  // output positions contiguous, so the copy reads the input along its rows (vector loads and
  // stores). Windows over the height, then over the width: (bs, g, cg, kh, kw, oy, ox).
  Tensor t = windows(x.transpose(-1, -2), kh, stride.h, dilation.h, oy);     // (.., W, kh, oy)
  t = windows(t.permute({0, 1, 2, 4, 5, 3}), kw, stride.w, dilation.w, ox);  // (.., kh, oy, kw, ox)
  const int64_t kk = cg * kh * kw, yx = oy * ox;
  Tensor cols = t.permute({0, 1, 2, 3, 5, 4, 6}).contiguous().reshape({bs, groups, kk, yx});
  Tensor wm = weight.reshape({groups, og, kk});
  Tensor r;
  if (yx % kWholeLine == 0) {
    // out (bs, g, og, yx) = w (g, og, kk) @ cols: the output positions are the matmul's
    // columns, read and written in vectors, and the result is NCHW as it stands (realised
    // before the reshape splits the positions into rows of ox).
    r = wm.matmul(cols).contiguous();
  } else {
    // Output positions that fill no whole vectors (14 x 14): the positions are the rows of
    // cols^T @ w^T (the output channels in vectors), then permuted to NCHW.
    r = cols.transpose(-1, -2).matmul(wm.transpose(-1, -2).contiguous()).transpose(-1, -2);
  }
  r = r.reshape({bs, cout, oy, ox});
  return bias ? r + bias->reshape({1, cout, 1, 1}) : r;
}

Tensor Tensor::max_pool2d(Size2 kernel, std::optional<Size2> stride, Size2 dilation,
                          Size2 padding) const {
  detail::state(*this, "max_pool2d");
  Size2 s = stride ? *stride : kernel;
  check_spatial("max_pool2d", *this, kernel.h, kernel.w, s, dilation, padding);
  Tensor x = pad_spatial(*this, padding, -INFINITY);
  const int64_t oy = out_size(x.size(-2), kernel.h, s.h, dilation.h);
  const int64_t ox = out_size(x.size(-1), kernel.w, s.w, dilation.w);
  Tensor r;
  for (int64_t i = 0; i < kernel.h; ++i)
    for (int64_t j = 0; j < kernel.w; ++j) {
      Tensor v = shifted(x, i, j, oy, ox, s, dilation);
      r = r.defined() ? r.maximum(v) : v;
    }
  return r;
}

Tensor Tensor::avg_pool2d(Size2 kernel, std::optional<Size2> stride, Size2 padding) const {
  detail::state(*this, "avg_pool2d");
  Size2 s = stride ? *stride : kernel;
  check_spatial("avg_pool2d", *this, kernel.h, kernel.w, s, 1, padding);
  Tensor x = pad_spatial(*this, padding, 0.0);
  const int64_t oy = out_size(x.size(-2), kernel.h, s.h, 1);
  const int64_t ox = out_size(x.size(-1), kernel.w, s.w, 1);
  Tensor r;
  for (int64_t i = 0; i < kernel.h; ++i)
    for (int64_t j = 0; j < kernel.w; ++j) {
      Tensor v = detail::to_float(shifted(x, i, j, oy, ox, s, 1));
      r = r.defined() ? r + v : v;
    }
  return r * (1.0 / static_cast<double>(kernel.h * kernel.w));
}

}  // namespace polygrad
