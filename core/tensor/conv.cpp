// Sliding windows, conv2d and 2-d pooling.
#include "tensor/tensor_impl.hpp"

#include <cmath>

namespace polygrad {

namespace {

// Windows over the last axis: (..., n) -> (..., o, k) with out[..., i, j] = x[i*s + j*d].
// Tile x k times into one row of k*n, pad the row to k*(n+d) and view it as (k, n+d): row j then
// starts at x[j*d]. Striding keeps every s-th column.
Tensor window_last(const Tensor& x, int64_t k, int64_t s, int64_t d) {
  Tensor::Shape lead(x.shape().begin(), x.shape().end() - 1);
  const int64_t n = x.size(-1);
  const int64_t o = (n - d * (k - 1) - 1) / s + 1;
  auto with = [&lead](std::initializer_list<int64_t> tail) {
    Tensor::Shape r = lead;
    r.insert(r.end(), tail);
    return r;
  };
  std::vector<std::pair<int64_t, int64_t>> no_pad(lead.size(), {0, 0});
  Tensor z = x.unsqueeze(-2).expand(with({k, n})).reshape(with({k * n}));
  auto pads = no_pad;
  pads.push_back({0, k * d});
  z = z.pad(pads).reshape(with({k, n + d}));
  // columns i*s for i < o: make the row o*s long, split it (o, s) and keep offset 0
  std::vector<std::pair<int64_t, int64_t>> cut;
  for (int64_t v : lead) cut.push_back({0, v});
  cut.push_back({0, k});
  const int64_t want = o * s;
  if (want <= n + d) {
    cut.push_back({0, want});
    z = z.shrink(cut);
  } else {
    pads = no_pad;
    pads.push_back({0, 0});
    pads.push_back({0, want - (n + d)});
    z = z.pad(pads);
  }
  z = z.reshape(with({k, o, s}));
  cut.resize(lead.size() + 1);
  cut.push_back({0, o});
  cut.push_back({0, 1});
  z = z.shrink(cut).reshape(with({k, o}));
  return z.transpose(-1, -2);
}

}  // namespace

namespace detail {

Tensor windows(const Tensor& t, const std::vector<int64_t>& kernel,
               const std::vector<int64_t>& stride, const std::vector<int64_t>& dilation) {
  // Process each spatial axis as the last one; the new window axes collect at the end.
  const auto nk = static_cast<int64_t>(kernel.size());
  const int64_t nd = t.ndim();
  Tensor x = t;
  // layout after step i: (batch..., remaining spatial..., o_1, k_1, ..., o_i, k_i)
  for (int64_t i = 0; i < nk; ++i) {
    const int64_t axis = nd - nk;  // the next spatial axis always sits here
    x = window_last(move_axis_last(x, axis), kernel[static_cast<size_t>(i)],
                    stride[static_cast<size_t>(i)], dilation[static_cast<size_t>(i)]);
  }
  // now (batch..., o_1, k_1, ..., o_nk, k_nk) -> (batch..., o..., k...)
  std::vector<int64_t> order;
  for (int64_t i = 0; i < nd - nk; ++i) order.push_back(i);
  for (int64_t i = 0; i < nk; ++i) order.push_back(nd - nk + 2 * i);
  for (int64_t i = 0; i < nk; ++i) order.push_back(nd - nk + 2 * i + 1);
  return x.permute(order);
}

}  // namespace detail

namespace {

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
  Tensor win = detail::windows(pad_spatial(*this, padding, 0.0), {kh, kw}, {stride.h, stride.w},
                               {dilation.h, dilation.w});  // (bs, cin, oy, ox, kh, kw)
  const int64_t oy = win.size(2), ox = win.size(3), cg = cin / groups, og = cout / groups;
  Tensor x = win.reshape({bs, groups, 1, cg, oy, ox, kh, kw});
  Tensor k = weight.reshape({1, groups, og, cg, 1, 1, kh, kw});
  Tensor r = (x * k).sum(std::vector<int64_t>{3, 6, 7}).reshape({bs, cout, oy, ox});
  return bias ? r + bias->reshape({1, cout, 1, 1}) : r;
}

Tensor Tensor::max_pool2d(Size2 kernel, std::optional<Size2> stride, Size2 dilation,
                          Size2 padding) const {
  detail::state(*this, "max_pool2d");
  Size2 s = stride ? *stride : kernel;
  check_spatial("max_pool2d", *this, kernel.h, kernel.w, s, dilation, padding);
  Tensor win = detail::windows(pad_spatial(*this, padding, -INFINITY), {kernel.h, kernel.w},
                               {s.h, s.w}, {dilation.h, dilation.w});
  return win.max(std::vector<int64_t>{-2, -1});
}

Tensor Tensor::avg_pool2d(Size2 kernel, std::optional<Size2> stride, Size2 padding) const {
  detail::state(*this, "avg_pool2d");
  Size2 s = stride ? *stride : kernel;
  check_spatial("avg_pool2d", *this, kernel.h, kernel.w, s, 1, padding);
  Tensor win =
      detail::windows(pad_spatial(*this, padding, 0.0), {kernel.h, kernel.w}, {s.h, s.w}, {1, 1});
  return win.mean(std::vector<int64_t>{-2, -1});
}

}  // namespace polygrad
