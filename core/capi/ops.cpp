// C API: element-wise ops, activations and reductions, generated from the op lists in
// polygrad.h.
#include <optional>

#include "capi/support.hpp"

using namespace polygrad;
using capi::arg;
using capi::guard;
using capi::put;

#define PG_X(name)                                                           \
  pg_api_status pg_tensor_##name(pg_tensor_t x, pg_tensor_t* out) {          \
    return guard("pg_tensor_" #name, [&] { put(out, arg(x, "x").name()); }); \
  }
PG_TENSOR_UNARY_OPS(PG_X)
#undef PG_X

#define PG_X(name)                                                                  \
  pg_api_status pg_tensor_##name(pg_tensor_t x, pg_tensor_t* out) {                 \
    return guard("pg_tensor_" #name, [&] { put(out, Tensor::name(arg(x, "x"))); }); \
  }
PG_TENSOR_LIKE_OPS(PG_X)
#undef PG_X

#define PG_X(name)                                                                \
  pg_api_status pg_tensor_##name(pg_tensor_t x, double param, pg_tensor_t* out) { \
    return guard("pg_tensor_" #name, [&] { put(out, arg(x, "x").name(param)); }); \
  }
PG_TENSOR_PARAM_OPS(PG_X)
#undef PG_X

#define PG_X(name)                                                                      \
  pg_api_status pg_tensor_##name(pg_tensor_t a, pg_tensor_t b, pg_tensor_t* out) {      \
    return guard("pg_tensor_" #name, [&] { put(out, arg(a, "a").name(arg(b, "b"))); }); \
  }
PG_TENSOR_BINARY_OPS(PG_X)
#undef PG_X

#define PG_X(name)                                                                        \
  pg_api_status pg_tensor_##name##_scalar(pg_tensor_t a, pg_scalar s, pg_tensor_t* out) { \
    return guard("pg_tensor_" #name "_scalar",                                            \
                 [&] { put(out, arg(a, "a").name(capi::scalar_arg(s))); });               \
  }
PG_TENSOR_SCALAR_OPS(PG_X)
#undef PG_X

pg_api_status pg_tensor_pow_base(pg_scalar base, pg_tensor_t x, pg_tensor_t* out) {
  return guard("pg_tensor_pow_base",
               [&] { put(out, Tensor::pow(capi::scalar_arg(base), arg(x, "x"))); });
}

pg_api_status pg_tensor_where(pg_tensor_t cond, pg_tensor_t a, pg_tensor_t b, pg_tensor_t* out) {
  return guard("pg_tensor_where",
               [&] { put(out, arg(cond, "cond").where(arg(a, "a"), arg(b, "b"))); });
}

pg_api_status pg_tensor_where_scalar(pg_tensor_t cond, pg_scalar a, pg_scalar b, pg_tensor_t* out) {
  return guard("pg_tensor_where_scalar", [&] {
    put(out, arg(cond, "cond").where(capi::scalar_arg(a), capi::scalar_arg(b)));
  });
}

pg_api_status pg_tensor_tril(pg_tensor_t x, int64_t diagonal, pg_tensor_t* out) {
  return guard("pg_tensor_tril", [&] { put(out, arg(x, "x").tril(diagonal)); });
}

pg_api_status pg_tensor_triu(pg_tensor_t x, int64_t diagonal, pg_tensor_t* out) {
  return guard("pg_tensor_triu", [&] { put(out, arg(x, "x").triu(diagonal)); });
}

pg_api_status pg_tensor_masked_fill(pg_tensor_t x, pg_tensor_t mask, pg_scalar value,
                                    pg_tensor_t* out) {
  return guard("pg_tensor_masked_fill", [&] {
    put(out, arg(x, "x").masked_fill(arg(mask, "mask"), capi::scalar_arg(value)));
  });
}

pg_api_status pg_tensor_one_hot(pg_tensor_t x, int64_t num_classes, pg_tensor_t* out) {
  return guard("pg_tensor_one_hot", [&] { put(out, arg(x, "x").one_hot(num_classes)); });
}

pg_api_status pg_tensor_lerp(pg_tensor_t x, pg_tensor_t end, pg_tensor_t weight, pg_tensor_t* out) {
  return guard("pg_tensor_lerp",
               [&] { put(out, arg(x, "x").lerp(arg(end, "end"), arg(weight, "weight"))); });
}

