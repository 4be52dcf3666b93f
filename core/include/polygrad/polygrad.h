/* polygrad's C API: lazy tensors, realisation, host transfer and autograd, for C and for
 * language bindings. Plain C11 (also compiles as C++).
 *
 * Conventions (docs/c-api.md has the details):
 * - A pg_tensor_t is an opaque handle to a heap polygrad::Tensor; every function that makes a
 *   tensor writes a new handle through its last parameter, which the caller frees with
 *   pg_tensor_free. Handles are cheap: two handles may share one tensor (its data, grad and
 *   requires_grad flag), as C++ Tensor copies do.
 * - Every function returns a pg_api_status. On failure nothing is written through the out
 *   parameters and pg_last_error() (thread-local) holds a message that names the entry point
 *   and the op, e.g. "pg_tensor_reshape: reshape: cannot reshape (2, 3) to (4,)".
 * - Axes may be negative (counted from the end). A shape is (const int64_t* dims, size_t ndim).
 * - Devices are names such as "cpu" or "cpu:0"; NULL or "" is the default device.
 * - No function throws or aborts on bad input: each is a try/catch firewall.
 */
#ifndef POLYGRAD_POLYGRAD_H
#define POLYGRAD_POLYGRAD_H

#include <polygrad/plugin.h>   /* pg_dtype */
#include <polygrad/export.hpp> /* POLYGRAD_API; preprocessor only, valid C */

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Result of every C API call. */
typedef enum pg_api_status {
  PG_API_OK = 0,
  PG_API_ERR_INVALID_ARGUMENT = 1, /**< the caller's fault: NULL handle, bad shape/axis/device */
  PG_API_ERR_DEVICE = 2,           /**< a device plugin failed (compile, launch, memory) */
  PG_API_ERR_INTERNAL = 3,         /**< a bug in polygrad (or out of memory on the host) */
  PG_API_ERR_INDEX = 4,            /**< an index outside its axis (getitem, gather): the caller's
                                        fault, as INVALID_ARGUMENT, told apart for frontends */
  PG_API_ERR_COMM = 5              /**< a collective failed for want of its peers: one died or
                                        left, or they did not answer within the timeout (the
                                        message names them); the communicator is broken */
} pg_api_status;

/** Opaque tensor handle. */
typedef struct pg_tensor* pg_tensor_t;

/** A scalar operand. `is_int` follows Python: an int scalar keeps an int tensor's dtype, a
 *  float scalar with an int tensor gives float32. Build one with pg_scalar_int/pg_scalar_float.
 *  An int scalar's exact value is `int_value` (an int64 beyond 2^53 has no double) when it
 *  rounds to `value`; otherwise `value` is used (a scalar written as {3.0, 1}), and one no
 *  int64 holds (NaN, 1e300) is PG_API_ERR_INVALID_ARGUMENT. */
typedef struct pg_scalar {
  double value;
  int is_int;
  int64_t int_value;
} pg_scalar;

static inline pg_scalar pg_scalar_float(double v) {
  pg_scalar s;
  s.value = v;
  s.is_int = 0;
  s.int_value = 0;
  return s;
}
static inline pg_scalar pg_scalar_int(int64_t v) {
  pg_scalar s;
  s.value = (double)v;
  s.is_int = 1;
  s.int_value = v;
  return s;
}

/** One entry of pg_tensor_getitem (Python indexing). */
typedef enum pg_index_kind PG_ENUM_INT {
  PG_INDEX_INTEGER = 0, /**< `value`: drops the axis */
  PG_INDEX_SLICE = 1,   /**< start:stop:step; has_start/has_stop say which bounds are given */
  PG_INDEX_NONE = 2,    /**< a new axis of size 1 */
  PG_INDEX_ELLIPSIS = 3 /**< as many full slices as needed */
} pg_index_kind;

typedef struct pg_index {
  pg_index_kind kind;
  int64_t value;
  int has_start;
  int64_t start;
  int has_stop;
  int64_t stop;
  int64_t step; /**< 0 is read as 1 */
} pg_index;

/** The last error message of this thread ("" when none yet). Valid until the thread's next
 *  failing call. */
POLYGRAD_API const char* pg_last_error(void);

/** Seeds pg_tensor_rand/randn/randint (same values on every device). */
POLYGRAD_API pg_api_status pg_manual_seed(uint64_t seed);

/** The number of kernels compiled so far in this process (each distinct kernel once per
 *  device). A new batch size that reuses the compiled kernels leaves it unchanged. */
POLYGRAD_API pg_api_status pg_compiled_kernel_count(size_t* out);

/** The panel cache (docs/compiler.md): copies of weights in a matmul's panels that realize
 *  keeps until the weight is written. Each output may be NULL: `copies_made`, copies made so
 *  far in this process (one per weight version and layout); `reuses`, realizes that used a
 *  kept copy instead; `entries` and `bytes`, the copies held now and their memory; `limit`,
 *  the most memory they may hold. */
POLYGRAD_API pg_api_status pg_panel_cache_stats(size_t* copies_made, size_t* reuses,
                                                size_t* entries, uint64_t* bytes, uint64_t* limit);
/** Sets the most memory the panel cache may hold (an eighth of the machine's
 *  memory by default, at least 1 GiB; 0 keeps no copy), dropping
 *  the least recently used copies beyond it. */
POLYGRAD_API pg_api_status pg_set_panel_cache_limit(uint64_t bytes);

/* ---- construction --------------------------------------------------------------------- */

/** A tensor of `dtype` and shape (dims, ndim) holding a copy of numel * itemsize packed bytes
 *  at `data` (row-major). ndim 0 is a scalar. A bool byte other than 0 is true (read back 1). */
POLYGRAD_API pg_api_status pg_tensor_from_data(const void* data, pg_dtype dtype,
                                               const int64_t* dims, size_t ndim, const char* device,
                                               pg_tensor_t* out);
/** Like pg_tensor_from_data, but without a copy where the device can use host memory in
 *  place (the cpu device, for memory 64-byte aligned like its own buffers): the tensor reads
 *  `data` when it is realised, and assign() writes into it. `release(context)` (may be NULL)
 *  is called exactly once, when polygrad no longer uses the memory: with the tensor's last
 *  use, at once when the data was copied instead, or before an error status returns.
 *  `*shared` (may be NULL) is set to 1 when no copy was made, else 0. */
POLYGRAD_API pg_api_status pg_tensor_from_host_memory(void* data, pg_dtype dtype,
                                                      const int64_t* dims, size_t ndim,
                                                      const char* device,
                                                      void (*release)(void* context), void* context,
                                                      int* shared, pg_tensor_t* out);
/** A 0-d tensor holding `value` as `dtype`. */
POLYGRAD_API pg_api_status pg_tensor_scalar(double value, pg_dtype dtype, const char* device,
                                            pg_tensor_t* out);
