// The exception type of libpolygrad (and IndexError, the user error of an index outside its
// axis, which the C API tells apart).
//
// Two channels, as in Halide: a user error (bad config, unknown device, a plugin that refuses a
// request) and an internal error (a bug in polygrad or a plugin breaking the ABI contract).
// Every message names what failed: the op, the file and line, or the config key.
#ifndef POLYGRAD_ERROR_HPP
#define POLYGRAD_ERROR_HPP

#include <polygrad/plugin.h>
#include <polygrad/export.hpp>

#include <stdexcept>
#include <string>

namespace polygrad {

/// Who is to blame for an Error.
enum class ErrorKind {
  user,     ///< the caller, the config or the environment; fixable without changing code
  internal  ///< a bug: polygrad's own, or a plugin that broke the ABI contract
};

/// Thrown by every fallible libpolygrad call.
class POLYGRAD_API Error : public std::runtime_error {
 public:
  /// `status` is the plugin status that caused the error, PG_OK when no plugin call failed.
  Error(ErrorKind kind, const std::string& message, pg_status status = PG_OK);
  ~Error() override;

  ErrorKind kind() const noexcept { return kind_; }
  /// The plugin's status when a plugin call failed, otherwise PG_OK.
  pg_status status() const noexcept { return status_; }

 private:
  ErrorKind kind_;
  pg_status status_;
};

/// A user error that is an index outside its axis (getitem, gather): the C API reports it as
/// PG_API_ERR_INDEX, so a frontend raises its IndexError without reading the message.
class POLYGRAD_API IndexError : public Error {
 public:
  explicit IndexError(const std::string& message);
  ~IndexError() override;
};

/// Throw a user error.
[[noreturn]] POLYGRAD_API void user_error(const std::string& message);
/// Throw an IndexError.
[[noreturn]] POLYGRAD_API void index_error(const std::string& message);
/// Throw an internal error.
[[noreturn]] POLYGRAD_API void internal_error(const std::string& message);

/// The enumerator name of a status, e.g. "PG_ERR_COMPILE".
POLYGRAD_API const char* status_name(pg_status status) noexcept;

}  // namespace polygrad

#endif  // POLYGRAD_ERROR_HPP
