#include <polygrad/error.hpp>

namespace polygrad {

Error::Error(ErrorKind kind, const std::string& message, pg_status status)
    : std::runtime_error(message), kind_(kind), status_(status) {}

// Out of line so the vtable and typeinfo have one home in libpolygrad.
Error::~Error() = default;

void user_error(const std::string& message) {
  throw Error(ErrorKind::user, message);
}

void internal_error(const std::string& message) {
  throw Error(ErrorKind::internal, "internal error: " + message);
}

const char* status_name(pg_status status) noexcept {
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
  }
  return "PG_ERR_<unknown>";
}

}  // namespace polygrad