/** Frees a handle (not the tensor while other handles share it). NULL is ignored. */
POLYGRAD_API void pg_tensor_free(pg_tensor_t t);

/* X(name): pg_tensor_<name>(dims, ndim, dtype, device, out): a new tensor of that shape. empty's
 * contents are unspecified; rand is uniform in [0, 1), randn standard normal. */
/* clang-format off */
#define PG_TENSOR_FILL_OPS(X) X(zeros) X(ones) X(empty) X(rand) X(randn)
/* clang-format on */
#define PG_X(name)                                                                              \
  POLYGRAD_API pg_api_status pg_tensor_##name(const int64_t* dims, size_t ndim, pg_dtype dtype, \
                                              const char* device, pg_tensor_t* out);
PG_TENSOR_FILL_OPS(PG_X)
#undef PG_X

/** A tensor of `value` as `dtype`; PG_DTYPE_VOID is float32 (Tensor::full of a double). */
POLYGRAD_API pg_api_status pg_tensor_full(const int64_t* dims, size_t ndim, double value,
                                          pg_dtype dtype, const char* device, pg_tensor_t* out);
/** pg_tensor_full with an exact integer (an int64 beyond 2^53); ndim 0 makes a 0-d tensor.
 *  PG_DTYPE_VOID is the value's own: int32, or int64 past int32's range (tinygrad's full). */
POLYGRAD_API pg_api_status pg_tensor_full_int(const int64_t* dims, size_t ndim, int64_t value,
                                              pg_dtype dtype, const char* device, pg_tensor_t* out);
/** Uniform integers in [low, high). */
POLYGRAD_API pg_api_status pg_tensor_randint(int64_t low, int64_t high, const int64_t* dims,
                                             size_t ndim, pg_dtype dtype, const char* device,
                                             pg_tensor_t* out);
/** start, start+step, ... below stop. dtype PG_DTYPE_VOID picks int32 for whole numbers,
 *  float32 otherwise. */
POLYGRAD_API pg_api_status pg_tensor_arange(double start, double stop, double step, pg_dtype dtype,
                                            const char* device, pg_tensor_t* out);
/** arange over exact integers (beyond 2^53 too) in an int `dtype`. */
POLYGRAD_API pg_api_status pg_tensor_arange_int(int64_t start, int64_t stop, int64_t step,
                                                pg_dtype dtype, const char* device,
                                                pg_tensor_t* out);
/** `steps` values from start to stop inclusive. */
POLYGRAD_API pg_api_status pg_tensor_linspace(double start, double stop, int64_t steps,
                                              pg_dtype dtype, const char* device, pg_tensor_t* out);
/** The n x m identity (m = n when m < 0). */
POLYGRAD_API pg_api_status pg_tensor_eye(int64_t n, int64_t m, pg_dtype dtype, const char* device,
                                         pg_tensor_t* out);
POLYGRAD_API pg_api_status pg_tensor_full_like(pg_tensor_t like, double value, pg_tensor_t* out);

/* ---- properties ----------------------------------------------------------------------- */

/** Writes min(ndim, capacity) sizes to `dims` (may be NULL when capacity is 0) and the rank to
 *  `ndim`. */
POLYGRAD_API pg_api_status pg_tensor_shape(pg_tensor_t t, int64_t* dims, size_t capacity,
                                           size_t* ndim);
POLYGRAD_API pg_api_status pg_tensor_ndim(pg_tensor_t t, size_t* out);
POLYGRAD_API pg_api_status pg_tensor_dtype(pg_tensor_t t, pg_dtype* out);
/** The canonical device name ("cpu:0"); the string lives as long as the tensor. */
POLYGRAD_API pg_api_status pg_tensor_device(pg_tensor_t t, const char** out);
POLYGRAD_API pg_api_status pg_tensor_numel(pg_tensor_t t, int64_t* out);
/** Size of axis `dim`. */
POLYGRAD_API pg_api_status pg_tensor_size(pg_tensor_t t, int64_t dim, int64_t* out);
/** Bytes of one element. */
POLYGRAD_API pg_api_status pg_tensor_element_size(pg_tensor_t t, int64_t* out);
/** 1 when the tensor holds a buffer (no pending computation), else 0. */
POLYGRAD_API pg_api_status pg_tensor_is_realized(pg_tensor_t t, int* out);

/* ---- realisation and host transfer -------------------------------------------------- */

/** Runs the tensor's pending computation (the handle then holds a buffer). */
POLYGRAD_API pg_api_status pg_tensor_realize(pg_tensor_t t);
/** Realises `n` tensors in one schedule. */
POLYGRAD_API pg_api_status pg_tensor_realize_all(pg_tensor_t* tensors, size_t n);
/** Realises and copies numel * element_size bytes to `dst`; `bytes` must equal that. */
POLYGRAD_API pg_api_status pg_tensor_to_host(pg_tensor_t t, void* dst, size_t bytes);
/** The single value of a one-element tensor, as a double. */
POLYGRAD_API pg_api_status pg_tensor_item(pg_tensor_t t, double* out);
/** The single value of a one-element tensor, as an int64: exact for int dtypes (uint64 values
 *  above INT64_MAX as their bits), floats truncated as a C cast. */
POLYGRAD_API pg_api_status pg_tensor_item_int64(pg_tensor_t t, int64_t* out);
/** A copy on `device`. */
POLYGRAD_API pg_api_status pg_tensor_to(pg_tensor_t t, const char* device, pg_tensor_t* out);
/** Writes `value` (broadcast and cast) into t's buffer, lazily; every handle of t sees it.
 *  When t is a view of a realised tensor (a slice, a transpose, a reshape), the write goes
 *  through the view into that tensor's buffer at once, the other elements untouched; a view
 *  that broadcasts or pads is PG_API_ERR_INVALID_ARGUMENT naming EXPAND or PAD. */
POLYGRAD_API pg_api_status pg_tensor_assign(pg_tensor_t t, pg_tensor_t value);
POLYGRAD_API pg_api_status pg_tensor_cast(pg_tensor_t t, pg_dtype dtype, pg_tensor_t* out);

/* ---- ops ------------------------------------------------------------------------------ */
/* Each name is the polygrad::Tensor method of that name (tinygrad/torch semantics); every
 * result is a new handle. */

