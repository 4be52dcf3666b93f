// C API: symbolic sizes (pg_variable_bind, pg_tensor_*_sym).
#include "capi/support.hpp"

#include <polygrad/polygrad.h>
#include <polygrad/symbolic.hpp>

/// What a pg_dim_t points to.
struct pg_dim {
  polygrad::Dim d;
};

namespace polygrad::capi {
namespace {

/// `n` sizes: dims[i] where given, else values[i].
std::vector<Dim> dims_arg(const int64_t* values, const pg_dim_t* dims, size_t n, const char* name) {
  if (n > 0 && values == nullptr) user_error(std::string("argument '") + name + "' is NULL");
  std::vector<Dim> out;
  for (size_t i = 0; i < n; ++i)
    out.push_back(dims != nullptr && dims[i] != nullptr ? dims[i]->d : Dim(values[i]));
  return out;
}

std::vector<std::pair<Dim, Dim>> dim_pairs(const int64_t* values, const pg_dim_t* dims,
                                           size_t naxes, const char* name) {
  const std::vector<Dim> flat = dims_arg(values, dims, 2 * naxes, name);
  std::vector<std::pair<Dim, Dim>> out;
  for (size_t i = 0; i < naxes; ++i) out.emplace_back(flat[2 * i], flat[2 * i + 1]);
  return out;
}

}  // namespace
}  // namespace polygrad::capi

using namespace polygrad;
using namespace polygrad::capi;

pg_api_status pg_variable_bind(const char* name, int64_t min, int64_t max, int64_t value,
                               pg_dim_t* out) {
  return guard("pg_variable_bind", [&] {
    check_out(out, "out");
    if (name == nullptr) user_error("argument 'name' is NULL");
    *out = new pg_dim{Variable(name, min, max).bind(value)};
  });
}

void pg_dim_free(pg_dim_t d) {
  delete d;
}

namespace {
const Dim& dim_arg(pg_dim_t d, const char* name) {
  if (d == nullptr) user_error(std::string("argument '") + name + "' is NULL");
  return d->d;
}
}  // namespace

pg_api_status pg_dim_affine(pg_dim_t a, int64_t scale, int64_t offset, pg_dim_t* out) {
  return guard("pg_dim_affine", [&] {
    check_out(out, "out");
    *out = new pg_dim{dim_arg(a, "a") * scale + Dim(offset)};
  });
}

pg_api_status pg_dim_add(pg_dim_t a, pg_dim_t b, pg_dim_t* out) {
  return guard("pg_dim_add", [&] {
    check_out(out, "out");
    *out = new pg_dim{dim_arg(a, "a") + dim_arg(b, "b")};
  });
}

pg_api_status pg_dim_value(pg_dim_t d, int64_t* out) {
  return guard("pg_dim_value", [&] {
    check_out(out, "out");
    *out = dim_arg(d, "d").value();
  });
}

pg_api_status pg_tensor_reshape_sym(pg_tensor_t x, const int64_t* shape, const pg_dim_t* dims,
                                    size_t ndim, pg_tensor_t* out) {
  return guard("pg_tensor_reshape_sym",
               [&] { put(out, reshape(arg(x, "x"), dims_arg(shape, dims, ndim, "shape"))); });
}

pg_api_status pg_tensor_expand_sym(pg_tensor_t x, const int64_t* shape, const pg_dim_t* dims,
                                   size_t ndim, pg_tensor_t* out) {
  return guard("pg_tensor_expand_sym",
               [&] { put(out, expand(arg(x, "x"), dims_arg(shape, dims, ndim, "shape"))); });
}

pg_api_status pg_tensor_shrink_sym(pg_tensor_t x, const int64_t* bounds, const pg_dim_t* dims,
                                   size_t naxes, pg_tensor_t* out) {
  return guard("pg_tensor_shrink_sym",
               [&] { put(out, shrink(arg(x, "x"), dim_pairs(bounds, dims, naxes, "bounds"))); });
}

pg_api_status pg_tensor_pad_sym(pg_tensor_t x, const int64_t* pads, const pg_dim_t* dims,
                                size_t naxes, pg_tensor_t* out) {
  return guard("pg_tensor_pad_sym",
               [&] { put(out, pad(arg(x, "x"), dim_pairs(pads, dims, naxes, "pads"))); });
}
