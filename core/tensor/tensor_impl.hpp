// The state behind a Tensor handle and the helpers the op files share.
#ifndef POLYGRAD_TENSOR_TENSOR_IMPL_HPP
#define POLYGRAD_TENSOR_TENSOR_IMPL_HPP

#include "ir/dtype.hpp"
#include "ir/uop.hpp"
#include "tensor/lazy.hpp"

#include <polygrad/capture.hpp>
#include <polygrad/error.hpp>
#include <polygrad/tensor.hpp>

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace polygrad::detail {

/// One tensor: its lazy graph node, static shape, canonical device, and autograd state.
struct TensorImpl {
  UOpRef uop;
  lazy::Shape shape;
  std::string device;
  bool requires_grad = false;
  std::shared_ptr<TensorImpl> grad;
};

/// The most elements (and the longest axis) a tensor may have: sizes multiplied in index math
/// (strides, offsets) stay clear of int64 overflow.
inline constexpr int64_t kMaxElements = int64_t{1} << 62;
/// The element count of `shape`; a user error naming `op` when a size is negative or the
/// sizes multiply past kMaxElements (every new tensor's shape is checked so).
int64_t checked_numel(const char* op, const lazy::Shape& shape);
/// A new tensor around `uop`.
Tensor make(UOpRef uop, lazy::Shape shape, std::string device);
/// The impl of `t`; a user error naming `op` when t is a null handle.
TensorImpl& state(const Tensor& t, const char* op);
/// Lazily writes `value` (broadcast to view's shape) into `target`, a realised tensor or one
/// with pending assigns, at the elements of `view`, movement ops over target's realised
/// tensor (no broadcast, no pad: user errors naming the op); the other elements keep their
/// values. target then holds the write: graphs reading it read after it, and realising any of
/// them runs it (one kernel over the view's elements).
void assign_through_view(Tensor& target, const Tensor& view, const Tensor& value);
/// Every live tensor with requires_grad set (registered by Tensor::requires_grad(true)).
std::vector<std::shared_ptr<TensorImpl>> live_grad_leaves();
/// Opens this thread's capture (runtime::capture_begin) and notes the gradients that exist now.
void begin_capture();
/// Closes it (runtime::capture_end).
std::shared_ptr<runtime::Capture> end_capture();
/// Whether `grad` existed when this thread's open capture began: backward must not add to it,
/// or every run of the capture would add its stale value again.
bool grad_predates_capture(const TensorImpl* grad);
/// The node, dtype of a tensor (checked non-null).
const UOpRef& node(const Tensor& t, const char* op);
DType dt(const Tensor& t);

/// `axis` counted from the end when negative; a user error "<op>: axis A out of range for
/// shape S" otherwise. `ndim` may exceed shape.size() by one for unsqueeze-like ops.
int64_t norm_axis(const char* op, int64_t axis, int64_t ndim, const lazy::Shape& shape);
/// Sorted normalised axes; empty input means every axis. A user error when one repeats. A 0-d
/// tensor takes axis 0 or -1 and has none to reduce (an empty result).
std::vector<int64_t> norm_axes(const char* op, const std::vector<int64_t>& axes,
                               const lazy::Shape& shape);

/// x - mean(x) over `axes`, the mean taken as x0 + mean(x - x0) with x0 the first element along
/// them (detached: the gradient is mean's): equal values give exactly 0, as torch's
/// Welford variance does, where a float sum of n equal values rounds and their mean need not
/// be the value (var of a constant row was 1e-14, std's gradient there not 0); values far from
/// 0 lose less to cancellation too.
/// Errors (a bad axis) name `op`.
Tensor centered(const char* op, const Tensor& x, const std::vector<int64_t>& axes);

/// The max along `axes` as a reduction: over an axis of length 0 it is the dtype's lowest
/// value (any, all, softmax and logsumexp of empty axes rely on it); Tensor::max refuses one.
Tensor reduce_max(const Tensor& t, const std::vector<int64_t>& axes, bool keepdim);

/// The numpy broadcast of two shapes; nothing when they do not broadcast.
std::optional<lazy::Shape> try_broadcast_shape(const lazy::Shape& a, const lazy::Shape& b);
/// The numpy broadcast of two shapes; user error "<op>: shapes A and B do not broadcast".
lazy::Shape broadcast_shape(const char* op, const lazy::Shape& a, const lazy::Shape& b);
/// `t` broadcast to `shape` (reshape adding leading 1s, then expand). An axis `t` keeps
/// its size expression (tensor/symbolic.hpp); an expanded one takes `other`'s (the operand `t`
/// is broadcast against) when `other` is given.
Tensor broadcast_to(const char* op, const Tensor& t, const lazy::Shape& shape,
                    const Tensor* other = nullptr);
/// `dtype` when it is a tensor element type (bool to float64); a user error naming `op`
/// otherwise: an int outside the enum from a C caller, or PG_DTYPE_VOID.
pg_dtype check_dtype(const char* op, pg_dtype dtype);
/// Checks that both tensors live on one device.
void check_same_device(const char* op, const Tensor& a, const Tensor& b);

/// The dtype a scalar operand takes next to a tensor of dtype `t` (python-scalar rule).
DType scalar_dtype(DType t, Scalar s);
/// A tensor of `shape` on `device` filled with `v` (lazy CONST, no buffer).
Tensor constant(Scalar v, DType dtype, const lazy::Shape& shape, const std::string& device);
/// 0, 1, ..., n - 1 (int32; int64 past its range) on `device` (canonical), computed by the
/// kernels that read it: no host buffer, and a one-hot sum over it (gather, an embedding's
/// lookup) folds into one indexed load (see KernelBuilder::reduce).
Tensor iota(int64_t n, const std::string& device);
/// `index` (ints) as it is compared with an iota (gather, one_hot): itself, or int64 for
/// uint64, which no dtype holds together with iota's int32 (values past INT64_MAX wrap negative
/// and, out of range, select nothing).
Tensor iota_comparable(const Tensor& index);
/// The dtype of an int scalar alone: int32, the default int, or int64 when int32 cannot hold
/// it (as torch and numpy give, rather than wrap).
DType int_scalar_dtype(Scalar s);
/// `s` as a tensor next to `t`: the scalar-rule dtype, t's shape and device.
Tensor scalar_like(const Tensor& t, Scalar s);

/// tensor-tensor promotion (torch rules); user error naming `op` when no dtype holds both.
DType promote_for(const char* op, DType a, DType b);
/// Elementwise op on tensors of identical shapes and (for non-WHERE ops) dtypes.
Tensor elementwise(Op op, const std::vector<Tensor>& srcs);
/// Promote, broadcast and apply a binary op.
Tensor binary(const char* name, Op op, const Tensor& a, const Tensor& b);
/// `t` as float (float32 unless already float): inputs of transcendental ops.
Tensor to_float(const Tensor& t);

inline constexpr double kLog2E = 1.4426950408889634;
inline constexpr double kLn2 = 0.6931471805599453;
inline constexpr double kPi = 3.141592653589793;

/// A bool (rows, cols) mask of column - row <= diagonal (lower) or >= diagonal (upper): tril,
/// triu and causal attention.
Tensor triangle_mask(int64_t rows, int64_t cols, int64_t diagonal, bool lower,
                     const std::string& device);

/// `f(x)` for a float16 or bfloat16 `x` computed in float32 and rounded once at the end, as
/// torch's kernels do: in bfloat16, 2 * sigmoid(2x) - 1 gave tanh(-0.01) = -0.0117 and
/// softplus(-6) = 0. Other dtypes as they are.
template <class F>
Tensor widened(const Tensor& x, F f) {
  const pg_dtype t = dt(x).scalar();
  if (t != PG_DTYPE_FLOAT16 && t != PG_DTYPE_BFLOAT16) return f(x);
  return f(x.cast(PG_DTYPE_FLOAT32)).cast(t);
}

/// Host data of `count` elements of `dtype` converted from doubles.
std::vector<unsigned char> pack(const std::vector<double>& values, DType dtype);

/// The first value of the int tensor `t` outside [lo, hi) other than `except`, when `t` holds a
/// buffer in host memory (a device with PG_CAP_HOST_MEMORY): its values are then known without
/// running anything (a copy). A lazy tensor, or one in device memory, is not read (nullopt): its
/// values exist only when a kernel runs; nor anything while capturing. Torch checks every index;
/// these checks catch the ones in data given as input.
std::optional<int64_t> host_ints_outside(const Tensor& t, int64_t lo, int64_t hi,
                                         std::optional<int64_t> except = std::nullopt);

/// A float index tensor (token ids given as floats, as tinygrad's Embedding takes them) as an
/// int one (int32, or int64 past int32's range), for an axis of size n. When its values are
/// known without running anything (as host_ints_outside), a value that is not a whole number
/// or lies outside [0, n) is a user error (an index error) naming the value; a lazy one is
/// truncated toward zero.
Tensor whole_float_index(const char* op, const Tensor& index, int64_t n);

/// The bool mask index[..., k] == k over a new last axis of `classes` (one_hot, unchecked: a
/// value outside [0, classes) gives a row of false).
Tensor class_mask(const Tensor& index, int64_t classes);

/// Move `axis` to the last position / back.
Tensor move_axis_last(const Tensor& t, int64_t axis);
Tensor move_last_to(const Tensor& t, int64_t axis);

}  // namespace polygrad::detail

#endif  // POLYGRAD_TENSOR_TENSOR_IMPL_HPP