/* X(name): pg_tensor_<name>(x, out). */
/* clang-format off */
#define PG_TENSOR_UNARY_OPS(X)                                                                \
  X(neg) X(logical_not) X(exp) X(log) X(exp2) X(log2) X(sqrt) X(rsqrt) X(square) X(abs)      \
  X(sign) X(reciprocal) X(sin) X(cos) X(tan) X(ceil) X(floor) X(round) X(trunc) X(isnan)      \
  X(isinf) X(relu) X(relu6) X(sigmoid) X(tanh) X(gelu) X(quick_gelu) X(silu) X(mish)          \
  X(swish) X(hardswish) X(hardsigmoid) X(T) X(detach) X(clone) X(contiguous) X(isfinite)      \
  X(log1p) X(expm1) X(log10) X(sinh) X(cosh) X(asinh) X(acosh) X(atanh) X(atan) X(asin)      \
  X(acos) X(logsigmoid) X(softsign) X(selu)
/* clang-format on */
/* X(name): pg_tensor_<name>(like, out): a new tensor with like's shape, dtype and device. */
/* clang-format off */
#define PG_TENSOR_LIKE_OPS(X) X(zeros_like) X(ones_like) X(rand_like) X(randn_like)
/* clang-format on */
#define PG_X(name) POLYGRAD_API pg_api_status pg_tensor_##name(pg_tensor_t x, pg_tensor_t* out);
PG_TENSOR_UNARY_OPS(PG_X)
PG_TENSOR_LIKE_OPS(PG_X)
#undef PG_X

/* X(name): pg_tensor_<name>(x, param, out) for the method's one double parameter. */
/* clang-format off */
#define PG_TENSOR_PARAM_OPS(X) X(leaky_relu) X(elu) X(softplus) X(celu)
/* clang-format on */
#define PG_X(name) \
  POLYGRAD_API pg_api_status pg_tensor_##name(pg_tensor_t x, double param, pg_tensor_t* out);
PG_TENSOR_PARAM_OPS(PG_X)
#undef PG_X

/* X(name): pg_tensor_<name>(a, b, out), broadcasting and promoting as the method does. */
/* clang-format off */
#define PG_TENSOR_BINARY_OPS(X)                                                               \
  X(add) X(sub) X(mul) X(div) X(pow) X(lt) X(le) X(gt) X(ge) X(eq) X(ne) X(maximum)           \
  X(minimum) X(floordiv) X(mod) X(bitwise_and) X(bitwise_or) X(bitwise_xor) X(matmul) X(dot)  \
  X(logical_and) X(logical_or) X(outer)
/* clang-format on */
#define PG_X(name) \
  POLYGRAD_API pg_api_status pg_tensor_##name(pg_tensor_t a, pg_tensor_t b, pg_tensor_t* out);
PG_TENSOR_BINARY_OPS(PG_X)
#undef PG_X

/* X(name): pg_tensor_<name>_scalar(a, s, out): the method with a scalar operand. */
/* clang-format off */
#define PG_TENSOR_SCALAR_OPS(X)                                                               \
  X(add) X(sub) X(mul) X(div) X(pow) X(lt) X(le) X(gt) X(ge) X(eq) X(ne) X(maximum) X(minimum) \
  X(floordiv) X(mod)
/* clang-format on */
#define PG_X(name)                                                                 \
  POLYGRAD_API pg_api_status pg_tensor_##name##_scalar(pg_tensor_t a, pg_scalar s, \
                                                       pg_tensor_t* out);
PG_TENSOR_SCALAR_OPS(PG_X)
#undef PG_X

/** base ** x. */
POLYGRAD_API pg_api_status pg_tensor_pow_base(pg_scalar base, pg_tensor_t x, pg_tensor_t* out);
/** cond ? a : b (cond cast to bool). */
POLYGRAD_API pg_api_status pg_tensor_where(pg_tensor_t cond, pg_tensor_t a, pg_tensor_t b,
                                           pg_tensor_t* out);
POLYGRAD_API pg_api_status pg_tensor_where_scalar(pg_tensor_t cond, pg_scalar a, pg_scalar b,
                                                  pg_tensor_t* out);
/** The lower / upper triangle of the last two axes (column - row <= / >= diagonal). */
POLYGRAD_API pg_api_status pg_tensor_tril(pg_tensor_t x, int64_t diagonal, pg_tensor_t* out);
POLYGRAD_API pg_api_status pg_tensor_triu(pg_tensor_t x, int64_t diagonal, pg_tensor_t* out);
/** value (in x's dtype) where mask is true; x and mask broadcast against each other. */
POLYGRAD_API pg_api_status pg_tensor_masked_fill(pg_tensor_t x, pg_tensor_t mask, pg_scalar value,
                                                 pg_tensor_t* out);
/** int32 indicators along a new last axis; num_classes -1: max + 1 (reads the data). */
POLYGRAD_API pg_api_status pg_tensor_one_hot(pg_tensor_t x, int64_t num_classes, pg_tensor_t* out);
/** x + weight * (end - x), torch's form. */
POLYGRAD_API pg_api_status pg_tensor_lerp(pg_tensor_t x, pg_tensor_t end, pg_tensor_t weight,
                                          pg_tensor_t* out);
/** Shifts along dims (ndims 0: the flattened tensor, one shift), wrapping around. */
POLYGRAD_API pg_api_status pg_tensor_roll(pg_tensor_t x, const int64_t* shifts, size_t nshifts,
                                          const int64_t* dims, size_t ndims, pg_tensor_t* out);
/** Bounds are optional: NULL means unbounded. A whole double is an int bound (an int tensor
 *  stays int, the bound brought into its range), any other a float bound (an int tensor
 *  becomes float32). */
POLYGRAD_API pg_api_status pg_tensor_clamp(pg_tensor_t x, const double* min, const double* max,
                                           pg_tensor_t* out);
/** clamp with scalar bounds: an int one keeps an int tensor's dtype with its exact int64 value,
 *  a float one (even 0.0) makes it float32, as torch's clamp. */
POLYGRAD_API pg_api_status pg_tensor_clamp_scalar(pg_tensor_t x, const pg_scalar* min,
                                                  const pg_scalar* max, pg_tensor_t* out);
POLYGRAD_API pg_api_status pg_tensor_hardtanh(pg_tensor_t x, double min_val, double max_val,
                                              pg_tensor_t* out);

/* ---- reductions ----------------------------------------------------------------------- */

/* X(name): pg_tensor_<name>(x, axes, naxes, keepdim, out); naxes 0 reduces every axis. */
/* clang-format off */
#define PG_TENSOR_REDUCE_OPS(X) X(sum) X(max) X(min) X(prod) X(mean) X(any) X(all)
/* clang-format on */
#define PG_X(name)                                                                              \
  POLYGRAD_API pg_api_status pg_tensor_##name(pg_tensor_t x, const int64_t* axes, size_t naxes, \
                                              int keepdim, pg_tensor_t* out);
PG_TENSOR_REDUCE_OPS(PG_X)
#undef PG_X
/** Variance / standard deviation with `correction` (1: sample, 0: population). */
POLYGRAD_API pg_api_status pg_tensor_var(pg_tensor_t x, const int64_t* axes, size_t naxes,
                                         int keepdim, double correction, pg_tensor_t* out);
