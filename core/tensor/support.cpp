// Helpers shared by the Tensor op files: impl access, axes, broadcasting, scalar operands.
#include "ir/error.hpp"
#include "runtime/buffers.hpp"
#include "runtime/capture.hpp"
#include "runtime/runtime.hpp"
#include "tensor/tensor_impl.hpp"

#include "tensor/symbolic.hpp"

#include <algorithm>
#include <charconv>
#include <climits>
#include <cmath>
#include <cstring>
#include <optional>
#include <type_traits>
#include <vector>

namespace polygrad::detail {

int64_t checked_numel(const char* op, const lazy::Shape& shape) {
  int64_t all = 1;  // (0 counted as 1: a stride past an empty axis is still a product)
  for (int64_t d : shape) {
    if (d < 0) user_error(std::string(op) + ": negative size in shape " + lazy::shape_str(shape));
    if (d > 1 && all > kMaxElements / d)
      user_error(std::string(op) + ": shape " + lazy::shape_str(shape) +
                 " holds more than 2^62 elements");
    all *= std::max<int64_t>(d, 1);
  }
  return lazy::numel(shape);
}

Tensor make(UOpRef uop, lazy::Shape shape, std::string device) {
  checked_numel("shape", shape);  // (any op's result: a pad or a repeat past int64 included)
  auto p = std::make_shared<TensorImpl>();
  p->uop = std::move(uop);
  p->shape = std::move(shape);
  p->device = std::move(device);
  return Tensor(std::move(p));
}

TensorImpl& state(const Tensor& t, const char* op) {
  if (!t.defined()) user_error(std::string(op) + ": the tensor is a null handle");
  return *t.impl();
}

const UOpRef& node(const Tensor& t, const char* op) {
  return detail::state(t, op).uop;
}

DType dt(const Tensor& t) {
  return DType(t.dtype());
}

int64_t norm_axis(const char* op, int64_t axis, int64_t ndim, const lazy::Shape& shape) {
  int64_t a = axis < 0 ? axis + ndim : axis;
  if (a < 0 || a >= std::max<int64_t>(ndim, 0))
    user_error(std::string(op) + ": axis " + std::to_string(axis) + " out of range for shape " +
               lazy::shape_str(shape));
  return a;
}

std::vector<int64_t> norm_axes(const char* op, const std::vector<int64_t>& axes,
                               const lazy::Shape& shape) {
  const auto n = static_cast<int64_t>(shape.size());
  std::vector<int64_t> out;
  if (axes.empty()) {
    for (int64_t i = 0; i < n; ++i) out.push_back(i);
    return out;
  }
  if (n == 0) {  // a 0-d tensor takes axis 0 or -1, as one of one element (torch, tinygrad)
    for (int64_t a : axes) norm_axis(op, a, 1, shape);
    return out;
  }
  for (int64_t a : axes) out.push_back(norm_axis(op, a, n, shape));
  std::sort(out.begin(), out.end());
  for (size_t i = 1; i < out.size(); ++i)
    if (out[i] == out[i - 1])
      user_error(std::string(op) + ": axis " + std::to_string(out[i]) +
                 " appears more than once in the axes of shape " + lazy::shape_str(shape));
  return out;
}

std::optional<lazy::Shape> try_broadcast_shape(const lazy::Shape& a, const lazy::Shape& b) {
  const size_t n = std::max(a.size(), b.size());
  lazy::Shape out(n);
  for (size_t i = 0; i < n; ++i) {
    int64_t da = i < n - a.size() ? 1 : a[i - (n - a.size())];
    int64_t db = i < n - b.size() ? 1 : b[i - (n - b.size())];
    if (da != db && da != 1 && db != 1) return std::nullopt;
    out[i] = da == 1 ? db : da;
  }
  return out;
}

lazy::Shape broadcast_shape(const char* op, const lazy::Shape& a, const lazy::Shape& b) {
  std::optional<lazy::Shape> out = try_broadcast_shape(a, b);
  if (!out)
    user_error(std::string(op) + ": shapes " + lazy::shape_str(a) + " and " + lazy::shape_str(b) +
               " do not broadcast");
  return *out;
}

Tensor broadcast_to(const char* op, const Tensor& t, const lazy::Shape& shape,
                    const Tensor* other) {
  const TensorImpl& p = detail::state(t, op);
  // (Broadcast against an operand over a variable, an axis of size 1 may be the variable's at
  // value 1: it is expanded to it all the same, so the graph is one for every value.)
  if (p.shape == shape && !(other && lazy::any_bound())) return t;
  if (p.shape.size() > shape.size())
    user_error(std::string(op) + ": cannot broadcast " + lazy::shape_str(p.shape) + " to " +
               lazy::shape_str(shape));
  lazy::Shape padded(shape.size() - p.shape.size(), 1);
  padded.insert(padded.end(), p.shape.begin(), p.shape.end());
  for (size_t i = 0; i < shape.size(); ++i)
    if (padded[i] != shape[i] && padded[i] != 1)
      user_error(std::string(op) + ": cannot broadcast " + lazy::shape_str(p.shape) + " to " +
                 lazy::shape_str(shape));
  if (lazy::any_bound()) {  // (sizes that are bound variables stay expressions)
    const lazy::SymShape mine = lazy::sym_shape(p.uop.get());
    const lazy::SymShape hint =
        other ? lazy::sym_shape(other->impl()->uop.get()) : lazy::SymShape{};
    if (lazy::has_symbolic(mine) || lazy::has_symbolic(hint)) {
      const lazy::SymShape padded_dims = lazy::broadcast_dims(mine, padded, {});
      const lazy::SymShape target = lazy::broadcast_dims(padded_dims, shape, hint);
      if (padded == p.shape && target == padded_dims) return t;
      UOpRef u = padded == p.shape ? p.uop : lazy::reshape_sym(p.uop, padded_dims);
      if (target != padded_dims) u = lazy::expand_sym(u, target);
      return make(u, shape, p.device);
    }
  }
  if (p.shape == shape) return t;
  UOpRef u = padded == p.shape ? p.uop : lazy::reshape(p.uop, padded);
  if (padded != shape) u = lazy::expand(u, shape);
  return make(u, shape, p.device);
}

pg_dtype check_dtype(const char* op, pg_dtype dtype) {
  const int v = static_cast<int>(dtype);
  if (v == PG_DTYPE_VOID) user_error(std::string(op) + ": void is not a tensor dtype");
  if (v < 0 || v >= PG_DTYPE_COUNT)
    user_error(std::string(op) + ": " + std::to_string(v) +
               " is not a dtype (PG_DTYPE_BOOL .. PG_DTYPE_FLOAT64 are " +
               std::to_string(int{PG_DTYPE_BOOL}) + " .. " + std::to_string(PG_DTYPE_COUNT - 1) +
               ")");
  return dtype;
}

void check_same_device(const char* op, const Tensor& a, const Tensor& b) {
  if (detail::state(a, op).device != detail::state(b, op).device)
    user_error(std::string(op) + ": tensors on different devices (" + a.device() + " and " +
               b.device() + ")");
}

DType int_scalar_dtype(Scalar s) {
  return s.int_value >= INT32_MIN && s.int_value <= INT32_MAX ? dtypes::int32 : dtypes::int64;
}

DType scalar_dtype(DType t, Scalar s) {
  if (s.is_int) return t.is_bool() && !s.is_bool ? int_scalar_dtype(s) : t;
  return t.is_float() ? t : dtypes::float32;
}

Tensor constant(Scalar v, DType dt, const lazy::Shape& shape, const std::string& device) {
  if (v.is_int && dt.is_int()) return make(lazy::full_int(dt, v.int_value, shape), shape, device);
  return make(lazy::full(dt, v.value, shape), shape, device);
}

Tensor iota(int64_t n, const std::string& device) {
  const DType t = n - 1 > INT32_MAX ? dtypes::int64 : dtypes::int32;
  return make(lazy::iota(t, n), {n}, device);
}

Tensor iota_comparable(const Tensor& index) {
  return index.dtype() == PG_DTYPE_UINT64 ? index.cast(PG_DTYPE_INT64) : index;
}

Tensor scalar_like(const Tensor& t, Scalar s) {
  const TensorImpl& p = detail::state(t, "scalar");
  if (lazy::any_bound() && lazy::has_symbolic(lazy::sym_shape(p.uop.get())))
    return broadcast_to("scalar", constant(s, scalar_dtype(p.uop->dtype(), s), {}, p.device),
                        p.shape, &t);
  return constant(s, scalar_dtype(p.uop->dtype(), s), p.shape, p.device);
}

DType promote_for(const char* op, DType a, DType b) {
  try {
    return promote(a, b);
  } catch (const IrError&) {
    user_error(std::string(op) + ": no dtype holds both " + a.name() + " and " + b.name());
  }
}

Tensor elementwise(Op op, const std::vector<Tensor>& srcs) {
  const TensorImpl& first = *srcs.at(0).impl();
  UOpRef u;
  if (srcs.size() == 1)
    u = lazy::elementwise(op, {first.uop});
  else if (srcs.size() == 2)
    u = lazy::elementwise(op, {first.uop, srcs[1].impl()->uop});
  else
    u = lazy::elementwise(op, {first.uop, srcs[1].impl()->uop, srcs[2].impl()->uop});
  return make(u, first.shape, first.device);
}

Tensor binary(const char* name, Op op, const Tensor& a, const Tensor& b) {
  check_same_device(name, a, b);
  DType t = promote_for(name, dt(a), dt(b));
  lazy::Shape s = broadcast_shape(name, a.shape(), b.shape());
  Tensor x = broadcast_to(name, a.cast(t.scalar()), s, &b);
  Tensor y = broadcast_to(name, b.cast(t.scalar()), s, &a);
  return elementwise(op, {x, y});
}

Tensor to_float(const Tensor& t) {
  return dt(t).is_float() ? t : t.cast(PG_DTYPE_FLOAT32);
}

namespace {
template <class E>
void put(std::vector<unsigned char>& out, size_t i, E v) {
  std::memcpy(out.data() + i * sizeof(E), &v, sizeof(E));
}
}  // namespace

std::vector<unsigned char> pack(const std::vector<double>& values, DType dt) {
  std::vector<unsigned char> out(values.size() * static_cast<size_t>(dt.itemsize()));
  for (size_t i = 0; i < values.size(); ++i) {
    const double v = values[i];
    switch (dt.scalar()) {
      case PG_DTYPE_BOOL:
        put<uint8_t>(out, i, v != 0);
        break;
      case PG_DTYPE_INT8:
        put(out, i, static_cast<int8_t>(v));
        break;
      case PG_DTYPE_INT16:
        put(out, i, static_cast<int16_t>(v));
        break;
      case PG_DTYPE_INT32:
        put(out, i, static_cast<int32_t>(v));
        break;
      case PG_DTYPE_INT64:
        put(out, i, static_cast<int64_t>(v));
        break;
      case PG_DTYPE_UINT8:
        put(out, i, static_cast<uint8_t>(v));
        break;
      case PG_DTYPE_UINT16:
        put(out, i, static_cast<uint16_t>(v));
        break;
      case PG_DTYPE_UINT32:
        put(out, i, static_cast<uint32_t>(v));
        break;
      case PG_DTYPE_UINT64:
        put(out, i, static_cast<uint64_t>(v));
        break;
      case PG_DTYPE_FLOAT32:
        put(out, i, static_cast<float>(v));
        break;
      case PG_DTYPE_FLOAT64:
        put(out, i, v);
        break;
      default:
        user_error("tensor: host data of dtype " + dt.name() + " is not supported");
    }
  }
  return out;
}

Tensor move_axis_last(const Tensor& t, int64_t axis) {
  const int64_t n = t.ndim();
  if (axis == n - 1) return t;
  std::vector<int64_t> order;
  for (int64_t i = 0; i < n; ++i)
    if (i != axis) order.push_back(i);
  order.push_back(axis);
  return t.permute(order);
}

Tensor move_last_to(const Tensor& t, int64_t axis) {
  const int64_t n = t.ndim();
  if (axis == n - 1) return t;
  std::vector<int64_t> order;
  for (int64_t i = 0; i < n - 1; ++i) {
    if (i == axis) order.push_back(n - 1);
    order.push_back(i);
  }
  return t.permute(order);
}

namespace {
/// The first of the `E` values in `bytes` outside [lo, hi) other than `except` (a uint64 past
/// int64's range as INT64_MAX).
template <class E>
std::optional<int64_t> first_outside(const std::vector<unsigned char>& bytes, int64_t lo,
                                     int64_t hi, std::optional<int64_t> except) {
  for (size_t at = 0; at + sizeof(E) <= bytes.size(); at += sizeof(E)) {
    E e;
    std::memcpy(&e, bytes.data() + at, sizeof e);
    const int64_t v = std::is_same_v<E, uint64_t> && e > static_cast<E>(INT64_MAX)
                          ? INT64_MAX
                          : static_cast<int64_t>(e);
    if ((v < lo || v >= hi) && v != except) return v;
  }
  return {};
}
}  // namespace

std::optional<int64_t> host_ints_outside(const Tensor& index, int64_t lo, int64_t hi,
                                         std::optional<int64_t> except) {
  if (runtime::capturing() || !index.is_realized() || index.numel() == 0 ||
      !(runtime::device_target(index.impl()->device).caps.flags & PG_CAP_HOST_MEMORY))
    return {};
  std::vector<unsigned char> bytes(static_cast<size_t>(index.numel() * index.element_size()));
  index.copy_to_host(bytes.data(), bytes.size());
  switch (dt(index).scalar()) {
    case PG_DTYPE_INT8:
      return first_outside<int8_t>(bytes, lo, hi, except);
    case PG_DTYPE_INT16:
      return first_outside<int16_t>(bytes, lo, hi, except);
    case PG_DTYPE_INT32:
      return first_outside<int32_t>(bytes, lo, hi, except);
    case PG_DTYPE_INT64:
      return first_outside<int64_t>(bytes, lo, hi, except);
    case PG_DTYPE_UINT8:
      return first_outside<uint8_t>(bytes, lo, hi, except);
    case PG_DTYPE_UINT16:
      return first_outside<uint16_t>(bytes, lo, hi, except);
    case PG_DTYPE_UINT32:
      return first_outside<uint32_t>(bytes, lo, hi, except);
    case PG_DTYPE_UINT64:
      return first_outside<uint64_t>(bytes, lo, hi, except);
    default:
      return {};
  }
}

Tensor whole_float_index(const char* op, const Tensor& index, int64_t n) {
  const pg_dtype as = n <= (int64_t{1} << 31) ? PG_DTYPE_INT32 : PG_DTYPE_INT64;
  if (runtime::capturing() || !index.is_realized() || index.numel() == 0 ||
      !(runtime::device_target(index.impl()->device).caps.flags & PG_CAP_HOST_MEMORY))
    return index.cast(as);
  const std::vector<double> values = index.to_vector<double>();
  auto text = [](double v) {
    char buf[32];
    auto r = std::to_chars(buf, buf + sizeof buf, v);
    return std::string(buf, r.ptr);
  };
  for (double v : values) {
    if (v != std::trunc(v))
      user_error(std::string(op) + ": index " + text(v) +
                 " is not a whole number (a float index must hold whole numbers)");
    if (!(v >= 0 && v < static_cast<double>(n)))
      index_error(std::string(op) + ": index " + text(v) +
                  " is out of bounds for an axis of size " + std::to_string(n));
  }
  return index.cast(as);
}

Tensor class_mask(const Tensor& index, int64_t classes) {
  lazy::Shape s(static_cast<size_t>(index.ndim()) + 1, 1);
  s.back() = classes;
  return iota_comparable(index).unsqueeze(-1) == iota(classes, index.device()).reshape(s);
}

}  // namespace polygrad::detail
