// C API: construction, properties, realisation and host transfer.
#include "capi/support.hpp"
#include "runtime/runtime.hpp"

#include <cstring>
#include <functional>

using namespace polygrad;
using capi::guard;

pg_api_status pg_tensor_from_data(const void* data, pg_dtype dtype, const int64_t* dims,
                                  size_t ndim, const char* device, pg_tensor_t* out) {
  return guard("pg_tensor_from_data", [&] {
    if (!data) user_error("argument 'data' is NULL");
    capi::check_out(out, "out");
    capi::put(out, Tensor::from_host(data, dtype, capi::ints(dims, ndim, "dims"),
                                     capi::device_arg(device)));
  });
}

pg_api_status pg_tensor_from_host_memory(void* data, pg_dtype dtype, const int64_t* dims,
                                         size_t ndim, const char* device,
                                         void (*release)(void* context), void* context, int* shared,
                                         pg_tensor_t* out) {
  return guard("pg_tensor_from_host_memory", [&] {
    // Runs `release` if a check below throws.
    runtime::ReleaseOnce guard(release == nullptr ? std::function<void()>()
                                                  : [release, context] { release(context); });
    if (!data) user_error("argument 'data' is NULL");
    capi::check_out(out, "out");
    const Tensor::Shape shape = capi::ints(dims, ndim, "dims");
    const std::string dev = capi::device_arg(device);
    bool wrapped = false;
    capi::put(out, Tensor::from_host_memory(data, dtype, shape, guard.take(), dev, &wrapped));
    if (shared != nullptr) *shared = wrapped ? 1 : 0;
  });
}

pg_api_status pg_tensor_scalar(double value, pg_dtype dtype, const char* device, pg_tensor_t* out) {
  return guard("pg_tensor_scalar", [&] {
    capi::check_out(out, "out");
    capi::put(out, Tensor::scalar(value, dtype, capi::device_arg(device)));
  });
}

#define PG_X(name)                                                                              \
  pg_api_status pg_tensor_##name(const int64_t* dims, size_t ndim, pg_dtype dtype,              \
                                 const char* device, pg_tensor_t* out) {                        \
    return guard("pg_tensor_" #name, [&] {                                                      \
      capi::check_out(out, "out");                                                              \
      capi::put(out,                                                                            \
                Tensor::name(capi::ints(dims, ndim, "dims"), dtype, capi::device_arg(device))); \
    });                                                                                         \
  }
PG_TENSOR_FILL_OPS(PG_X)
#undef PG_X

namespace {
// PG_DTYPE_VOID: no dtype, so Tensor::full takes the value's own.
std::optional<pg_dtype> fill_dtype(pg_dtype dtype) {
  return dtype == PG_DTYPE_VOID ? std::nullopt : std::optional<pg_dtype>(dtype);
}
}  // namespace

pg_api_status pg_tensor_full(const int64_t* dims, size_t ndim, double value, pg_dtype dtype,
                             const char* device, pg_tensor_t* out) {
  return guard("pg_tensor_full", [&] {
    capi::check_out(out, "out");
    capi::put(out, Tensor::full(capi::ints(dims, ndim, "dims"), value, fill_dtype(dtype),
                                capi::device_arg(device)));
  });
}

pg_api_status pg_tensor_full_int(const int64_t* dims, size_t ndim, int64_t value, pg_dtype dtype,
                                 const char* device, pg_tensor_t* out) {
  return guard("pg_tensor_full_int", [&] {
    capi::check_out(out, "out");
    capi::put(out, Tensor::full(capi::ints(dims, ndim, "dims"), static_cast<long long>(value),
                                fill_dtype(dtype), capi::device_arg(device)));
  });
}

pg_api_status pg_tensor_randint(int64_t low, int64_t high, const int64_t* dims, size_t ndim,
                                pg_dtype dtype, const char* device, pg_tensor_t* out) {
  return guard("pg_tensor_randint", [&] {
    capi::check_out(out, "out");
    capi::put(out, Tensor::randint(low, high, capi::ints(dims, ndim, "dims"), dtype,
                                   capi::device_arg(device)));
  });
}

pg_api_status pg_tensor_arange(double start, double stop, double step, pg_dtype dtype,
                               const char* device, pg_tensor_t* out) {
  return guard("pg_tensor_arange", [&] {
    capi::check_out(out, "out");
    std::optional<pg_dtype> t;
    if (dtype != PG_DTYPE_VOID) t = dtype;
    capi::put(out, Tensor::arange(start, stop, step, t, capi::device_arg(device)));
  });
}

pg_api_status pg_tensor_arange_int(int64_t start, int64_t stop, int64_t step, pg_dtype dtype,
                                   const char* device, pg_tensor_t* out) {
  return guard("pg_tensor_arange_int", [&] {
    capi::check_out(out, "out");
    capi::put(out, Tensor::arange_int(start, stop, step, dtype, capi::device_arg(device)));
  });
}