POLYGRAD_API pg_api_status pg_tensor_std(pg_tensor_t x, const int64_t* axes, size_t naxes,
                                         int keepdim, double correction, pg_tensor_t* out);
/** Index (int32) of the first max/min along *axis, or in the flattened tensor (axis NULL). */
POLYGRAD_API pg_api_status pg_tensor_argmax(pg_tensor_t x, const int64_t* axis, int keepdim,
                                            pg_tensor_t* out);
POLYGRAD_API pg_api_status pg_tensor_argmin(pg_tensor_t x, const int64_t* axis, int keepdim,
                                            pg_tensor_t* out);
POLYGRAD_API pg_api_status pg_tensor_logsumexp(pg_tensor_t x, int64_t axis, int keepdim,
                                               pg_tensor_t* out);

/* X(name): pg_tensor_<name>(x, axis, out). */
/* clang-format off */
#define PG_TENSOR_AXIS_OPS(X) X(softmax) X(log_softmax) X(cumsum) X(unsqueeze)
/* clang-format on */
#define PG_X(name) \
  POLYGRAD_API pg_api_status pg_tensor_##name(pg_tensor_t x, int64_t axis, pg_tensor_t* out);
PG_TENSOR_AXIS_OPS(PG_X)
#undef PG_X

/* ---- movement ------------------------------------------------------------------------- */

/* X(name): pg_tensor_<name>(x, values, n, out): reshape/view/expand take a shape (one -1 allowed),
 * permute an axis order, flip axes, repeat per-axis counts. */
/* clang-format off */
#define PG_TENSOR_LIST_OPS(X) X(reshape) X(view) X(expand) X(permute) X(flip) X(repeat)
/* clang-format on */
#define PG_X(name)                                                                            \
  POLYGRAD_API pg_api_status pg_tensor_##name(pg_tensor_t x, const int64_t* values, size_t n, \
                                              pg_tensor_t* out);
PG_TENSOR_LIST_OPS(PG_X)
#undef PG_X
POLYGRAD_API pg_api_status pg_tensor_transpose(pg_tensor_t x, int64_t dim0, int64_t dim1,
                                               pg_tensor_t* out);
/** Removes size-1 axes: all of them (dim NULL) or *dim. */
POLYGRAD_API pg_api_status pg_tensor_squeeze(pg_tensor_t x, const int64_t* dim, pg_tensor_t* out);
POLYGRAD_API pg_api_status pg_tensor_flatten(pg_tensor_t x, int64_t start_dim, int64_t end_dim,
                                             pg_tensor_t* out);
POLYGRAD_API pg_api_status pg_tensor_unflatten(pg_tensor_t x, int64_t dim, const int64_t* sizes,
                                               size_t n, pg_tensor_t* out);
/** `bounds` holds (begin, end) per axis: 2 * naxes values. */
POLYGRAD_API pg_api_status pg_tensor_shrink(pg_tensor_t x, const int64_t* bounds, size_t naxes,
                                            pg_tensor_t* out);
/** `pads` holds (before, after) per axis: 2 * naxes values; filled with `value`. */
POLYGRAD_API pg_api_status pg_tensor_pad(pg_tensor_t x, const int64_t* pads, size_t naxes,
                                         double value, pg_tensor_t* out);
/** How pg_tensor_pad_mode fills (torch's and tinygrad's pad modes); passed as an int, so a
 *  value outside the enum is an error. */
typedef enum pg_pad_mode {
  PG_PAD_CONSTANT = 0,  /**< `value` */
  PG_PAD_REFLECT = 1,   /**< the axis mirrored without its edge element; pads < the axis' size */
  PG_PAD_REPLICATE = 2, /**< the edge element repeated; the axis must not be empty */
  PG_PAD_CIRCULAR = 3   /**< the axis wrapped around; pads <= the axis' size */
} pg_pad_mode;
/** pg_tensor_pad filled as `mode` says; `value` is PG_PAD_CONSTANT's fill. Negative amounts
 *  crop the padded tensor (circular: crop, then pad), as torch's. */
POLYGRAD_API pg_api_status pg_tensor_pad_mode(pg_tensor_t x, const int64_t* pads, size_t naxes,
                                              int mode, double value, pg_tensor_t* out);

/* ---- Symbolic sizes --------------------------------------------------------------------------
 * A size bound to a variable, as tinygrad's Variable(name, min, max).bind(value). A graph whose
 * sizes are bound variables is scheduled and compiled once for every value of them: the kernels
 * take the value at launch (docs/compiler.md, "Symbolic sizes"). Shapes report the bound values.
 */
typedef struct pg_dim* pg_dim_t;
/** A size: the variable `name` (letters, digits and '_', not starting with a digit) with
 *  inclusive bounds [min, max], bound to `value`. Errors: a bad name, min > max or min < 0, a
 *  value outside [min, max] (the message names the variable and the value). Free it with
 *  pg_dim_free; tensors built with it keep what they need. */
POLYGRAD_API pg_api_status pg_variable_bind(const char* name, int64_t min, int64_t max,
                                            int64_t value, pg_dim_t* out);
/** Frees a size; NULL is a no-op. */
POLYGRAD_API void pg_dim_free(pg_dim_t d);
/** a * scale + offset (a cache's length after a new entry: scale 1, offset 1); a new size. */
POLYGRAD_API pg_api_status pg_dim_affine(pg_dim_t a, int64_t scale, int64_t offset, pg_dim_t* out);
/** a + b; a new size. */
POLYGRAD_API pg_api_status pg_dim_add(pg_dim_t a, pg_dim_t b, pg_dim_t* out);
/** The value a size has (its variables at their bound values). */
POLYGRAD_API pg_api_status pg_dim_value(pg_dim_t d, int64_t* out);
/** pg_tensor_reshape with sizes that may be bound variables: axis i is dims[i] when `dims` and
 *  dims[i] are non-NULL, else shape[i] (no -1). */
POLYGRAD_API pg_api_status pg_tensor_reshape_sym(pg_tensor_t x, const int64_t* shape,
                                                 const pg_dim_t* dims, size_t ndim,
                                                 pg_tensor_t* out);
/** pg_tensor_expand with sizes that may be bound variables, as pg_tensor_reshape_sym. */
POLYGRAD_API pg_api_status pg_tensor_expand_sym(pg_tensor_t x, const int64_t* shape,
                                                const pg_dim_t* dims, size_t ndim,
                                                pg_tensor_t* out);
/** pg_tensor_shrink with bounds that may be bound variables: of the 2 * naxes values (begin,
 *  end per axis), value k is dims[k] when `dims` and dims[k] are non-NULL, else bounds[k]. The
 *  KV-cache slice: bounds {0, 0, 0, d}, dims {NULL, n, NULL, NULL}. */
