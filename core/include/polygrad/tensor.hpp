// polygrad's Tensor: a lazy n-dimensional array on a device, with tinygrad-compatible names,
// defaults and semantics (results match torch).
//
// Every op only builds graph nodes; nothing runs until realize(), to_vector(), item() or
// copy_to_host(). A Tensor is a cheap handle: copies share the same underlying tensor.
// Errors are polygrad::Error (kind user) whose message names the op and the shapes, e.g.
// "reshape: cannot reshape (2, 3) to (4,)".
//
// Dtypes: the default float is float32, the default int int32. Tensor-tensor ops promote as
// torch.result_type does. A scalar operand takes the tensor's dtype, except that a float scalar
// with an int or bool tensor gives float32 and an int scalar with a bool tensor gives int32 (a
// bool scalar keeps a bool tensor bool).
// Comparisons return bool tensors (as tinygrad and torch do; the polygrad Python README's
// "float 1.0/0.0" is not followed).
#ifndef POLYGRAD_TENSOR_HPP
#define POLYGRAD_TENSOR_HPP

#include <polygrad/plugin.h>
#include <polygrad/export.hpp>

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace polygrad {

namespace detail {
struct TensorImpl;
}  // namespace detail

/// The pg_dtype of a C++ element type (float, double, the fixed-width ints, bool).
template <class T>
constexpr pg_dtype dtype_of() {
  if constexpr (std::is_same_v<T, bool>)
    return PG_DTYPE_BOOL;
  else if constexpr (std::is_same_v<T, float>)
    return PG_DTYPE_FLOAT32;
  else if constexpr (std::is_same_v<T, double>)
    return PG_DTYPE_FLOAT64;
  else if constexpr (std::is_same_v<T, int8_t>)
    return PG_DTYPE_INT8;
  else if constexpr (std::is_same_v<T, int16_t>)
    return PG_DTYPE_INT16;
  else if constexpr (std::is_same_v<T, int32_t>)
    return PG_DTYPE_INT32;
  else if constexpr (std::is_same_v<T, int64_t>)
    return PG_DTYPE_INT64;
  else if constexpr (std::is_same_v<T, uint8_t>)
    return PG_DTYPE_UINT8;
  else if constexpr (std::is_same_v<T, uint16_t>)
    return PG_DTYPE_UINT16;
  else if constexpr (std::is_same_v<T, uint32_t>)
    return PG_DTYPE_UINT32;
  else if constexpr (std::is_same_v<T, uint64_t>)
    return PG_DTYPE_UINT64;
  else
    static_assert(sizeof(T) == 0, "dtype_of: unsupported element type");
}

/// "float32", "int64", ... for a pg_dtype.
POLYGRAD_API std::string dtype_name(pg_dtype dtype);

/// The number of kernels compiled so far in this process (each distinct kernel once per
/// device). A new batch size that reuses the compiled kernels leaves it unchanged.
POLYGRAD_API size_t compiled_kernel_count();

/// A scalar operand: remembers whether it was written as an integer (Python's int/float rule).
/// An integer keeps its exact value in `int_value` too (an int64 beyond 2^53 has no double);
/// an unsigned one above INT64_MAX as its two's-complement bits, as a uint64 holds it.
struct Scalar {
  Scalar(int v) : value(v), is_int(true), int_value(v) {}
  Scalar(long v) : value(static_cast<double>(v)), is_int(true), int_value(v) {}
  Scalar(long long v) : value(static_cast<double>(v)), is_int(true), int_value(v) {}
  Scalar(unsigned v) : value(v), is_int(true), int_value(v) {}
  Scalar(unsigned long v)
      : value(static_cast<double>(v)), is_int(true), int_value(static_cast<int64_t>(v)) {}
  Scalar(unsigned long long v)
      : value(static_cast<double>(v)), is_int(true), int_value(static_cast<int64_t>(v)) {}
  Scalar(float v) : value(v), is_int(false) {}
  Scalar(double v) : value(v), is_int(false) {}
  /// A bool keeps a bool tensor's dtype (`b * true` is bool, as torch's and tinygrad's) and
  /// takes any other tensor's, as an int does.
  Scalar(bool v) : value(v ? 1 : 0), is_int(true), is_bool(true), int_value(v ? 1 : 0) {}
  /// An int scalar when `v` is a whole number an int64 holds, else a float one (bounds given
  /// as doubles: clamp(0, 4) of an int tensor stays int).
  static Scalar whole_or_float(double v) {
    const bool whole =
        v >= -0x1p63 && v < 0x1p63 && v == static_cast<double>(static_cast<long long>(v));
    return whole ? Scalar(static_cast<long long>(v)) : Scalar(v);
  }
  double value;
  bool is_int;
  bool is_bool = false;
  int64_t int_value = 0;
};

/// A 2-d size (kernel, stride, dilation, padding of conv/pool ops); one int means both.
struct Size2 {
  Size2(int64_t v) : h(v), w(v) {}
  Size2(int64_t h_, int64_t w_) : h(h_), w(w_) {}
  int64_t h;
  int64_t w;
};

/// How pad fills: with a value (constant), the axis mirrored without its edge element
/// (reflect), the edge element repeated (replicate), or the axis wrapped around (circular), as
/// torch's and tinygrad's pad modes.
enum class PadMode { constant, reflect, replicate, circular };

/// How a loss reduces its per-element values: their mean, their sum, or none (torch's).
enum class Reduction { mean, sum, none };

/// One entry of Tensor::getitem: an integer, a slice, None (new axis) or Ellipsis.
struct Index {
  enum class Kind { integer, slice, none, ellipsis };
  Index(int64_t i) : kind(Kind::integer), value(i) {}
  Index(int i) : kind(Kind::integer), value(i) {}
  /// start:stop:step; an absent bound means the end in the step's direction. step != 0.
  static Index slice(std::optional<int64_t> start = std::nullopt,
                     std::optional<int64_t> stop = std::nullopt, int64_t step = 1) {
    Index r(Kind::slice);
    r.start = start;
    r.stop = stop;
    r.step = step;
    return r;
  }
  /// A new axis of size 1 (Python None).
  static Index none() { return Index(Kind::none); }
  /// As many full slices as needed (Python ...).
  static Index ellipsis() { return Index(Kind::ellipsis); }

  Kind kind;
  int64_t value = 0;
  std::optional<int64_t> start;
  std::optional<int64_t> stop;
  int64_t step = 1;

 private:
  explicit Index(Kind k) : kind(k) {}
};

/// A lazy tensor. Copying a Tensor copies the handle (both see the same tensor, its
/// requires_grad flag and its grad); ops return new tensors and never modify their inputs,
/// except assign() and the grad accessors.
class POLYGRAD_API Tensor {
 public:
  using Shape = std::vector<int64_t>;

  // ---- construction ---------------------------------------------------------------------
  /// A null handle; any op on it is a user error. defined() tells.
  Tensor();
  /// A tensor holding a copy of `data` with `shape` (default: 1-d of data.size()). The count
  /// must equal the shape's element count. `device` "" is the default device.
  explicit Tensor(const std::vector<float>& data, Shape shape = {}, const std::string& device = "");
  explicit Tensor(const std::vector<double>& data, Shape shape = {},
                  const std::string& device = "");
  explicit Tensor(const std::vector<int32_t>& data, Shape shape = {},
                  const std::string& device = "");
  explicit Tensor(const std::vector<int64_t>& data, Shape shape = {},
                  const std::string& device = "");
  explicit Tensor(const std::vector<uint8_t>& data, Shape shape = {},
                  const std::string& device = "");
  /// A bool tensor (std::vector<bool> is packed, so it is converted element by element).
  explicit Tensor(const std::vector<bool>& data, Shape shape = {}, const std::string& device = "");
  /// A 0-d tensor holding `value` as `dtype`.
  static Tensor scalar(double value, pg_dtype dtype = PG_DTYPE_FLOAT32,
                       const std::string& device = "");
  /// A tensor of `shape` and `dtype` holding a copy of numel * itemsize packed bytes at `data`.
  static Tensor from_host(const void* data, pg_dtype dtype, const Shape& shape,
                          const std::string& device = "");
  /// Like from_host, but without a copy where the device can use host memory in place (the
  /// cpu device, for 64-byte aligned memory): the tensor then reads `data` when it is realised and
  /// assign() writes into it, as torch.from_numpy shares an array. `release` runs once polygrad no
  /// longer uses the memory (at once when it copied, or on an error); `shared`, when given, says
  /// which.
  static Tensor from_host_memory(void* data, pg_dtype dtype, const Shape& shape,
                                 std::function<void()> release, const std::string& device = "",
                                 bool* shared = nullptr);

  static Tensor zeros(const Shape& shape, pg_dtype dtype = PG_DTYPE_FLOAT32,
                      const std::string& device = "");
  static Tensor ones(const Shape& shape, pg_dtype dtype = PG_DTYPE_FLOAT32,
                     const std::string& device = "");
  /// An int `value` fills an int dtype exactly (an int64 beyond 2^53 too). Without a dtype,
  /// the value's own, as tinygrad's: bool for a bool, int32 for an int (int64 past int32's
  /// range), float32 for a float.
  static Tensor full(const Shape& shape, Scalar value, std::optional<pg_dtype> dtype = std::nullopt,
                     const std::string& device = "");
  /// A tensor whose contents are unspecified (a fresh buffer).
  static Tensor empty(const Shape& shape, pg_dtype dtype = PG_DTYPE_FLOAT32,
                      const std::string& device = "");
  /// Same shape, dtype and device as `like`.
  static Tensor zeros_like(const Tensor& like);
  static Tensor ones_like(const Tensor& like);
  static Tensor full_like(const Tensor& like, Scalar value);

  /// Seeds the random generator of rand/randn/randint. Random values are generated on the host
  /// by a counter-based generator (SplitMix64 over (seed, counter)) and copied to the device,
  /// so a seed gives the same values on every device (they do not equal torch's).
  static void manual_seed(uint64_t seed);
  /// Uniform in [0, 1).
  static Tensor rand(const Shape& shape, pg_dtype dtype = PG_DTYPE_FLOAT32,
                     const std::string& device = "");
  /// Standard normal (Box-Muller).
  static Tensor randn(const Shape& shape, pg_dtype dtype = PG_DTYPE_FLOAT32,
                      const std::string& device = "");
  /// Uniform integers in [low, high).
  static Tensor randint(int64_t low, int64_t high, const Shape& shape,
                        pg_dtype dtype = PG_DTYPE_INT32, const std::string& device = "");
  static Tensor rand_like(const Tensor& like);
  static Tensor randn_like(const Tensor& like);

  /// 0, 1, ..., stop-1 (int32).
  static Tensor arange(int64_t stop, const std::string& device = "");
  /// start, start+step, ... below stop (above it for a negative step). Without a dtype: int32
  /// when start, stop and step are whole numbers, else float32. An integer dtype with a
  /// fractional start or step truncates both, as torch's (a step truncating to 0 is an error),
  /// and takes the count ceil((stop - start) / step) of the numbers given (int64: truncated).
  static Tensor arange(double start, double stop, double step = 1.0,
                       std::optional<pg_dtype> dtype = std::nullopt,
                       const std::string& device = "");
  /// arange over exact integers (an int64 beyond 2^53 has no double), in `dtype` (an int).
  static Tensor arange_int(int64_t start, int64_t stop, int64_t step = 1,
                           pg_dtype dtype = PG_DTYPE_INT64, const std::string& device = "");
  /// `steps` values from start to stop inclusive.
  static Tensor linspace(double start, double stop, int64_t steps,
                         pg_dtype dtype = PG_DTYPE_FLOAT32, const std::string& device = "");
  /// The n x m identity (m = n when m < 0).
  static Tensor eye(int64_t n, int64_t m = -1, pg_dtype dtype = PG_DTYPE_FLOAT32,
                    const std::string& device = "");

  // ---- properties -----------------------------------------------------------------------
  bool defined() const { return impl_ != nullptr; }
  const Shape& shape() const;
  int64_t ndim() const;
  pg_dtype dtype() const;
  /// The canonical device name ("cpu:0").
  const std::string& device() const;
  int64_t numel() const;
  /// Size of axis `dim` (negative counts from the end).
  int64_t size(int64_t dim) const;
  /// Bytes of one element.
  int64_t element_size() const;
  /// Transpose of the last two axes (a 1-d tensor as is).
  Tensor T() const;
  /// Whether this tensor holds a buffer (no pending computation).
  bool is_realized() const;

  // ---- realisation and host transfer ----------------------------------------------------
  /// Runs the pending computation; afterwards the tensor holds a buffer. Returns *this.
  Tensor& realize();
  /// Realises all of `tensors` in one schedule (kernels can be shared between them).
  static void realize_all(std::vector<Tensor>& tensors);
  /// Realises and copies numel * element_size bytes into `dst`; `bytes` must equal that.
  void copy_to_host(void* dst, size_t bytes) const;
  /// The values, converted to T (row-major).
  template <class E>
  std::vector<E> to_vector() const {
    static_assert(!std::is_same_v<E, bool>, "to_vector<bool>: use to_vector<uint8_t>");
    Tensor c = cast(dtype_of<E>());
    std::vector<E> out(static_cast<size_t>(c.numel()));
    c.copy_to_host(out.data(), out.size() * sizeof(E));
    return out;
  }
  /// The single value of a one-element tensor, converted to T.
  template <class E = float>
  E item() const {
    check_item();
    return to_vector<E>().at(0);
  }
  /// A copy on `device` (this tensor when it is there already); ops on the result run on
  /// `device`. A value of constants alone has nothing to copy: it is computed on `device`.
  Tensor to(const std::string& device) const;
  /// The same values without gradient tracking.
  Tensor detach() const;
  /// A copy (its own buffer when realised) that keeps requires_grad.
  Tensor clone() const;
  /// Marks the value to be materialised in its own buffer (a kernel boundary).
  Tensor contiguous() const;
  /// Writes `value` (broadcast and cast to this tensor's shape and dtype) into this tensor's
  /// buffer, lazily (a lazy tensor is realised first). The write runs with the first
  /// realisation whose graph holds it; afterwards this tensor is its buffer again. Lazy
  /// tensors built from this one before that realisation still hold the write: realise them
  /// together with it (realize_all) or after it, not later on their own. Returns *this.
  /// On a view of a realised tensor (movement ops over it: `t.shrink(...)`, `t.T()`, a
  /// reshape) the value goes through the view into that tensor's buffer, at once (as torch's
  /// and tinygrad's setitem), the other elements untouched: one kernel over the view's
  /// elements, whose offsets may be bound variables (compiled once). A view that broadcasts
  /// (EXPAND) or pads (PAD) is a user error naming the op.
  Tensor& assign(const Tensor& value);

  // ---- autograd -------------------------------------------------------------------------
  bool requires_grad() const;
  /// Turning it on realises the tensor first (a leaf is a unique buffer). Float tensors only.
  Tensor& requires_grad(bool on);
  /// The accumulated gradient, if any.
  std::optional<Tensor> grad() const;
  void set_grad(const std::optional<Tensor>& grad);
  /// Backpropagates from this tensor, which must be float with one element: adds
  /// d(this)/d(leaf) to grad() of every live tensor with requires_grad that it depends on.
  /// Gradients stay lazy until realised (realize_all them with the parameters).
  void backward() const;
  /// Same, with the gradient flowing into this tensor given (this tensor's shape).
  void backward(const Tensor& grad) const;
  /// Gradients of `loss` (one float element) w.r.t. each target, lazy; a user error when the
  /// loss does not depend on a target. Needs no requires_grad and leaves grad() alone.
  static std::vector<Tensor> gradient(const Tensor& loss, const std::vector<Tensor>& targets);

  // ---- casts ----------------------------------------------------------------------------
  Tensor cast(pg_dtype dtype) const;
  Tensor float_() const { return cast(PG_DTYPE_FLOAT32); }
  Tensor double_() const { return cast(PG_DTYPE_FLOAT64); }
  Tensor half() const { return cast(PG_DTYPE_FLOAT16); }
  Tensor int_() const { return cast(PG_DTYPE_INT32); }
  Tensor long_() const { return cast(PG_DTYPE_INT64); }
  Tensor bool_() const { return cast(PG_DTYPE_BOOL); }

  // ---- arithmetic (broadcasting) ----------------------------------------------------------
  Tensor add(const Tensor& o) const;
  Tensor add(Scalar o) const;
  Tensor sub(const Tensor& o) const;
  Tensor sub(Scalar o) const;
  Tensor mul(const Tensor& o) const;
  Tensor mul(Scalar o) const;
  /// True division: int operands give float32.
  Tensor div(const Tensor& o) const;
  Tensor div(Scalar o) const;
  Tensor neg() const;
  /// x ** y; a negative base gives a real result for whole exponents, NaN otherwise.
  Tensor pow(const Tensor& o) const;
  Tensor pow(Scalar o) const;
  /// base ** x.
  static Tensor pow(Scalar base, const Tensor& x);
  /// Floor division and its remainder (the divisor's sign), as Python's and torch's // and %.
  /// Int division by zero gives 0 (numpy's answer), never a trap.
  Tensor floordiv(const Tensor& o) const;
  Tensor floordiv(Scalar o) const;
  Tensor mod(const Tensor& o) const;
  Tensor mod(Scalar o) const;

  // ---- comparisons (bool result) -----------------------------------------------------------
  Tensor lt(const Tensor& o) const;
  Tensor lt(Scalar o) const;
  Tensor le(const Tensor& o) const;
  Tensor le(Scalar o) const;
  Tensor gt(const Tensor& o) const;
  Tensor gt(Scalar o) const;
  Tensor ge(const Tensor& o) const;
  Tensor ge(Scalar o) const;
  Tensor eq(const Tensor& o) const;
  Tensor eq(Scalar o) const;
  Tensor ne(const Tensor& o) const;
  Tensor ne(Scalar o) const;
  /// Logical not of a bool tensor (of x != 0 otherwise).
  Tensor logical_not() const;
  /// Logical and / or of the tensors as bool.
  Tensor logical_and(const Tensor& o) const;
  Tensor logical_or(const Tensor& o) const;
  /// Bitwise ops (bool and int tensors).
  Tensor bitwise_and(const Tensor& o) const;
  Tensor bitwise_or(const Tensor& o) const;
  Tensor bitwise_xor(const Tensor& o) const;

  // ---- element-wise math ------------------------------------------------------------------
  Tensor exp() const;
  Tensor log() const;
  Tensor exp2() const;
  Tensor log2() const;
  Tensor sqrt() const;
  Tensor rsqrt() const;
  Tensor square() const;
  Tensor abs() const;
  Tensor sign() const;
  Tensor reciprocal() const;
  Tensor sin() const;
  Tensor cos() const;
  Tensor tan() const;
  Tensor ceil() const;
  Tensor floor() const;
  /// Round half to even (as torch and numpy).
  Tensor round() const;
  Tensor trunc() const;
  Tensor isnan() const;
  Tensor isinf() const;
  /// Neither NaN nor infinite (every int is).
  Tensor isfinite() const;
  /// log(1 + x) and e^x - 1, exact near 0.
  Tensor log1p() const;
  Tensor expm1() const;
  Tensor log10() const;
  Tensor sinh() const;
  Tensor cosh() const;
  Tensor asinh() const;
  Tensor acosh() const;
  Tensor atanh() const;
  Tensor atan() const;
  Tensor asin() const;
  Tensor acos() const;
  /// this ? a : b (this is cast to bool).
  Tensor where(const Tensor& a, const Tensor& b) const;
  Tensor where(const Tensor& a, Scalar b) const;
  Tensor where(Scalar a, const Tensor& b) const;
  Tensor where(Scalar a, Scalar b) const;
  Tensor maximum(const Tensor& o) const;
  Tensor maximum(Scalar o) const;
  Tensor minimum(const Tensor& o) const;
  Tensor minimum(Scalar o) const;
  /// Bounds follow the scalar rule: an int bound keeps an int tensor's dtype (brought into
  /// the dtype's range first), a float bound makes it float32, as torch's clamp does.
  Tensor clamp(std::optional<Scalar> min = std::nullopt,
               std::optional<Scalar> max = std::nullopt) const;

  // ---- activations ------------------------------------------------------------------------
  Tensor relu() const;
  Tensor relu6() const;
  Tensor leaky_relu(double neg_slope = 0.01) const;
  Tensor sigmoid() const;
  Tensor tanh() const;
  /// The tanh approximation (as tinygrad).
  Tensor gelu() const;
  Tensor quick_gelu() const;
  Tensor silu() const;
  Tensor swish() const { return silu(); }
  Tensor elu(double alpha = 1.0) const;
  Tensor softplus(double beta = 1.0) const;
  Tensor mish() const;
  Tensor hardtanh(double min_val = -1.0, double max_val = 1.0) const;
  Tensor hardswish() const;
  Tensor hardsigmoid() const;
  /// log(sigmoid(x)), without overflow.
  Tensor logsigmoid() const;
  /// x / (1 + |x|).
  Tensor softsign() const;
  Tensor selu() const;
  Tensor celu(double alpha = 1.0) const;

  // ---- reductions (axes: empty means all; negative counts from the end) --------------------
  // A braced list of axes ({}, {1}, {0, -1}) picks the initializer_list overloads (the
  // language prefers them): `sum({})` reduces every axis. Without them `{}` would
  // value-initialise the int64_t of the one-axis overload and reduce axis 0.
  /// Bool and small ints sum as int32; others in their own dtype.
  Tensor sum(const std::vector<int64_t>& axes = {}, bool keepdim = false) const;
  Tensor sum(int64_t axis, bool keepdim = false) const;
  Tensor sum(std::initializer_list<int64_t> axes, bool keepdim = false) const {
    return sum(std::vector<int64_t>(axes), keepdim);
  }
  Tensor max(const std::vector<int64_t>& axes = {}, bool keepdim = false) const;
  Tensor max(int64_t axis, bool keepdim = false) const;
  Tensor max(std::initializer_list<int64_t> axes, bool keepdim = false) const {
    return max(std::vector<int64_t>(axes), keepdim);
  }
  Tensor min(const std::vector<int64_t>& axes = {}, bool keepdim = false) const;
  Tensor min(int64_t axis, bool keepdim = false) const;
  Tensor min(std::initializer_list<int64_t> axes, bool keepdim = false) const {
    return min(std::vector<int64_t>(axes), keepdim);
  }
  Tensor prod(const std::vector<int64_t>& axes = {}, bool keepdim = false) const;
  Tensor prod(int64_t axis, bool keepdim = false) const;
  Tensor prod(std::initializer_list<int64_t> axes, bool keepdim = false) const {
    return prod(std::vector<int64_t>(axes), keepdim);
  }
  /// Int tensors give float32.
  Tensor mean(const std::vector<int64_t>& axes = {}, bool keepdim = false) const;
  Tensor mean(int64_t axis, bool keepdim = false) const;
  Tensor mean(std::initializer_list<int64_t> axes, bool keepdim = false) const {
    return mean(std::vector<int64_t>(axes), keepdim);
  }
  Tensor var(const std::vector<int64_t>& axes = {}, bool keepdim = false,
             double correction = 1.0) const;
  Tensor var(int64_t axis, bool keepdim = false, double correction = 1.0) const;
  Tensor var(std::initializer_list<int64_t> axes, bool keepdim = false,
             double correction = 1.0) const {
    return var(std::vector<int64_t>(axes), keepdim, correction);
  }
  Tensor std(const std::vector<int64_t>& axes = {}, bool keepdim = false,
             double correction = 1.0) const;
  Tensor std(int64_t axis, bool keepdim = false, double correction = 1.0) const;
  Tensor std(std::initializer_list<int64_t> axes, bool keepdim = false,
             double correction = 1.0) const {
    return std(std::vector<int64_t>(axes), keepdim, correction);
  }
  /// Index (int32) of the first maximum along `axis`, or in the flattened tensor.
  Tensor argmax(std::optional<int64_t> axis = std::nullopt, bool keepdim = false) const;
  Tensor argmin(std::optional<int64_t> axis = std::nullopt, bool keepdim = false) const;
  /// Inclusive prefix sum along `axis`.
  Tensor cumsum(int64_t axis = 0) const;
  /// Whether any / every element along `axes` is nonzero (bool).
  Tensor any(const std::vector<int64_t>& axes = {}, bool keepdim = false) const;
  Tensor any(int64_t axis, bool keepdim = false) const {
    return any(std::vector<int64_t>{axis}, keepdim);
  }
  Tensor any(std::initializer_list<int64_t> axes, bool keepdim = false) const {
    return any(std::vector<int64_t>(axes), keepdim);
  }
  Tensor all(const std::vector<int64_t>& axes = {}, bool keepdim = false) const;
  Tensor all(int64_t axis, bool keepdim = false) const {
    return all(std::vector<int64_t>{axis}, keepdim);
  }
  Tensor all(std::initializer_list<int64_t> axes, bool keepdim = false) const {
    return all(std::vector<int64_t>(axes), keepdim);
  }

  // ---- masks and selections ------------------------------------------------------------------
  /// The lower (upper) triangle of the last two axes: column - row <= (>=) diagonal; 0 else.
  Tensor tril(int64_t diagonal = 0) const;
  Tensor triu(int64_t diagonal = 0) const;
  /// `value` (in this tensor's dtype) where `mask` is true; the two broadcast (torch's).
  Tensor masked_fill(const Tensor& mask, Scalar value) const;
  /// int32 indicators along a new last axis; -1 classes: max + 1 (reads the data).
  Tensor one_hot(int64_t num_classes = -1) const;
  /// this + weight * (end - this) (torch's form, exact at weight 0 and 1).
  Tensor lerp(const Tensor& end, const Tensor& weight) const;
  Tensor lerp(const Tensor& end, double weight) const;
  /// Outer product of two 1-d tensors.
  Tensor outer(const Tensor& o) const;
  /// Shifts elements along `dims` (wrapping around); no dims: the flattened tensor.
  Tensor roll(const std::vector<int64_t>& shifts, const std::vector<int64_t>& dims = {}) const;

  // ---- movement ---------------------------------------------------------------------------
  /// One size may be -1 (inferred).
  Tensor reshape(const Shape& shape) const;
  Tensor view(const Shape& shape) const { return reshape(shape); }
  Tensor permute(const std::vector<int64_t>& order) const;
  Tensor transpose(int64_t dim0 = -2, int64_t dim1 = -1) const;
  /// Broadcast size-1 axes (and new leading axes); -1 keeps a size.
  Tensor expand(const Shape& shape) const;
  /// Removes size-1 axes: all, or `dim` (a no-op when its size is not 1).
  Tensor squeeze(std::optional<int64_t> dim = std::nullopt) const;
  Tensor unsqueeze(int64_t dim) const;
  Tensor flatten(int64_t start_dim = 0, int64_t end_dim = -1) const;
  Tensor unflatten(int64_t dim, const Shape& sizes) const;
  /// Per axis [begin, end).
  Tensor shrink(const std::vector<std::pair<int64_t, int64_t>>& bounds) const;
  /// Per axis (before, after) elements of `value`; negative amounts crop.
  Tensor pad(const std::vector<std::pair<int64_t, int64_t>>& pads, double value = 0.0) const;
  /// Same, filled as `mode` says (`value` is constant mode's fill). Reflect pads must be less
  /// than the axis' size, circular ones at most it, and replicate needs a non-empty axis;
  /// negative amounts crop the padded tensor (circular: crop first), as torch's.
  Tensor pad(const std::vector<std::pair<int64_t, int64_t>>& pads, PadMode mode,
             double value = 0.0) const;
  Tensor flip(const std::vector<int64_t>& axes) const;
  Tensor flip(int64_t axis) const { return flip(std::vector<int64_t>{axis}); }
  /// (A braced list, `flip({})` included, is a list of axes, not one axis.)
  Tensor flip(std::initializer_list<int64_t> axes) const {
    return flip(std::vector<int64_t>(axes));
  }
  /// Tiles the tensor `repeats[i]` times along axis i (leading repeats add axes).
  Tensor repeat(const std::vector<int64_t>& repeats) const;
  /// Python-style indexing: integers drop an axis, slices keep it, none() adds one.
  Tensor getitem(const std::vector<Index>& index) const;
  Tensor operator[](const std::vector<Index>& index) const { return getitem(index); }
  Tensor operator[](int64_t i) const { return getitem({Index(i)}); }
  /// Values of `index` (int tensor, same rank) taken along `dim`: out[i][j] = x[index[i][j]][j].
  Tensor gather(int64_t dim, const Tensor& index) const;

  static Tensor cat(const std::vector<Tensor>& tensors, int64_t dim = 0);
  static Tensor stack(const std::vector<Tensor>& tensors, int64_t dim = 0);
  /// Pieces of `size` along dim (the last may be smaller).
  std::vector<Tensor> split(int64_t size, int64_t dim = 0) const;
  /// Pieces of the given sizes (they must add up to the axis size).
  std::vector<Tensor> split(const std::vector<int64_t>& sizes, int64_t dim = 0) const;
  /// `n` pieces of ceil(size / n) (fewer when they run out).
  std::vector<Tensor> chunk(int64_t n, int64_t dim = 0) const;

  // ---- linear algebra, nn -------------------------------------------------------------------
  /// torch.matmul semantics: 1-d operands, batched and broadcast leading axes.
  Tensor matmul(const Tensor& o) const;
  Tensor dot(const Tensor& o) const { return matmul(o); }
  /// this @ weight.T + bias (weight (out, in), as torch.nn.functional.linear).
  Tensor linear(const Tensor& weight, const std::optional<Tensor>& bias = std::nullopt) const;
  Tensor softmax(int64_t axis = -1) const;
  Tensor log_softmax(int64_t axis = -1) const;
  Tensor logsumexp(int64_t axis = -1, bool keepdim = false) const;
  /// Normalises over the trailing axes in `axes` (no affine parameters).
  Tensor layernorm(const std::vector<int64_t>& axes = {-1}, double eps = 1e-5) const;
  /// Cross-entropy of logits (this) against class indices (int tensor, shape without `axis`)
  /// or class probabilities (float tensor, this tensor's shape), as torch's: positions whose
  /// class is `ignore_index` add 0 and the mean is over the others.
  Tensor cross_entropy(const Tensor& target, int64_t axis = -1, double label_smoothing = 0.0,
                       Reduction reduction = Reduction::mean, int64_t ignore_index = -100) const;
  /// Binary cross-entropy of probabilities (this) against targets.
  Tensor binary_crossentropy(const Tensor& target, Reduction reduction = Reduction::mean) const;
  /// Of logits (this); `pos_weight` scales the positive targets' term (torch's).
  Tensor binary_crossentropy_logits(const Tensor& target, Reduction reduction = Reduction::mean,
                                    const std::optional<Tensor>& pos_weight = std::nullopt) const;
  /// Einstein summation: "ij,jk->ik"; "..." stands for the axes it covers; no "->" sums
  /// repeated indices and orders the output alphabetically (after "...").
  static Tensor einsum(const std::string& formula, const std::vector<Tensor>& operands);
  /// einops-style rearrange: "b (h w) c -> b h w c" with sizes for split groups in `sizes`.
  Tensor rearrange(const std::string& formula,
                   const std::map<std::string, int64_t>& sizes = {}) const;
  /// NCHW input, weight (out, in / groups, kh, kw); padding applies to both sides.
  Tensor conv2d(const Tensor& weight, const std::optional<Tensor>& bias = std::nullopt,
                int64_t groups = 1, Size2 stride = 1, Size2 dilation = 1, Size2 padding = 0) const;
  /// Stride defaults to the kernel size; padding pads with -inf. `ceil_mode` adds a last,
  /// partial window where one starts inside the (left-padded) input, as torch's.
  Tensor max_pool2d(Size2 kernel = 2, std::optional<Size2> stride = std::nullopt,
                    Size2 dilation = 1, Size2 padding = 0, bool ceil_mode = false) const;
  /// Stride defaults to the kernel size. The mean counts the padding's zeros when
  /// `count_include_pad`, never the part of a ceil_mode window past the padding (torch's).
  Tensor avg_pool2d(Size2 kernel = 2, std::optional<Size2> stride = std::nullopt, Size2 padding = 0,
                    bool ceil_mode = false, bool count_include_pad = true) const;
  /// softmax(q k^T / sqrt(d) + mask) v; `attn_mask` bool (true keeps) or float (added).
  /// `is_causal` with an `attn_mask` is an error, as in tinygrad and torch.
  Tensor scaled_dot_product_attention(const Tensor& key, const Tensor& value,
                                      const std::optional<Tensor>& attn_mask = std::nullopt,
                                      bool is_causal = false) const;

  /// Internal handle (used by libpolygrad's own layers; not part of the stable API).
  const std::shared_ptr<detail::TensorImpl>& impl() const { return impl_; }
  explicit Tensor(std::shared_ptr<detail::TensorImpl> impl) : impl_(std::move(impl)) {}

 private:
  void check_item() const;
  std::shared_ptr<detail::TensorImpl> impl_;
};

// Operators: tensor with tensor, and tensor with a scalar on either side.
POLYGRAD_API Tensor operator+(const Tensor& a, const Tensor& b);
POLYGRAD_API Tensor operator+(const Tensor& a, Scalar b);
POLYGRAD_API Tensor operator+(Scalar a, const Tensor& b);
POLYGRAD_API Tensor operator-(const Tensor& a, const Tensor& b);
POLYGRAD_API Tensor operator-(const Tensor& a, Scalar b);
POLYGRAD_API Tensor operator-(Scalar a, const Tensor& b);
POLYGRAD_API Tensor operator*(const Tensor& a, const Tensor& b);
POLYGRAD_API Tensor operator*(const Tensor& a, Scalar b);
POLYGRAD_API Tensor operator*(Scalar a, const Tensor& b);
POLYGRAD_API Tensor operator/(const Tensor& a, const Tensor& b);
POLYGRAD_API Tensor operator/(const Tensor& a, Scalar b);
POLYGRAD_API Tensor operator/(Scalar a, const Tensor& b);
POLYGRAD_API Tensor operator%(const Tensor& a, const Tensor& b);
POLYGRAD_API Tensor operator%(const Tensor& a, Scalar b);
POLYGRAD_API Tensor operator%(Scalar a, const Tensor& b);
POLYGRAD_API Tensor operator-(const Tensor& a);
POLYGRAD_API Tensor operator<(const Tensor& a, const Tensor& b);
POLYGRAD_API Tensor operator<(const Tensor& a, Scalar b);
POLYGRAD_API Tensor operator<(Scalar a, const Tensor& b);
POLYGRAD_API Tensor operator<=(const Tensor& a, const Tensor& b);
POLYGRAD_API Tensor operator<=(const Tensor& a, Scalar b);
POLYGRAD_API Tensor operator<=(Scalar a, const Tensor& b);
POLYGRAD_API Tensor operator>(const Tensor& a, const Tensor& b);
POLYGRAD_API Tensor operator>(const Tensor& a, Scalar b);
POLYGRAD_API Tensor operator>(Scalar a, const Tensor& b);
POLYGRAD_API Tensor operator>=(const Tensor& a, const Tensor& b);
POLYGRAD_API Tensor operator>=(const Tensor& a, Scalar b);
POLYGRAD_API Tensor operator>=(Scalar a, const Tensor& b);
POLYGRAD_API Tensor operator==(const Tensor& a, const Tensor& b);
POLYGRAD_API Tensor operator==(const Tensor& a, Scalar b);
POLYGRAD_API Tensor operator==(Scalar a, const Tensor& b);
POLYGRAD_API Tensor operator!=(const Tensor& a, const Tensor& b);
POLYGRAD_API Tensor operator!=(const Tensor& a, Scalar b);
POLYGRAD_API Tensor operator!=(Scalar a, const Tensor& b);
POLYGRAD_API Tensor operator&(const Tensor& a, const Tensor& b);
POLYGRAD_API Tensor operator|(const Tensor& a, const Tensor& b);
POLYGRAD_API Tensor operator^(const Tensor& a, const Tensor& b);
POLYGRAD_API Tensor operator!(const Tensor& a);

}  // namespace polygrad

#endif  // POLYGRAD_TENSOR_HPP
