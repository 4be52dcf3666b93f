// Value bounds of integer expressions: the inclusive range an int or bool node can take, from
// constants, DEFINE_VAR bounds, RANGE/SPECIAL sizes and the ALU ops above them.
#ifndef POLYGRAD_SYMBOLIC_BOUNDS_HPP
#define POLYGRAD_SYMBOLIC_BOUNDS_HPP

#include "ir/uop.hpp"

#include <optional>

namespace polygrad {

/// Inclusive value range [lo, hi].
struct Bounds {
  int64_t lo, hi;
  friend bool operator==(const Bounds&, const Bounds&) = default;
};

/// Bounds of a scalar bool or int node; nullopt for floats, vectors, pointers and uint64 (whose
/// range does not fit int64). An op whose exact result range would leave its dtype (it may wrap)
/// gets the whole dtype range. Cached in the node.
std::optional<Bounds> bounds(const UOp& u);
inline std::optional<Bounds> bounds(const UOpRef& u) {
  return bounds(*u);
}

/// Whether [lo, hi] (exact, 128-bit) lies inside int dtype t's range.
bool fits(DType t, __int128 lo, __int128 hi);

}  // namespace polygrad

#endif  // POLYGRAD_SYMBOLIC_BOUNDS_HPP
