// The exception thrown by the IR, rewrite and symbolic layers (library polygrad_ir).
//
// polygrad_ir is a static library linked into libpolygrad and into tests; it cannot throw the
// shared library's polygrad::Error without a dependency cycle, so it has its own type. Messages
// name the op, the rule or the dtype that failed.
#ifndef POLYGRAD_IR_ERROR_HPP
#define POLYGRAD_IR_ERROR_HPP

#include <stdexcept>
#include <string>

namespace polygrad {

/// A malformed graph, an impossible request (e.g. promoting uint64 with int64) or a rewrite
/// that does not terminate.
class IrError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Throws IrError(message).
[[noreturn]] void ir_error(const std::string& message);

}  // namespace polygrad

#endif  // POLYGRAD_IR_ERROR_HPP
