// Indexing and joining: getitem, gather, cat, stack, split, chunk.
#include "tensor/tensor_impl.hpp"

#include <algorithm>
#include <cstdint>
#include <optional>

namespace polygrad {

namespace {

// Python's slice.indices for a positive step: [begin, end) clamped to the axis.
std::pair<int64_t, int64_t> clamp_bounds(std::optional<int64_t> start, std::optional<int64_t> stop,
                                         int64_t n) {
  auto norm = [n](int64_t v) { return std::clamp<int64_t>(v < 0 ? v + n : v, 0, n); };
  int64_t b = start ? norm(*start) : 0;
  int64_t e = stop ? norm(*stop) : n;
  return {b, std::max(b, e)};
}

}  // namespace

Tensor Tensor::getitem(const std::vector<Index>& index) const {
  const detail::TensorImpl& p = detail::state(*this, "getitem");
  const auto nd = static_cast<int64_t>(p.shape.size());
  int64_t used = 0, ellipses = 0;
  for (const Index& i : index) {
    if (i.kind == Index::Kind::integer || i.kind == Index::Kind::slice) ++used;
    if (i.kind == Index::Kind::ellipsis) ++ellipses;
  }
  if (ellipses > 1) user_error("getitem: more than one ellipsis");
  if (used > nd)
    user_error("getitem: " + std::to_string(used) + " indices for shape " +
               lazy::shape_str(p.shape));
  // Expand the ellipsis (or append it) so every axis gets one entry.
  std::vector<Index> full;
  for (const Index& i : index) {
    if (i.kind == Index::Kind::ellipsis) {
      for (int64_t k = 0; k < nd - used; ++k) full.push_back(Index::slice());
    } else {
      full.push_back(i);
    }
  }
  if (ellipses == 0)
    for (int64_t k = 0; k < nd - used; ++k) full.push_back(Index::slice());

  std::vector<int64_t> flips;
  std::vector<std::pair<int64_t, int64_t>> bounds;
  std::vector<int64_t> steps;
  Shape out;  // final shape: int axes dropped, none axes added
  int64_t axis = 0;
  for (const Index& i : full) {
    if (i.kind == Index::Kind::none) {
      out.push_back(1);
      continue;
    }
    const int64_t n = p.shape[static_cast<size_t>(axis)];
    if (i.kind == Index::Kind::integer) {
      int64_t v = i.value < 0 ? i.value + n : i.value;
      if (v < 0 || v >= n)
        index_error("getitem: index " + std::to_string(i.value) + " out of range for axis " +
                    std::to_string(axis) + " of shape " + lazy::shape_str(p.shape));
      bounds.push_back({v, v + 1});
      steps.push_back(1);
    } else {
      if (i.step == 0) user_error("getitem: slice step cannot be zero");
      std::pair<int64_t, int64_t> b;
      if (i.step > 0) {
        b = clamp_bounds(i.start, i.stop, n);
      } else {
        // Walk the flipped axis: position j there is n - 1 - j here.
        flips.push_back(axis);
        auto flipped = [n](std::optional<int64_t> v) -> std::optional<int64_t> {
          if (!v) return std::nullopt;
          int64_t x = *v < 0 ? *v + n : *v;
          return n - 1 - x;
        };
        // start (inclusive, default last) and stop (exclusive, default before first).
        std::optional<int64_t> s = i.start ? flipped(i.start) : std::optional<int64_t>(0);
        std::optional<int64_t> e = i.stop ? flipped(i.stop) : std::optional<int64_t>(n);
        int64_t sb = std::clamp<int64_t>(*s, 0, n), se = std::clamp<int64_t>(*e, 0, n);
        b = {sb, std::max(sb, se)};
      }
      bounds.push_back(b);
      // A step past the axis takes its first element alone, as the axis' length does (and
      // |step| then stays clear of overflow: INT64_MIN and INT64_MAX included).
      const int64_t mag = i.step > 0 ? i.step : i.step == INT64_MIN ? INT64_MAX : -i.step;
      steps.push_back(std::min<int64_t>(mag, std::max<int64_t>(n, 1)));
      int64_t len = b.second - b.first;
      int64_t st = steps.back();
      out.push_back((len + st - 1) / st);
    }
    ++axis;
  }
  Tensor x = flips.empty() ? *this : flip(flips);
  x = x.shrink(bounds);
  // Strides: pad each strided axis to a multiple of its step, split it and keep offset 0.
  bool strided = false;
  for (int64_t s : steps) strided = strided || s > 1;
  if (strided) {
    std::vector<std::pair<int64_t, int64_t>> pads;
    Shape split, take;
    for (size_t a = 0; a < steps.size(); ++a) {
      int64_t len = x.shape()[a], st = steps[a], cnt = (len + st - 1) / st;
      pads.push_back({0, cnt * st - len});
      split.insert(split.end(), {cnt, st});
    }
    x = x.pad(pads).reshape(split);
    std::vector<std::pair<int64_t, int64_t>> keep;
    for (size_t a = 0; a < steps.size(); ++a) keep.insert(keep.end(), {{0, split[2 * a]}, {0, 1}});
    x = x.shrink(keep);
  }
  return x.reshape(out);
}

Tensor Tensor::gather(int64_t dim, const Tensor& index) const {
  const detail::TensorImpl& p = detail::state(*this, "gather");
  const detail::TensorImpl& ip = detail::state(index, "gather");
  detail::check_same_device("gather", *this, index);
  // A 0-d input or index is one of length 1 (axis 0 or -1), as torch's: the result has the
  // index's shape.
  if ((p.shape.empty() || ip.shape.empty()) && p.shape.size() <= 1 && ip.shape.size() <= 1) {
    detail::norm_axis("gather", dim, 1, {1});
    return reshape({static_cast<int64_t>(numel())})
        .gather(0, index.reshape({static_cast<int64_t>(index.numel())}))
        .reshape(ip.shape);
  }
  const int64_t a = detail::norm_axis("gather", dim, ndim(), p.shape);
  if (DType(index.dtype()).is_bool())
    user_error("gather: index must be an int tensor, or a float one holding whole numbers, not " +
               dtype_name(index.dtype()));
  if (DType(index.dtype()).is_float() && ip.shape.size() == p.shape.size())
    return gather(a, detail::whole_float_index("gather", index, p.shape[static_cast<size_t>(a)]));
  if (ip.shape.size() != p.shape.size())
    user_error("gather: index shape " + lazy::shape_str(ip.shape) + " and input shape " +
               lazy::shape_str(p.shape) + " differ in rank");
  std::vector<std::pair<int64_t, int64_t>> bounds;
  for (size_t i = 0; i < p.shape.size(); ++i) {
    if (static_cast<int64_t>(i) != a && ip.shape[i] > p.shape[i])
      user_error("gather: index shape " + lazy::shape_str(ip.shape) + " exceeds input shape " +
                 lazy::shape_str(p.shape) + " on axis " + std::to_string(i));
    bounds.push_back({0, static_cast<int64_t>(i) == a ? p.shape[i] : ip.shape[i]});
  }
  const int64_t n = p.shape[static_cast<size_t>(a)];
  // (torch checks every index; a lazy one's values are only known as the kernel runs, which
  // then reads 0 for one outside the axis)
  if (const std::optional<int64_t> bad = detail::host_ints_outside(index, 0, n))
    index_error("gather: index " + std::to_string(*bad) + " is out of bounds for axis " +
                std::to_string(a) + " with size " + std::to_string(n));
  // one-hot over a new last axis: mask[..., k] = index[...] == k; x moved to that axis.
  Tensor mask = detail::class_mask(index, n);
  Tensor x = shrink(bounds).unsqueeze(-1).transpose(a, -1);  // axis a -> size 1, last -> n
  // (one hit per sum: exact; a sum widens small ints and bool, the result keeps x's dtype)
  return mask.where(x, 0).sum(-1).cast(dtype());
}

Tensor Tensor::cat(const std::vector<Tensor>& tensors, int64_t dim) {
  if (tensors.empty()) user_error("cat: no tensors");
  const Tensor& first = tensors[0];
  const Shape& s0 = detail::state(first, "cat").shape;
  if (s0.empty()) user_error("cat: zero-dimensional tensors cannot be concatenated");
  const int64_t a = detail::norm_axis("cat", dim, static_cast<int64_t>(s0.size()), s0);
  DType t = detail::dt(first);
  int64_t total = 0;
  for (const Tensor& x : tensors) {
    const Shape& s = detail::state(x, "cat").shape;
    detail::check_same_device("cat", first, x);
    bool ok = s.size() == s0.size();
    for (size_t i = 0; ok && i < s.size(); ++i) ok = static_cast<int64_t>(i) == a || s[i] == s0[i];
    if (!ok)
      user_error("cat: shapes " + lazy::shape_str(s0) + " and " + lazy::shape_str(s) +
                 " differ outside axis " + std::to_string(dim));
    t = detail::promote_for("cat", t, detail::dt(x));
    total += s[static_cast<size_t>(a)];
  }
  if (tensors.size() == 1) return first.cast(t.scalar());
  // Each piece padded with zeros to the full axis, then summed (OR for bool).
  Tensor out;
  int64_t offset = 0;
  for (const Tensor& x : tensors) {
    std::vector<std::pair<int64_t, int64_t>> pads(s0.size(), {0, 0});
    int64_t len = x.shape()[static_cast<size_t>(a)];
    pads[static_cast<size_t>(a)] = {offset, total - offset - len};
    offset += len;
    Tensor piece = x.cast(t.scalar()).pad(pads);
    out = out.defined() ? out + piece : piece;
  }
  return out;
}

Tensor Tensor::stack(const std::vector<Tensor>& tensors, int64_t dim) {
  if (tensors.empty()) user_error("stack: no tensors");
  const Shape& s0 = detail::state(tensors[0], "stack").shape;
  const int64_t a = detail::norm_axis("stack", dim, static_cast<int64_t>(s0.size()) + 1, s0);
  std::vector<Tensor> parts;
  for (const Tensor& x : tensors) {
    if (detail::state(x, "stack").shape != s0)
      user_error("stack: shapes " + lazy::shape_str(s0) + " and " + lazy::shape_str(x.shape()) +
                 " differ");
    parts.push_back(x.unsqueeze(a));
  }
  return cat(parts, a);
}

std::vector<Tensor> Tensor::split(const std::vector<int64_t>& sizes, int64_t dim) const {
  const detail::TensorImpl& p = detail::state(*this, "split");
  const int64_t a = detail::norm_axis("split", dim, ndim(), p.shape);
  int64_t sum = 0;
  for (int64_t s : sizes) {
    if (s < 0) user_error("split: negative size " + std::to_string(s));
    sum += s;
  }
  if (sum != p.shape[static_cast<size_t>(a)])
    user_error("split: sizes " + lazy::shape_str(sizes) + " do not add up to axis " +
               std::to_string(dim) + " of shape " + lazy::shape_str(p.shape));
  std::vector<Tensor> out;
  int64_t offset = 0;
  for (int64_t s : sizes) {
    std::vector<std::pair<int64_t, int64_t>> b;
    for (int64_t d : p.shape) b.push_back({0, d});
    b[static_cast<size_t>(a)] = {offset, offset + s};
    out.push_back(shrink(b));
    offset += s;
  }
  return out;
}

std::vector<Tensor> Tensor::split(int64_t size, int64_t dim) const {
  const detail::TensorImpl& p = detail::state(*this, "split");
  const int64_t a = detail::norm_axis("split", dim, ndim(), p.shape);
  if (size <= 0) user_error("split: size must be positive, got " + std::to_string(size));
  const int64_t n = p.shape[static_cast<size_t>(a)];
  std::vector<int64_t> sizes;
  for (int64_t o = 0; o < n; o += size) sizes.push_back(std::min(size, n - o));
  if (sizes.empty()) sizes.push_back(0);  // an empty axis is one empty piece (torch's, tinygrad's)
  return split(sizes, a);
}

std::vector<Tensor> Tensor::chunk(int64_t n, int64_t dim) const {
  const detail::TensorImpl& p = detail::state(*this, "chunk");
  if (n <= 0) user_error("chunk: number of chunks must be positive, got " + std::to_string(n));
  const int64_t a = detail::norm_axis("chunk", dim, ndim(), p.shape);
  const int64_t len = p.shape[static_cast<size_t>(a)];
  // An empty axis is n empty pieces (torch's, tinygrad's).
  if (len == 0) return split(std::vector<int64_t>(static_cast<size_t>(n), 0), a);
  return split(std::max<int64_t>(1, (len + n - 1) / n), a);
}

}  // namespace polygrad