pg_api_status pg_tensor_roll(pg_tensor_t x, const int64_t* shifts, size_t nshifts,
                             const int64_t* dims, size_t ndims, pg_tensor_t* out) {
  return guard("pg_tensor_roll", [&] {
    put(out,
        arg(x, "x").roll(capi::ints(shifts, nshifts, "shifts"), capi::ints(dims, ndims, "dims")));
  });
}

pg_api_status pg_tensor_clamp(pg_tensor_t x, const double* min, const double* max,
                              pg_tensor_t* out) {
  return guard("pg_tensor_clamp", [&] {
    // A whole double is an int bound (an int tensor stays int), any other a float one.
    auto bound = [](const double* v) -> std::optional<Scalar> {
      if (v == nullptr) return std::nullopt;
      return Scalar::whole_or_float(*v);
    };
    put(out, arg(x, "x").clamp(bound(min), bound(max)));
  });
}

pg_api_status pg_tensor_clamp_scalar(pg_tensor_t x, const pg_scalar* min, const pg_scalar* max,
                                     pg_tensor_t* out) {
  return guard("pg_tensor_clamp_scalar", [&] {
    std::optional<Scalar> lo, hi;
    if (min) lo = capi::scalar_arg(*min);
    if (max) hi = capi::scalar_arg(*max);
    put(out, arg(x, "x").clamp(lo, hi));
  });
}

pg_api_status pg_tensor_hardtanh(pg_tensor_t x, double min_val, double max_val, pg_tensor_t* out) {
  return guard("pg_tensor_hardtanh", [&] { put(out, arg(x, "x").hardtanh(min_val, max_val)); });
}

// ---- reductions -----------------------------------------------------------------------------

#define PG_X(name)                                                                              \
  pg_api_status pg_tensor_##name(pg_tensor_t x, const int64_t* axes, size_t naxes, int keepdim, \
                                 pg_tensor_t* out) {                                            \
    return guard("pg_tensor_" #name, [&] {                                                      \
      put(out, arg(x, "x").name(capi::ints(axes, naxes, "axes"), keepdim != 0));                \
    });                                                                                         \
  }
PG_TENSOR_REDUCE_OPS(PG_X)
#undef PG_X

pg_api_status pg_tensor_var(pg_tensor_t x, const int64_t* axes, size_t naxes, int keepdim,
                            double correction, pg_tensor_t* out) {
  return guard("pg_tensor_var", [&] {
    put(out, arg(x, "x").var(capi::ints(axes, naxes, "axes"), keepdim != 0, correction));
  });
}

pg_api_status pg_tensor_std(pg_tensor_t x, const int64_t* axes, size_t naxes, int keepdim,
                            double correction, pg_tensor_t* out) {
  return guard("pg_tensor_std", [&] {
    put(out, arg(x, "x").std(capi::ints(axes, naxes, "axes"), keepdim != 0, correction));
  });
}

pg_api_status pg_tensor_argmax(pg_tensor_t x, const int64_t* axis, int keepdim, pg_tensor_t* out) {
  return guard("pg_tensor_argmax", [&] {
    put(out, arg(x, "x").argmax(axis ? std::optional<int64_t>(*axis) : std::nullopt, keepdim != 0));
  });
}

pg_api_status pg_tensor_argmin(pg_tensor_t x, const int64_t* axis, int keepdim, pg_tensor_t* out) {
  return guard("pg_tensor_argmin", [&] {
    put(out, arg(x, "x").argmin(axis ? std::optional<int64_t>(*axis) : std::nullopt, keepdim != 0));
  });
}

pg_api_status pg_tensor_logsumexp(pg_tensor_t x, int64_t axis, int keepdim, pg_tensor_t* out) {
  return guard("pg_tensor_logsumexp", [&] { put(out, arg(x, "x").logsumexp(axis, keepdim != 0)); });
}

#define PG_X(name)                                                                \
  pg_api_status pg_tensor_##name(pg_tensor_t x, int64_t axis, pg_tensor_t* out) { \
    return guard("pg_tensor_" #name, [&] { put(out, arg(x, "x").name(axis)); });  \
  }
PG_TENSOR_AXIS_OPS(PG_X)
#undef PG_X
