// Lets GoogleTest print UOpRefs as graphs.
#ifndef POLYGRAD_TESTS_IR_PRINT_HPP
#define POLYGRAD_TESTS_IR_PRINT_HPP

#include "ir/graph.hpp"

#include <ostream>

namespace polygrad {
inline void PrintTo(const UOpRef& u, std::ostream* os) {
  if (!u) {
    *os << "null";
    return;
  }
  *os << '\n';
  *os << to_string(u);
}
}  // namespace polygrad

#endif