pg_api_status pg_tensor_linspace(double start, double stop, int64_t steps, pg_dtype dtype,
                                 const char* device, pg_tensor_t* out) {
  return guard("pg_tensor_linspace", [&] {
    capi::check_out(out, "out");
    capi::put(out, Tensor::linspace(start, stop, steps, dtype, capi::device_arg(device)));
  });
}

pg_api_status pg_tensor_eye(int64_t n, int64_t m, pg_dtype dtype, const char* device,
                            pg_tensor_t* out) {
  return guard("pg_tensor_eye", [&] {
    capi::check_out(out, "out");
    capi::put(out, Tensor::eye(n, m, dtype, capi::device_arg(device)));
  });
}

pg_api_status pg_tensor_full_like(pg_tensor_t like, double value, pg_tensor_t* out) {
  return guard("pg_tensor_full_like",
               [&] { capi::put(out, Tensor::full_like(capi::arg(like, "like"), value)); });
}

// ---- properties -------------------------------------------------------------------------

pg_api_status pg_tensor_shape(pg_tensor_t t, int64_t* dims, size_t capacity, size_t* ndim) {
  return guard("pg_tensor_shape", [&] {
    const Tensor& x = capi::arg(t, "t");
    capi::check_out(ndim, "ndim");
    if (capacity > 0) capi::check_out(dims, "dims");
    const Tensor::Shape& s = x.shape();
    for (size_t i = 0; i < s.size() && i < capacity; ++i) dims[i] = s[i];
    *ndim = s.size();
  });
}

// One getter per property: pg_tensor_<name>(t, &out) = t.<method>() converted to <type>.
#define PG_GETTER(name, type, expr)                          \
  pg_api_status pg_tensor_##name(pg_tensor_t t, type* out) { \
    return guard("pg_tensor_" #name, [&] {                   \
      const Tensor& x = capi::arg(t, "t");                   \
      capi::check_out(out, "out");                           \
      *out = expr;                                           \
    });                                                      \
  }
PG_GETTER(ndim, size_t, static_cast<size_t>(x.ndim()))
PG_GETTER(dtype, pg_dtype, x.dtype())
PG_GETTER(device, const char*, x.device().c_str())
PG_GETTER(numel, int64_t, x.numel())
PG_GETTER(element_size, int64_t, x.element_size())
PG_GETTER(is_realized, int, x.is_realized() ? 1 : 0)
PG_GETTER(requires_grad, int, x.requires_grad() ? 1 : 0)
PG_GETTER(item, double, x.item<double>())
PG_GETTER(item_int64, int64_t, x.item<int64_t>())
#undef PG_GETTER

pg_api_status pg_tensor_size(pg_tensor_t t, int64_t dim, int64_t* out) {
  return guard("pg_tensor_size", [&] {
    const Tensor& x = capi::arg(t, "t");
    capi::check_out(out, "out");
    *out = x.size(dim);
  });
}

// ---- realisation and transfer -------------------------------------------------------------

pg_api_status pg_tensor_realize(pg_tensor_t t) {
  return guard("pg_tensor_realize", [&] {
    capi::arg(t, "t");
    t->t.realize();
  });
}

pg_api_status pg_tensor_realize_all(pg_tensor_t* tensors, size_t n) {
  return guard("pg_tensor_realize_all", [&] {
    std::vector<Tensor> all = capi::tensors_arg(tensors, n, "tensors");
    Tensor::realize_all(all);
    for (size_t i = 0; i < n; ++i) tensors[i]->t = all[i];
  });
}

pg_api_status pg_tensor_to_host(pg_tensor_t t, void* dst, size_t bytes) {
  return guard("pg_tensor_to_host", [&] {
    const Tensor& x = capi::arg(t, "t");
    capi::check_out(dst, "dst");
    x.copy_to_host(dst, bytes);
  });
}

pg_api_status pg_tensor_to(pg_tensor_t t, const char* device, pg_tensor_t* out) {
  return guard("pg_tensor_to",
               [&] { capi::put(out, capi::arg(t, "t").to(capi::device_arg(device))); });
}

pg_api_status pg_tensor_assign(pg_tensor_t t, pg_tensor_t value) {
  return guard("pg_tensor_assign", [&] {
    const Tensor& v = capi::arg(value, "value");
    capi::arg(t, "t");
    t->t.assign(v);
  });
}

pg_api_status pg_tensor_cast(pg_tensor_t t, pg_dtype dtype, pg_tensor_t* out) {
  return guard("pg_tensor_cast", [&] { capi::put(out, capi::arg(t, "t").cast(dtype)); });
}
