// The immediate argument of a UOp: a small variant compared and hashed by value.
#ifndef POLYGRAD_IR_ARG_HPP
#define POLYGRAD_IR_ARG_HPP

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

namespace polygrad {

/// A DEFINE_VAR's name and inclusive bounds.
struct Var {
  std::string name;
  int64_t vmin = 0;
  int64_t vmax = 0;
  friend bool operator==(const Var&, const Var&) = default;
};

/// What an op's arg holds (see POLYGRAD_OPS for which op uses which): nothing, an integer
/// (CONST of bool/int dtypes, slots, ids, counts), a double (CONST of floats; compared by bits,
/// so NaN == NaN and -0.0 != 0.0), a bool, a string (device, name), an integer list (axes,
/// lanes) or a Var.
using Arg =
    std::variant<std::monostate, int64_t, double, bool, std::string, std::vector<int64_t>, Var>;

/// Equality by value; doubles by their bits.
bool arg_equal(const Arg& a, const Arg& b);
/// Hash consistent with arg_equal.
size_t arg_hash(const Arg& a);

/// Mixes `v` into the running hash `h` (boost's hash_combine).
inline size_t hash_mix(size_t h, size_t v) {
  return h ^ (v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2));
}
/// Readable form: "", "3", "1.5", "true", "\"cpu\"", "[0, 2]", "n[1..8]".
std::string arg_to_string(const Arg& a);

}  // namespace polygrad

#endif  // POLYGRAD_IR_ARG_HPP