POLYGRAD_API pg_api_status pg_tensor_shrink_sym(pg_tensor_t x, const int64_t* bounds,
                                                const pg_dim_t* dims, size_t naxes,
                                                pg_tensor_t* out);
/** pg_tensor_pad (with zeros) with amounts that may be bound variables, as
 *  pg_tensor_shrink_sym. */
POLYGRAD_API pg_api_status pg_tensor_pad_sym(pg_tensor_t x, const int64_t* pads,
                                             const pg_dim_t* dims, size_t naxes, pg_tensor_t* out);
POLYGRAD_API pg_api_status pg_tensor_getitem(pg_tensor_t x, const pg_index* index, size_t n,
                                             pg_tensor_t* out);
POLYGRAD_API pg_api_status pg_tensor_gather(pg_tensor_t x, int64_t dim, pg_tensor_t index,
                                            pg_tensor_t* out);
POLYGRAD_API pg_api_status pg_tensor_cat(const pg_tensor_t* tensors, size_t n, int64_t dim,
                                         pg_tensor_t* out);
POLYGRAD_API pg_api_status pg_tensor_stack(const pg_tensor_t* tensors, size_t n, int64_t dim,
                                           pg_tensor_t* out);
/* Splitting: the pieces go to out[0 .. *count); `capacity` is out's length. When it is too
 * small the call fails with PG_API_ERR_INVALID_ARGUMENT and *count says how many are needed. */
/** Pieces of `size` along dim (the last may be smaller). */
POLYGRAD_API pg_api_status pg_tensor_split(pg_tensor_t x, int64_t size, int64_t dim,
                                           pg_tensor_t* out, size_t capacity, size_t* count);
/** Pieces of the given sizes (they must add up to the axis size). */
POLYGRAD_API pg_api_status pg_tensor_split_sizes(pg_tensor_t x, const int64_t* sizes, size_t n,
                                                 int64_t dim, pg_tensor_t* out, size_t capacity,
                                                 size_t* count);
/** `n` pieces of ceil(size / n) (fewer when they run out). */
POLYGRAD_API pg_api_status pg_tensor_chunk(pg_tensor_t x, int64_t n, int64_t dim, pg_tensor_t* out,
                                           size_t capacity, size_t* count);

/* ---- linear algebra, nn ----------------------------------------------------------------- */

/** x @ weight.T + bias; bias may be NULL. */
POLYGRAD_API pg_api_status pg_tensor_linear(pg_tensor_t x, pg_tensor_t weight, pg_tensor_t bias,
                                            pg_tensor_t* out);
/** Normalises over `axes` (no affine parameters). */
POLYGRAD_API pg_api_status pg_tensor_layernorm(pg_tensor_t x, const int64_t* axes, size_t naxes,
                                               double eps, pg_tensor_t* out);
/** How a loss reduces its per-element values (torch's reduction=); passed as an int, so a
 *  value outside the enum is an error, not undefined behaviour. */
typedef enum pg_reduction {
  PG_REDUCTION_MEAN = 0,
  PG_REDUCTION_SUM = 1,
  PG_REDUCTION_NONE = 2
} pg_reduction;
/** Cross-entropy of logits x against class indices (int) or probabilities (float); class
 *  positions equal to ignore_index add 0 and are left out of the mean (torch uses -100). */
POLYGRAD_API pg_api_status pg_tensor_cross_entropy(pg_tensor_t x, pg_tensor_t target, int64_t axis,
                                                   double label_smoothing, int64_t ignore_index,
                                                   int reduction, pg_tensor_t* out);
/** Binary cross-entropy of probabilities x, and of logits x (pos_weight may be NULL). */
POLYGRAD_API pg_api_status pg_tensor_binary_crossentropy(pg_tensor_t x, pg_tensor_t target,
                                                         int reduction, pg_tensor_t* out);
POLYGRAD_API pg_api_status pg_tensor_binary_crossentropy_logits(pg_tensor_t x, pg_tensor_t target,
                                                                pg_tensor_t pos_weight,
                                                                int reduction, pg_tensor_t* out);
/** "ij,jk->ik" over n operands. */
POLYGRAD_API pg_api_status pg_tensor_einsum(const char* formula, const pg_tensor_t* operands,
                                            size_t n, pg_tensor_t* out);
/** einops rearrange; `names`/`sizes` (n of them, may be NULL when n is 0) size split groups. */
POLYGRAD_API pg_api_status pg_tensor_rearrange(pg_tensor_t x, const char* formula,
                                               const char* const* names, const int64_t* sizes,
                                               size_t n, pg_tensor_t* out);
/** NCHW conv; each of stride, dilation, padding is {h, w}; bias may be NULL. */
POLYGRAD_API pg_api_status pg_tensor_conv2d(pg_tensor_t x, pg_tensor_t weight, pg_tensor_t bias,
                                            int64_t groups, const int64_t stride[2],
                                            const int64_t dilation[2], const int64_t padding[2],
                                            pg_tensor_t* out);
/** stride NULL: the kernel size; ceil_mode and count_include_pad as torch's. */
POLYGRAD_API pg_api_status pg_tensor_max_pool2d(pg_tensor_t x, const int64_t kernel[2],
                                                const int64_t* stride, const int64_t dilation[2],
                                                const int64_t padding[2], int ceil_mode,
                                                pg_tensor_t* out);
POLYGRAD_API pg_api_status pg_tensor_avg_pool2d(pg_tensor_t x, const int64_t kernel[2],
                                                const int64_t* stride, const int64_t padding[2],
                                                int ceil_mode, int count_include_pad,
                                                pg_tensor_t* out);
/** softmax(q k^T / sqrt(d) + mask) v; mask may be NULL, and must be NULL when is_causal. */
POLYGRAD_API pg_api_status pg_tensor_scaled_dot_product_attention(pg_tensor_t q, pg_tensor_t k,
                                                                  pg_tensor_t v, pg_tensor_t mask,
                                                                  int is_causal, pg_tensor_t* out);

/* ---- autograd ------------------------------------------------------------------------- */

/** Turning it on realises the tensor (float tensors only). */
POLYGRAD_API pg_api_status pg_tensor_set_requires_grad(pg_tensor_t t, int on);
POLYGRAD_API pg_api_status pg_tensor_requires_grad(pg_tensor_t t, int* out);
/** The accumulated gradient: a new handle, or NULL when t has none. */
POLYGRAD_API pg_api_status pg_tensor_grad(pg_tensor_t t, pg_tensor_t* out);
/** Replaces t's gradient (NULL clears it). */
POLYGRAD_API pg_api_status pg_tensor_set_grad(pg_tensor_t t, pg_tensor_t grad);
/** Adds d(root)/d(t) to the grad of every live tensor t with requires_grad that root depends
 *  on. root_grad NULL means ones (root must then have one element). */
