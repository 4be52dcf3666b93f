// The C API's error channel (pg_last_error), firewall and argument helpers.
#include "capi/support.hpp"

#include "ir/error.hpp"
#include "runtime/panel_cache.hpp"

#include <polygrad/error.hpp>

#include <cmath>
#include <cstdio>
#include <new>

namespace polygrad::capi {

namespace {
thread_local std::string last_error;
}  // namespace

void set_last_error(std::string message) {
  last_error = std::move(message);
}

pg_api_status fail(const char* entry) noexcept {
  pg_api_status status = PG_API_ERR_INTERNAL;
  std::string what;
  try {
    throw;
  } catch (const IndexError& e) {
    what = e.what();
    status = PG_API_ERR_INDEX;
  } catch (const Error& e) {
    what = e.what();
    if (e.kind() == ErrorKind::internal)
      status = PG_API_ERR_INTERNAL;
    else if (e.status() == PG_ERR_PEER || e.status() == PG_ERR_TIMEOUT)
      status = PG_API_ERR_COMM;
    else
      status = e.status() == PG_OK ? PG_API_ERR_INVALID_ARGUMENT : PG_API_ERR_DEVICE;
  } catch (const IrError& e) {
    what = std::string("internal error: ") + e.what();
  } catch (const std::bad_alloc&) {
    what = "out of host memory";
  } catch (const std::exception& e) {
    what = std::string("internal error: ") + e.what();
  } catch (...) {
    what = "internal error: unknown exception";
  }
  try {
    set_last_error(std::string(entry) + ": " + what);
  } catch (...) {
    // Out of memory while recording the error: the status still tells.
  }
  return status;
}

const Tensor& arg(pg_tensor_t t, const char* name) {
  if (!t) user_error(std::string("argument '") + name + "' is NULL");
  return t->t;
}

std::optional<Tensor> opt_arg(pg_tensor_t t) {
  if (!t) return std::nullopt;
  return t->t;
}

void check_out(const void* p, const char* name) {
  if (!p) user_error(std::string("output pointer '") + name + "' is NULL");
}

void put(pg_tensor_t* out, Tensor t) {
  check_out(out, "out");
  *out = new pg_tensor{std::move(t)};
}

std::vector<int64_t> ints(const int64_t* p, size_t n, const char* name) {
  if (!p && n > 0) user_error(std::string("argument '") + name + "' is NULL");
  return n ? std::vector<int64_t>(p, p + n) : std::vector<int64_t>{};
}

std::string device_arg(const char* device) {
  return device ? device : "";
}

Scalar scalar_arg(pg_scalar s) {
  if (!s.is_int) return Scalar(s.value);
  if (static_cast<double>(s.int_value) == s.value)
    return Scalar(static_cast<long long>(s.int_value));
  // ({3.0, 1}: value holds the int. One no int64 holds, NaN, fractional or outside
  // [-2^63, 2^63), has no int form: {2.5, 1} was truncated to 2 and -2^63 refused.)
  if (!(s.value >= -0x1p63 && s.value < 0x1p63) || std::trunc(s.value) != s.value) {
    char text[32];
    std::snprintf(text, sizeof text, "%.17g", s.value);
    user_error(std::string("an int scalar's value ") + text + " is no int64");
  }
  return Scalar(static_cast<long long>(s.value));
}

std::vector<Tensor> tensors_arg(const pg_tensor_t* p, size_t n, const char* name) {
  if (!p && n > 0) user_error(std::string("argument '") + name + "' is NULL");
  std::vector<Tensor> out;
  for (size_t i = 0; i < n; ++i) {
    if (!p[i]) user_error(std::string(name) + "[" + std::to_string(i) + "] is NULL");
    out.push_back(p[i]->t);
  }
  return out;
}

void put_pieces(const std::vector<Tensor>& pieces, pg_tensor_t* out, size_t capacity,
                size_t* count) {
  check_out(count, "count");
  *count = pieces.size();
  if (pieces.size() > capacity)
    user_error(std::to_string(pieces.size()) + " pieces do not fit in an output array of " +
               std::to_string(capacity));
  check_out(out, "out");
  for (size_t i = 0; i < pieces.size(); ++i) out[i] = new pg_tensor{pieces[i]};
}

}  // namespace polygrad::capi

using namespace polygrad;

const char* pg_last_error(void) {
  return capi::last_error.c_str();
}

void pg_tensor_free(pg_tensor_t t) {
  delete t;
}

pg_api_status pg_manual_seed(uint64_t seed) {
  return capi::guard("pg_manual_seed", [&] { Tensor::manual_seed(seed); });
}

pg_api_status pg_panel_cache_stats(size_t* copies_made, size_t* reuses, size_t* entries,
                                   uint64_t* bytes, uint64_t* limit) {
  return capi::guard("pg_panel_cache_stats", [&] {
    const runtime::PanelCacheStats s = runtime::panel_cache_stats();
    if (copies_made) *copies_made = s.copies_made;
    if (reuses) *reuses = s.reuses;
    if (entries) *entries = s.entries;
    if (bytes) *bytes = s.bytes;
    if (limit) *limit = s.limit;
  });
}

pg_api_status pg_set_panel_cache_limit(uint64_t bytes) {
  return capi::guard("pg_set_panel_cache_limit", [&] { runtime::set_panel_cache_limit(bytes); });
}

pg_api_status pg_compiled_kernel_count(size_t* out) {
  return capi::guard("pg_compiled_kernel_count", [&] {
    capi::check_out(out, "out");
    *out = compiled_kernel_count();
  });
}
