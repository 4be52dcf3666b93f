#include <polygrad/error.hpp>
#include <polygrad/plugin.hpp>

namespace polygrad {

Error::Error(ErrorKind kind, const std::string& message, pg_status status)
    : std::runtime_error(message), kind_(kind), status_(status) {}

// Out of line so the vtable and typeinfo have one home in libpolygrad.
Error::~Error() = default;

IndexError::IndexError(const std::string& message) : Error(ErrorKind::user, message) {}

IndexError::~IndexError() = default;

void user_error(const std::string& message) {
  throw Error(ErrorKind::user, message);
}

void index_error(const std::string& message) {
  throw IndexError(message);
}

void internal_error(const std::string& message) {
  throw Error(ErrorKind::internal, "internal error: " + message);
}

const char* status_name(pg_status status) noexcept {
  return sdk::status_name(status);
}

}  // namespace polygrad
