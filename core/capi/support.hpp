// Shared pieces of the C API's entry points: the handle type, the try/catch firewall and
// argument checks. Internal to core/capi.
#ifndef POLYGRAD_CAPI_SUPPORT_HPP
#define POLYGRAD_CAPI_SUPPORT_HPP

#include <polygrad/polygrad.h>
#include <polygrad/error.hpp>
#include <polygrad/tensor.hpp>

#include <map>
#include <optional>
#include <string>
#include <vector>

/// What a pg_tensor_t points to: one Tensor handle on the heap.
struct pg_tensor {
  polygrad::Tensor t;
};

namespace polygrad::capi {

/// Records `message` as this thread's last error.
void set_last_error(std::string message);

/// Maps the exception in flight to a status and records "<entry>: <what()>".
pg_api_status fail(const char* entry) noexcept;

/// Runs `body` inside the firewall: PG_API_OK, or the status of the exception it threw.
template <class F>
pg_api_status guard(const char* entry, F&& body) noexcept {
  try {
    body();
    return PG_API_OK;
  } catch (...) {
    return fail(entry);
  }
}

/// The tensor behind a handle argument; a user error naming `name` when the handle is NULL.
const Tensor& arg(pg_tensor_t t, const char* name);
/// The tensor behind an optional handle argument (NULL: none).
std::optional<Tensor> opt_arg(pg_tensor_t t);
/// A user error naming `name` when the out pointer `p` is NULL.
void check_out(const void* p, const char* name);
/// Writes a new handle for `t` to *out (checked non-NULL).
void put(pg_tensor_t* out, Tensor t);
/// (p, n) as a vector; a user error naming `name` when p is NULL and n > 0.
std::vector<int64_t> ints(const int64_t* p, size_t n, const char* name);
/// `device` as the Tensor API takes it (NULL: "").
std::string device_arg(const char* device);
/// A C scalar as the Tensor API's Scalar.
Scalar scalar_arg(pg_scalar s);
/// The tensors behind n handles.
std::vector<Tensor> tensors_arg(const pg_tensor_t* p, size_t n, const char* name);
/// Writes `pieces` to out[0..): sets *count; a user error when capacity is too small.
void put_pieces(const std::vector<Tensor>& pieces, pg_tensor_t* out, size_t capacity,
                size_t* count);

}  // namespace polygrad::capi

#endif  // POLYGRAD_CAPI_SUPPORT_HPP