POLYGRAD_API pg_api_status pg_tensor_backward(pg_tensor_t root, pg_tensor_t root_grad);
/** d(root)/d(targets[i]) into out[i] (n handles) without touching any grad. root_grad as for
 *  pg_tensor_backward; a target the root does not depend on is an error. */
POLYGRAD_API pg_api_status pg_tensor_gradient(pg_tensor_t root, const pg_tensor_t* targets,
                                              size_t n, pg_tensor_t root_grad, pg_tensor_t* out);

/* ---- capture (core/capi/capture.cpp; polygrad/capture.hpp explains it) --------------- */

typedef struct pg_capture* pg_capture_t;

/** Starts recording this thread's realisations: until pg_capture_end they are scheduled and
 *  compiled but not run, and reading values back (to_host, item) fails. Captures do not nest. */
POLYGRAD_API pg_api_status pg_capture_begin(void);
/** Writes 1 to *out while this thread is recording (between pg_capture_begin and
 *  pg_capture_end), else 0: a frontend then leaves tensor values unread. */
POLYGRAD_API pg_api_status pg_capture_active(int* out);
/** Ends the recording and writes a new handle (free it with pg_capture_free); on an error (no
 *  capture open on this thread) *out is left as it was. A NULL out is an error that still ends
 *  the recording (the capture is discarded). */
POLYGRAD_API pg_api_status pg_capture_end(pg_capture_t* out);
/** Runs the recorded launches in order over the same memory and waits for them. */
POLYGRAD_API pg_api_status pg_capture_run(pg_capture_t c);
/** Runs it with replacements[i] (realised first; same shape, dtype and device) in place of
 *  inputs[i], a realised tensor the captured code read: new inputs without a copy. An input
 *  given twice takes one replacement (two different ones are an error). */
POLYGRAD_API pg_api_status pg_capture_run_with(pg_capture_t c, const pg_tensor_t* inputs,
                                               const pg_tensor_t* replacements, size_t n);
/** Kernel launches per run. */
POLYGRAD_API pg_api_status pg_capture_kernel_count(pg_capture_t c, size_t* out);
POLYGRAD_API void pg_capture_free(pg_capture_t c);

/* ---- devices and plugins (core/capi/device_api.cpp) ---------------------------------- */
/* Over the process-wide plugin registry. Each returns a string through *out that lives in
 * thread-local storage until this thread calls the same function again. */

/** Canonical names of every usable device, one per line ("cpu:0\n"). Runs discovery. */
POLYGRAD_API pg_api_status pg_device_list(const char** out);
/** The default device name: POLYGRAD_DEVICE, else the config's default_device, else "cpu". */
POLYGRAD_API pg_api_status pg_device_default(const char** out);
/** The canonical name of a device ("cpu" -> "cpu:0", "" -> the default's); INVALID_ARGUMENT
 *  names the available devices when `name` resolves to none. */
POLYGRAD_API pg_api_status pg_device_canonical(const char* name, const char** out);
/** The device's capability flags (pg_capability_flags of plugin.h: PG_CAP_HOST_MEMORY,
 *  PG_CAP_GROUPS...) through *out; "" is the default device. */
POLYGRAD_API pg_api_status pg_device_flags(const char* name, uint32_t* out);
/** The dtypes the device declares, as a mask through *out: bit d set for pg_dtype d (the
 *  capabilities' dtype_mask); "" is the default device. */
POLYGRAD_API pg_api_status pg_device_dtypes(const char* name, uint64_t* out);
/** Loads a plugin by name ("cpu_clang") or path (contains '/' or ends in ".so") and writes its
 *  plugin name; a plugin already loaded is not loaded again. A path to a polygrad_ccl_*.so
 *  loads a collective-communication plugin (for pg_comm_init). A refused load fails with
 *  PG_API_ERR_DEVICE and the load record (stage and reason) in pg_last_error(). */
POLYGRAD_API pg_api_status pg_plugin_load(const char* name_or_path, const char** out);
/** Every plugin load attempt so far: one line per attempt (json 0) or a JSON object (json 1). */
POLYGRAD_API pg_api_status pg_plugin_report(int json, const char** out);
/** Registers a plugin linked into the program: `entry` is its pg_plugin_entry_<name> (the
 *  plugin built with PG_PLUGIN_STATIC_NAME=<name>). Discovery considers it before any file; a
 *  registry that has already discovered loads it at once. Its load record (path
 *  "static:<name>") is in pg_plugin_report. Registering an entry twice is a no-op. */
POLYGRAD_API pg_api_status pg_plugin_register_static(pg_plugin_entry_fn entry);

/* ---- collective communication (core/capi/comm_api.cpp; polygrad/ccl.hpp) ------------- */

/** Opaque communicator handle: this process as one rank of a group. */
typedef struct pg_comm* pg_comm_t;

/** Joins a group as `rank` of `world_size` through the ccl plugin named `plugin` ("mpi": the
 *  file polygrad_ccl_mpi.so beside the device plugins). `address` (NULL or "" = the
 *  launcher's rendezvous, e.g. mpirun's) is the plugin's bootstrap address; a collective
 *  waits at most `timeout_seconds` for its peers (<= 0: the plugin's default). Collective:
 *  every rank calls it. INVALID_ARGUMENT names the loaded ccl plugins when none has that
 *  name, or says why the plugin cannot make a communicator in this process. */
POLYGRAD_API pg_api_status pg_comm_init(const char* plugin, int rank, int world_size,
                                        const char* address, double timeout_seconds,
                                        pg_comm_t* out);
/** Frees a handle; the plugin's communicator goes with the last one. NULL is ignored. */
POLYGRAD_API void pg_comm_free(pg_comm_t c);
/** This process' rank and the group's size, as the transport numbers them. */
POLYGRAD_API pg_api_status pg_comm_rank(pg_comm_t c, int* out);
POLYGRAD_API pg_api_status pg_comm_world_size(pg_comm_t c, int* out);
/** The transport the plugin runs on ("Open MPI v4.1.4"); lives as long as the handle. */
POLYGRAD_API pg_api_status pg_comm_transport(pg_comm_t c, const char** out);

/** Reductions of pg_comm_all_reduce and pg_comm_reduce_scatter (pg_ccl_reduce_op of ccl.h). */
typedef enum pg_comm_reduce PG_ENUM_INT {
  PG_COMM_SUM = 0, /**< element-wise sum over the ranks */
  PG_COMM_MAX = 1, /**< element-wise maximum */
  PG_COMM_MEAN = 2 /**< the sum over the world size (floating-point tensors only) */
} pg_comm_reduce;

/* Collectives: every rank calls them in the same order with tensors of the same shape and
 * dtype. Each realises x and writes a new tensor on x's device; x is not changed. A peer that
 * died or a timeout is PG_API_ERR_COMM, with a message that names the peer. */

