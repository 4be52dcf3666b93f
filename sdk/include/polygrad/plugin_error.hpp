// polygrad plugin SDK: status names, the Error a plugin throws inside itself, and the firewall
// that turns it into a pg_status at the C boundary (header-only; part of plugin.hpp).
#ifndef POLYGRAD_PLUGIN_ERROR_HPP
#define POLYGRAD_PLUGIN_ERROR_HPP

#include <polygrad/plugin.h>

#include <cstdio>
#include <exception>
#include <new>
#include <stdexcept>
#include <string>

namespace polygrad::sdk {

/// The enum name of a status ("PG_ERR_COMPILE"), or "PG_ERR_<unknown>" for a value outside it.
inline const char* status_name(int status) noexcept {
  switch (status) {
    case PG_OK:
      return "PG_OK";
    case PG_ERR_INVALID_ARGUMENT:
      return "PG_ERR_INVALID_ARGUMENT";
    case PG_ERR_OUT_OF_MEMORY:
      return "PG_ERR_OUT_OF_MEMORY";
    case PG_ERR_UNSUPPORTED:
      return "PG_ERR_UNSUPPORTED";
    case PG_ERR_VERSION:
      return "PG_ERR_VERSION";
    case PG_ERR_COMPILE:
      return "PG_ERR_COMPILE";
    case PG_ERR_LAUNCH:
      return "PG_ERR_LAUNCH";
    case PG_ERR_DEVICE:
      return "PG_ERR_DEVICE";
    case PG_ERR_INTERNAL:
      return "PG_ERR_INTERNAL";
    case PG_ERR_PEER:
      return "PG_ERR_PEER";
    case PG_ERR_TIMEOUT:
      return "PG_ERR_TIMEOUT";
    default:
      return "PG_ERR_<unknown>";
  }
}

// ---------------------------------------------------------------------------------------------
// Errors.

/// An error with a status code; thrown inside a plugin, turned into a pg_status at the boundary.
class Error : public std::runtime_error {
 public:
  Error(pg_status status, const std::string& message)
      : std::runtime_error(message), status_(status) {}
  pg_status status() const { return status_; }

 private:
  pg_status status_;
};

[[noreturn]] inline void fail(pg_status status, const std::string& message) {
  throw Error(status, message);
}

/// Copy `message` into a caller-owned pg_error (NULL allowed), truncating safely.
inline void set_error(pg_error* err, const char* message) {
  if (err == nullptr) return;
  std::snprintf(err->message, sizeof(err->message), "%s", message ? message : "");
}

namespace detail {
/// Run `fn` and convert any exception into a status plus message.
template <class Fn>
pg_status firewall(pg_error* err, const char* where, Fn&& fn) noexcept {
  try {
    fn();
    return PG_OK;
  } catch (const Error& e) {
    set_error(err, e.what());
    return e.status();
  } catch (const std::bad_alloc&) {
    set_error(err, (std::string(where) + ": out of memory").c_str());
    return PG_ERR_OUT_OF_MEMORY;
  } catch (const std::exception& e) {
    set_error(err, (std::string(where) + ": " + e.what()).c_str());
    return PG_ERR_INTERNAL;
  } catch (...) {
    set_error(err, (std::string(where) + ": unknown exception").c_str());
    return PG_ERR_INTERNAL;
  }
}
}  // namespace detail

}  // namespace polygrad::sdk

#endif  // POLYGRAD_PLUGIN_ERROR_HPP
