// Tensor construction: from host data, constant fills, ranges, identity and random tensors.
#include "runtime/capture.hpp"
#include "runtime/runtime.hpp"
#include "tensor/tensor_impl.hpp"

#include <atomic>
#include <cmath>
#include <cstdio>
#include <functional>

namespace polygrad {

using detail::make;

namespace {

// An empty shape means 1-d of the data's size (Tensor::scalar makes a 0-d tensor).
lazy::Shape data_shape(const char* op, size_t count, Tensor::Shape shape) {
  if (shape.empty()) shape = {static_cast<int64_t>(count)};
  for (int64_t d : shape)
    if (d < 0) user_error(std::string(op) + ": negative size in shape " + lazy::shape_str(shape));
  if (lazy::numel(shape) != static_cast<int64_t>(count))
    user_error(std::string(op) + ": " + std::to_string(count) + " values do not fill shape " +
               lazy::shape_str(shape));
  return shape;
}

void check_shape(const char* op, const Tensor::Shape& shape) {
  detail::checked_numel(op, shape);
}

/// Host values are made one by one: more than this many is no request a host can meet.
constexpr int64_t kMaxHostValues = int64_t{1} << 40;

/// `n` host values for `op`, or a user error when they are more than a host holds.
size_t host_count(const char* op, double n) {
  if (!(n <= static_cast<double>(kMaxHostValues))) {  // (NaN too)
    char count[32];
    std::snprintf(count, sizeof count, "%.3g", n);
    user_error(std::string(op) + ": " + count + " elements are more than host memory holds");
  }
  return static_cast<size_t>(n);
}

Tensor host_tensor(const void* data, pg_dtype dtype, const lazy::Shape& shape,
                   const std::string& device) {
  std::string d = runtime::canonical_device(device);
  if (dtype == PG_DTYPE_BOOL && data != nullptr) {
    // A bool is the byte 0 or 1 to the kernels (a byte 2 read back as 2 and its logical_not
    // as 3): any other host byte (a uint8 buffer passed as bool) is true, as numpy reads it.
    const auto* p = static_cast<const unsigned char*>(data);
    UOpRef node = runtime::from_host_fill(d, DType(dtype), shape,
                                          [p](void* out, int64_t first, int64_t count) {
                                            auto* b = static_cast<unsigned char*>(out);
                                            for (int64_t i = 0; i < count; ++i)
                                              b[i] = p[first + i] != 0 ? 1 : 0;
                                          });
    return make(node, shape, d);
  }
  return make(runtime::from_host(d, DType(dtype), shape, data), shape, d);
}

// The dtype host values of `dtype` are packed as: there is no host half type, so 16-bit floats
// go through float32 and a cast.
pg_dtype host_dtype(pg_dtype dtype) {
  return dtype == PG_DTYPE_FLOAT16 || dtype == PG_DTYPE_BFLOAT16 ? PG_DTYPE_FLOAT32 : dtype;
}

// The host tensor of `v` packed as host_dtype(dtype), before any cast to dtype.
Tensor host_values(const std::vector<double>& v, pg_dtype dtype, const lazy::Shape& shape,
                   const std::string& device) {
  std::vector<unsigned char> bytes = detail::pack(v, DType(host_dtype(dtype)));
  return host_tensor(bytes.data(), host_dtype(dtype), shape, device);
}

Tensor from_doubles(const std::vector<double>& v, pg_dtype dtype, const lazy::Shape& shape,
                    const std::string& device) {
  Tensor t = host_values(v, dtype, shape, device);
  return host_dtype(dtype) == dtype ? t : t.cast(dtype);
}

// Counter-based generator: value i of a draw is splitmix64(seed, counter + i).
std::atomic<uint64_t> g_seed{0};
std::atomic<uint64_t> g_counter{0};

uint64_t splitmix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

std::vector<uint64_t> random_bits(int64_t n) {
  const uint64_t seed = g_seed.load();
  const uint64_t start = g_counter.fetch_add(static_cast<uint64_t>(n));
  std::vector<uint64_t> out(static_cast<size_t>(n));
  const uint64_t key = splitmix64(seed ^ 0x5851F42D4C957F2Dull);
  for (int64_t i = 0; i < n; ++i) out[static_cast<size_t>(i)] = splitmix64(key + start + i);
  return out;
}

double unit(uint64_t bits) {  // [0, 1) with 53 random bits
  return static_cast<double>(bits >> 11) * 0x1.0p-53;
}

// A random tensor of draw()'s values. While capturing, the capture draws again before each run,
// so every run of a recording sees fresh values, as the same code run eagerly would.
Tensor drawn(const char* op, std::function<std::vector<double>()> draw, pg_dtype dtype,
             const lazy::Shape& shape, const std::string& device) {
  detail::check_dtype(op, dtype);
  host_count(op, static_cast<double>(lazy::numel(shape)));
  Tensor t = host_values(draw(), dtype, shape, device);
  if (runtime::capturing() && lazy::numel(shape) > 0) {
    const UOp* buffer = lazy::realized_buffer(detail::node(t, op).get());
    const DType host(host_dtype(dtype));
    runtime::record_refill(buffer, [draw, host] { return detail::pack(draw(), host); });
  }
  return host_dtype(dtype) == dtype ? t : t.cast(dtype);
}

}  // namespace

#define POLYGRAD_TENSOR_FROM_VECTOR(T)                                                 \
  Tensor::Tensor(const std::vector<T>& data, Shape shape, const std::string& device) { \
    lazy::Shape s = data_shape("tensor", data.size(), std::move(shape));               \
    *this = host_tensor(data.data(), dtype_of<T>(), s, device);                        \
  }
POLYGRAD_TENSOR_FROM_VECTOR(float)
POLYGRAD_TENSOR_FROM_VECTOR(double)
POLYGRAD_TENSOR_FROM_VECTOR(int32_t)
POLYGRAD_TENSOR_FROM_VECTOR(int64_t)
POLYGRAD_TENSOR_FROM_VECTOR(uint8_t)
#undef POLYGRAD_TENSOR_FROM_VECTOR

Tensor::Tensor(const std::vector<bool>& data, Shape shape, const std::string& device) {
  lazy::Shape s = data_shape("tensor", data.size(), std::move(shape));
  std::vector<uint8_t> bytes(data.begin(), data.end());
  *this = host_tensor(bytes.data(), PG_DTYPE_BOOL, s, device);
}

Tensor Tensor::scalar(double value, pg_dtype dtype, const std::string& device) {
  return from_doubles({value}, detail::check_dtype("scalar", dtype), {}, device);
}

Tensor Tensor::from_host(const void* data, pg_dtype dtype, const Shape& shape,
                         const std::string& device) {
  check_shape("from_host", shape);
  return host_tensor(data, detail::check_dtype("from_host", dtype), shape, device);
}

Tensor Tensor::from_host_memory(void* data, pg_dtype dtype, const Shape& shape,
                                std::function<void()> release, const std::string& device,
                                bool* shared) {
  runtime::ReleaseOnce guard(std::move(release));  // runs it if a check below throws
  check_shape("from_host_memory", shape);
  detail::check_dtype("from_host_memory", dtype);
  if (data == nullptr && lazy::numel(shape) > 0) user_error("from_host_memory: data is NULL");
  const std::string d = runtime::canonical_device(device);
  bool wrapped = false;
  UOpRef node = runtime::from_host_memory(d, DType(dtype), shape, data, guard.take(), &wrapped);
  if (shared != nullptr) *shared = wrapped;
  return make(node, shape, d);
}

Tensor Tensor::full(const Shape& shape, Scalar value, std::optional<pg_dtype> dtype,
                    const std::string& device) {
  check_shape("full", shape);
  if (!dtype)
    dtype = value.is_bool  ? PG_DTYPE_BOOL
            : value.is_int ? detail::int_scalar_dtype(value).scalar()
                           : PG_DTYPE_FLOAT32;
  const DType t(detail::check_dtype("full", *dtype));
  // A float value truncates into an int dtype, as torch's; one whose truncation the dtype
  // cannot hold (NaN, inf, 1e20 for int32) is an error, as in torch, not an arbitrary value.
  if (!value.is_int && t.is_int()) {
    const double v = std::trunc(value.value);  // (NaN stays NaN and fails both tests)
    const double hi =
        t.scalar() == PG_DTYPE_UINT64 ? 0x1p64 : static_cast<double>(t.int_max()) + 1.0;
    if (!(v >= static_cast<double>(t.int_min()) && v < hi)) {
      char text[32];
      std::snprintf(text, sizeof text, "%g", value.value);
      user_error(std::string("full: value ") + text + " does not fit dtype " + t.name());
    }
  }
  return detail::constant(value, t, shape, runtime::canonical_device(device));
}
Tensor Tensor::zeros(const Shape& shape, pg_dtype dtype, const std::string& device) {
  return full(shape, 0.0, dtype, device);
}
Tensor Tensor::ones(const Shape& shape, pg_dtype dtype, const std::string& device) {
  return full(shape, 1.0, dtype, device);
}
Tensor Tensor::empty(const Shape& shape, pg_dtype dtype, const std::string& device) {
  check_shape("empty", shape);
  detail::check_dtype("empty", dtype);
  std::string d = runtime::canonical_device(device);
  UOpRef buf = runtime::new_buffer(d, DType(dtype), lazy::numel(shape));
  return make(lazy::reshape(buf, shape), shape, d);
}
Tensor Tensor::zeros_like(const Tensor& like) {
  return full(like.shape(), 0.0, like.dtype(), like.device());
}
Tensor Tensor::ones_like(const Tensor& like) {
  return full(like.shape(), 1.0, like.dtype(), like.device());
}
Tensor Tensor::full_like(const Tensor& like, Scalar value) {
  return full(like.shape(), value, like.dtype(), like.device());
}

void Tensor::manual_seed(uint64_t seed) {
  g_seed.store(seed);
  g_counter.store(0);
}

Tensor Tensor::rand(const Shape& shape, pg_dtype dtype, const std::string& device) {
  check_shape("rand", shape);
  if (!DType(detail::check_dtype("rand", dtype)).is_float())
    user_error("rand: dtype " + DType(dtype).name() + " is not a float type (torch's rule)");
  const int64_t n = lazy::numel(shape);
  // As many random bits as the dtype's significand holds (float16 11, bfloat16 8, otherwise
  // float32's 24), so that no value rounds up to 1 in the dtype: [0, 1) as torch's.
  const int bits_kept = dtype == PG_DTYPE_FLOAT16 ? 11 : dtype == PG_DTYPE_BFLOAT16 ? 8 : 24;
  auto draw = [n, bits_kept] {
    std::vector<uint64_t> bits = random_bits(n);
    std::vector<double> v(bits.size());
    const double scale = std::ldexp(1.0, -bits_kept);
    for (size_t i = 0; i < v.size(); ++i)
      v[i] = static_cast<double>(bits[i] >> (64 - bits_kept)) * scale;
    return v;
  };
  return drawn("rand", draw, dtype, shape, device);
}

Tensor Tensor::randn(const Shape& shape, pg_dtype dtype, const std::string& device) {
  check_shape("randn", shape);
  if (!DType(detail::check_dtype("randn", dtype)).is_float())
    user_error("randn: dtype " + DType(dtype).name() + " is not a float type (torch's rule)");
  const int64_t n = lazy::numel(shape);
  auto draw = [n] {
    std::vector<uint64_t> bits = random_bits(2 * n);
    std::vector<double> v(static_cast<size_t>(n));
    for (size_t i = 0; i < v.size(); ++i) {
      double u1 = 1.0 - unit(bits[2 * i]);  // (0, 1]
      double u2 = unit(bits[2 * i + 1]);
      v[i] = std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
    }
    return v;
  };
  return drawn("randn", draw, dtype, shape, device);
}

Tensor Tensor::randint(int64_t low, int64_t high, const Shape& shape, pg_dtype dtype,
                       const std::string& device) {
  check_shape("randint", shape);
  if (high <= low)
    user_error("randint: high (" + std::to_string(high) + ") must exceed low (" +
               std::to_string(low) + ")");
  const DType t(detail::check_dtype("randint", dtype));
  if (t.is_int() && (low < t.int_min() || high - 1 > t.int_max()))
    user_error("randint: [" + std::to_string(low) + ", " + std::to_string(high) +
               ") does not fit " + t.name());
  const int64_t n = lazy::numel(shape);
  auto draw = [n, low, high] {
    std::vector<uint64_t> bits = random_bits(n);
    const uint64_t span = static_cast<uint64_t>(high) - static_cast<uint64_t>(low);
    std::vector<double> v(bits.size());
    for (size_t i = 0; i < v.size(); ++i)
      v[i] = static_cast<double>(low + static_cast<int64_t>(bits[i] % span));
    return v;
  };
  return drawn("randint", draw, dtype, shape, device);
}

Tensor Tensor::rand_like(const Tensor& like) {
  return rand(like.shape(), like.dtype(), like.device());
}
Tensor Tensor::randn_like(const Tensor& like) {
  return randn(like.shape(), like.dtype(), like.device());
}

Tensor Tensor::arange(int64_t stop, const std::string& device) {
  return arange(0, static_cast<double>(stop), 1, PG_DTYPE_INT32, device);
}

Tensor Tensor::arange(double start, double stop, double step, std::optional<pg_dtype> dtype,
                      const std::string& device) {
  if (step == 0) user_error("arange: step must not be zero");
  if (dtype) detail::check_dtype("arange", *dtype);
  const bool whole =
      start == std::trunc(start) && stop == std::trunc(stop) && step == std::trunc(step);
  const pg_dtype dt = dtype ? *dtype : whole ? PG_DTYPE_INT32 : PG_DTYPE_FLOAT32;
  if (!std::isfinite(start) || !std::isfinite(stop) || !std::isfinite(step))
    user_error("arange: start, stop and step must be finite");
  if (!whole && DType(dt).is_int()) {
    // torch's: start and step are truncated (a step that truncates to 0 is an error) and the
    // values start + i * step wrap into the dtype; the count is ceil((stop - start) / step) of
    // the numbers as given, but for int64 of the truncated ones. (arange(0, 5, 1.5) was 0, 1.5,
    // 3, 4.5 truncated, [0, 1, 3, 4]; torch's int32 is [0, 1, 2, 3], its int64 [0, 1, 2, 3, 4].)
    const double count = dt == PG_DTYPE_INT64
                             ? std::ceil((std::trunc(stop) - std::trunc(start)) / std::trunc(step))
                             : std::ceil((stop - start) / step);
    start = std::trunc(start);
    step = std::trunc(step);
    if (step == 0)
      user_error("arange: step truncates to zero in integer dtype " + DType(dt).name());
    return arange(start, start + std::max(0.0, count) * step, step, dt, device);
  }
  const auto n =
      static_cast<int64_t>(host_count("arange", std::max(0.0, std::ceil((stop - start) / step))));
  std::vector<double> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = start + static_cast<double>(i) * step;
  return from_doubles(v, dt, {n}, device);
}

Tensor Tensor::arange_int(int64_t start, int64_t stop, int64_t step, pg_dtype dtype,
                          const std::string& device) {
  if (step == 0) user_error("arange: step must not be zero");
  if (!DType(detail::check_dtype("arange_int", dtype)).is_int())
    user_error("arange_int: dtype " + DType(dtype).name() + " is not an integer type");
  std::vector<int64_t> v;
  for (__int128 x = start; step > 0 ? x < stop : x > stop; x += step)
    v.push_back(static_cast<int64_t>(x));
  const auto n = static_cast<int64_t>(v.size());
  Tensor t = host_tensor(v.data(), PG_DTYPE_INT64, {n}, runtime::canonical_device(device));
  return dtype == PG_DTYPE_INT64 ? t : t.cast(dtype);
}

Tensor Tensor::linspace(double start, double stop, int64_t steps, pg_dtype dtype,
                        const std::string& device) {
  if (steps < 0) user_error("linspace: steps must be non-negative, got " + std::to_string(steps));
  detail::check_dtype("linspace", dtype);
  std::vector<double> v(host_count("linspace", static_cast<double>(steps)));
  for (int64_t i = 0; i < steps; ++i)
    v[static_cast<size_t>(i)] =
        steps == 1 ? start : start + (stop - start) * static_cast<double>(i) / (steps - 1);
  return from_doubles(v, dtype, {steps}, device);
}

Tensor Tensor::eye(int64_t n, int64_t m, pg_dtype dtype, const std::string& device) {
  if (m < 0) m = n;
  if (n < 0) user_error("eye: negative size " + std::to_string(n));
  detail::check_dtype("eye", dtype);
  std::vector<double> v(host_count("eye", static_cast<double>(n) * static_cast<double>(m)), 0.0);
  for (int64_t i = 0; i < std::min(n, m); ++i) v[static_cast<size_t>(i * m + i)] = 1.0;
  return from_doubles(v, dtype, {n, m}, device);
}

}  // namespace polygrad