/** x reduced over the ranks with `op` (a pg_comm_reduce), on every rank. */
POLYGRAD_API pg_api_status pg_comm_all_reduce(pg_comm_t c, pg_tensor_t x, int op, pg_tensor_t* out);
/** pg_comm_all_reduce into x's own buffer: x is realised, then overwritten with the reduced
 *  values, which every handle of x sees; nothing is allocated. Graphs built from x earlier and
 *  not yet realised read the new values (realise them first). */
POLYGRAD_API pg_api_status pg_comm_all_reduce_inplace(pg_comm_t c, pg_tensor_t x, int op);
/** Rank `root`'s x on every rank. */
POLYGRAD_API pg_api_status pg_comm_broadcast(pg_comm_t c, pg_tensor_t x, int root,
                                             pg_tensor_t* out);
/** The ranks' x stacked along a new leading axis of size world_size, in rank order. */
POLYGRAD_API pg_api_status pg_comm_all_gather(pg_comm_t c, pg_tensor_t x, pg_tensor_t* out);
/** Block `rank` of x (split into world_size equal blocks along axis 0) reduced over the
 *  ranks with `op`. */
POLYGRAD_API pg_api_status pg_comm_reduce_scatter(pg_comm_t c, pg_tensor_t x, int op,
                                                  pg_tensor_t* out);
/** Returns once every rank has called it. */
POLYGRAD_API pg_api_status pg_comm_barrier(pg_comm_t c);

/* ---- collectives across the devices of one process (polygrad/device_collectives.hpp) -- */

/** How pg_all_reduce_devices moves the data. */
typedef enum pg_device_reduce PG_ENUM_INT {
  PG_DEVICE_REDUCE_AUTO = 0,  /**< the ring from ring_bytes up, else naive */
  PG_DEVICE_REDUCE_NAIVE = 1, /**< everything to the first device, the result back */
  PG_DEVICE_REDUCE_RING = 2   /**< reduce-scatter then all-gather around the devices */
} pg_device_reduce;

/** tensors[0..n) (one per device, of any plugins, all of one shape and dtype) reduced with `op`
 *  (a pg_comm_reduce; mean: floating point only) without any ccl plugin: out[i] is a new
 *  realised tensor on tensors[i]'s device. The inputs are not written. `algorithm` is a
 *  pg_device_reduce; ring_bytes 0 means the default (1 MiB). */
POLYGRAD_API pg_api_status pg_all_reduce_devices(const pg_tensor_t* tensors, size_t n, int op,
                                                 int algorithm, uint64_t ring_bytes,
                                                 pg_tensor_t* out);

/* ---- safetensors checkpoints (core/capi/safetensors.cpp) ----------------------------- */
/* A pg_safetensors_t is an opened checkpoint: one .safetensors file, or the shards a
 * model.safetensors.index.json names. Files are memory-mapped and checked in full when opened:
 * the header length (at most 100 MB, inside the file), UTF-8 and JSON of the header, each
 * tensor's dtype, shape and data_offsets (inside the data, not overlapping, their size
 * numel * itemsize). Every error names the file and, where one is at fault, the tensor or
 * metadata key, e.g. "pg_safetensors_open: /m/x.safetensors: truncated: the header length 96
 * runs past the end of the file (40 bytes)". Strings written through out parameters live as
 * long as the handle. */

typedef struct pg_safetensors* pg_safetensors_t;

/** Opens the safetensors file at `path` and writes a new handle (free it with
 *  pg_safetensors_free). */
POLYGRAD_API pg_api_status pg_safetensors_open(const char* path, pg_safetensors_t* out);
/** Opens a sharded checkpoint through its index (model.safetensors.index.json): its
 *  "weight_map" maps each tensor name to a shard file in the index's folder. Every shard is
 *  opened and checked, and each mapped tensor must be in its shard. The entries are the
 *  weight_map's, in its order; the metadata is the index's "metadata" object (a value that
 *  is not a string written as JSON text, e.g. "total_size" -> "1234"). */
POLYGRAD_API pg_api_status pg_safetensors_open_index(const char* index_path, pg_safetensors_t* out);
/** Frees a handle and unmaps its files (tensors made from it hold copies). NULL is ignored. */
POLYGRAD_API void pg_safetensors_free(pg_safetensors_t f);
/** The number of tensors. */
POLYGRAD_API pg_api_status pg_safetensors_count(pg_safetensors_t f, size_t* out);
/** Tensor `i` (in the header's order): each output may be NULL. `name`; `dtype_name` as the
 *  file spells it ("F32", "BF16", "F8_E4M3"); `dtype`, polygrad's, or PG_DTYPE_VOID for one it
 *  has none of (the 8-bit floats: listed, not loadable); `ndim`, the rank. An i past the end
 *  is PG_API_ERR_INDEX. */
POLYGRAD_API pg_api_status pg_safetensors_entry(pg_safetensors_t f, size_t i, const char** name,
                                                const char** dtype_name, pg_dtype* dtype,
                                                size_t* ndim);
/** Tensor i's shape: min(ndim, capacity) sizes to `dims` (may be NULL when capacity is 0) and
 *  the rank to `ndim`, as pg_tensor_shape. */
POLYGRAD_API pg_api_status pg_safetensors_shape(pg_safetensors_t f, size_t i, int64_t* dims,
                                                size_t capacity, size_t* ndim);
/** Tensor i's data_offsets, from the start of its file's data section; `file` (may be NULL)
 *  is the path of the file that holds it (a shard, for an index). */
POLYGRAD_API pg_api_status pg_safetensors_location(pg_safetensors_t f, size_t i, uint64_t* begin,
                                                   uint64_t* end, const char** file);
/** The position of the tensor called `name` through *out; INVALID_ARGUMENT naming the file
 *  and the key when there is none. */
POLYGRAD_API pg_api_status pg_safetensors_find(pg_safetensors_t f, const char* name, size_t* out);
/** A new tensor on `device` holding the values of the tensor called `name`, copied from the
 *  map: as stored (dtype PG_DTYPE_VOID) or converted to `dtype` (F16 and BF16 to float32
 *  exactly on the host; other conversions as pg_tensor_cast). */
POLYGRAD_API pg_api_status pg_safetensors_tensor(pg_safetensors_t f, const char* name,
                                                 pg_dtype dtype, const char* device,
                                                 pg_tensor_t* out);
/** The number of metadata entries (the file's __metadata__, or the index's "metadata"). */
POLYGRAD_API pg_api_status pg_safetensors_metadata_count(pg_safetensors_t f, size_t* out);
/** Metadata entry i, in the file's order: key and value (each output may be NULL). */
POLYGRAD_API pg_api_status pg_safetensors_metadata(pg_safetensors_t f, size_t i, const char** key,
                                                   const char** value);
/** Writes n tensors (names[i] -> tensors[i], realised and copied to the host) and nmeta
 *  metadata strings (metadata_keys[i] -> metadata_values[i]; both may be NULL when nmeta is
 *  0) to a safetensors file at `path`, in the given order, the header padded to 8 bytes. The
 *  file is written beside `path` and renamed over it, so a failure leaves no partial file. A
 *  name given twice, "__metadata__" as a tensor name, or a string that is not UTF-8 is
 *  INVALID_ARGUMENT. */
POLYGRAD_API pg_api_status pg_safetensors_save(const char* path, const char* const* names,
                                               const pg_tensor_t* tensors, size_t n,
                                               const char* const* metadata_keys,
                                               const char* const* metadata_values, size_t nmeta);

/* ---- GPT-2 (core/capi/gpt2.cpp) ------------------------------------------------------ */
/* A pg_gpt2_t is a loaded GPT-2 (the Hub's model_type "gpt2") with room for max_batch
 * sequences of max_seq_len tokens, and its KV cache. Weights are float32 (F16 and BF16
 * checkpoints widened once when loaded). Errors name the file and the key, e.g.
 * "pg_gpt2_load: /m/model.safetensors: tensor 'h.0.attn.c_attn.weight' has shape (4, 4),
 * GPT-2 needs (8, 24)". Token ids may be int or float tensors holding whole numbers. */

typedef struct pg_gpt2* pg_gpt2_t;

/** Loads the model folder `path` as the Hub stores it: config.json, and model.safetensors or
 *  the shards model.safetensors.index.json names (F32, F16, BF16). Keys may carry the
 *  "transformer." prefix; the causal-mask buffers "h.N.attn.bias" and "h.N.attn.masked_bias"
 *  are ignored; without "lm_head.weight" the logits are tied to "wte.weight". max_seq_len 0
 *  means the config's n_positions. `device` NULL is the default device. Free with
 *  pg_gpt2_free. Errors: no config.json, an unsupported model_type (named), a truncated file,
 *  a missing or misshapen tensor (file and key named). */
POLYGRAD_API pg_api_status pg_gpt2_load(const char* path, int64_t max_batch, int64_t max_seq_len,
                                        const char* device, pg_gpt2_t* out);
/** The same from memory: config.json's `config_size` bytes and `nfiles` safetensors files
 *  (files[i], sizes[i] bytes; shards are merged by tensor name). The bytes are read during the
 *  call only. */
POLYGRAD_API pg_api_status pg_gpt2_load_bytes(const char* config_json, size_t config_size,
                                              const uint8_t* const* files, const size_t* sizes,
                                              size_t nfiles, int64_t max_batch, int64_t max_seq_len,
                                              const char* device, pg_gpt2_t* out);
/** Frees a model and its cache (tensors it returned stay valid). NULL is ignored. */
POLYGRAD_API void pg_gpt2_free(pg_gpt2_t m);
/** The sizes, in this order: vocab_size, n_positions, n_embd, n_layer, n_head, n_inner,
 *  max_batch, max_seq_len. min(8, capacity) of them go to `values` (may be NULL when capacity
 *  is 0); *count (may be NULL) gets 8. */
POLYGRAD_API pg_api_status pg_gpt2_config(pg_gpt2_t m, int64_t* values, size_t capacity,
                                          size_t* count);
/** A new lazy tensor: the logits (B, T, vocab_size) of `tokens` (B, T) at `positions` (B, T;
 *  NULL: 0..T-1), with B <= max_batch and T <= max_seq_len. The cache is not touched. */
POLYGRAD_API pg_api_status pg_gpt2_forward(pg_gpt2_t m, pg_tensor_t tokens, pg_tensor_t positions,
                                           pg_tensor_t* logits);
/** Starts a sequence in the KV cache: runs the prompt `tokens` (B, T), fills cache rows
 *  [0, T) and writes the last position's logits (B, vocab_size), realised, to *logits. */
POLYGRAD_API pg_api_status pg_gpt2_prefill(pg_gpt2_t m, pg_tensor_t tokens, pg_tensor_t* logits);
/** One decoding step: `tokens` (B, 1) at the next position p writes cache row p, attends over
 *  rows [0, p + 1) and gives logits (B, vocab_size), realised. INVALID_ARGUMENT before a
 *  prefill, for another B, or once p reaches max_seq_len. */
POLYGRAD_API pg_api_status pg_gpt2_step(pg_gpt2_t m, pg_tensor_t tokens, pg_tensor_t* logits);
/** The next position pg_gpt2_step writes (the tokens cached so far). */
POLYGRAD_API pg_api_status pg_gpt2_position(pg_gpt2_t m, int64_t* out);

/* ---- GPT-2 tokenizer (core/capi/tokenizer.cpp) ------------------------------------------ */
/* GPT-2's byte-level BPE from vocab.json and merges.txt. Text is UTF-8; ids are int64. */

typedef struct pg_tokenizer* pg_tokenizer_t;

/** Reads vocab.json and merges.txt; errors name the file and the line or key at fault. Free
 *  with pg_tokenizer_free. */
POLYGRAD_API pg_api_status pg_tokenizer_load(const char* vocab_path, const char* merges_path,
                                             pg_tokenizer_t* out);
/** The same from the two files' contents. */
POLYGRAD_API pg_api_status pg_tokenizer_load_bytes(const char* vocab_json, size_t vocab_size,
                                                   const char* merges_txt, size_t merges_size,
                                                   pg_tokenizer_t* out);
/** Frees a tokenizer. NULL is ignored. */
POLYGRAD_API void pg_tokenizer_free(pg_tokenizer_t t);
/** The ids of `size` bytes of text: min(count, capacity) of them to `ids` (may be NULL when
 *  capacity is 0), their number to *count (call again with a larger buffer when it exceeds
 *  capacity). A symbol missing from the vocabulary is INVALID_ARGUMENT naming it. */
POLYGRAD_API pg_api_status pg_tokenizer_encode(pg_tokenizer_t t, const char* text, size_t size,
                                               int64_t* ids, size_t capacity, size_t* count);
/** The bytes `n` ids stand for: min(size, capacity) of them to `text` (not NUL-terminated;
 *  may be NULL when capacity is 0), their number to *size. An unknown id is INVALID_ARGUMENT
 *  naming it. */
POLYGRAD_API pg_api_status pg_tokenizer_decode(pg_tokenizer_t t, const int64_t* ids, size_t n,
                                               char* text, size_t capacity, size_t* size);
/** One more than the largest id of the vocabulary. */
POLYGRAD_API pg_api_status pg_tokenizer_vocab_size(pg_tokenizer_t t, int64_t* out);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* POLYGRAD_POLYGRAD_H */
