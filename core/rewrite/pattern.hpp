// The pattern DSL: trees that match UOps by op, dtype, sources, arg, predicates and named
// bindings. Patterns are built once (usually into a static RuleSet) and compiled into flat
// tables by rule(); matching never allocates.
//
//   var("x") + cconst(0)            ADD of anything and the constant 0, in either order
//   cvar("c", dtypes::int32)        an int32 CONST, bound to "c"
//   pat(Op::SINK).repeat(var())     a SINK with any number of sources
//   var("x").where(is_int_node)     anything whose node satisfies a predicate
#ifndef POLYGRAD_REWRITE_PATTERN_HPP
#define POLYGRAD_REWRITE_PATTERN_HPP

#include "ir/uop.hpp"

#include <bitset>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace polygrad {

/// How a pattern constrains its node's sources.
enum class SrcMode : uint8_t {
  any,          ///< no constraint
  exact,        ///< exactly these sources, in this order
  repeat,       ///< any number of sources (zero included), each matching the one pattern
  commutative,  ///< two sources, in either order
};

/// A node predicate; a plain function pointer so matching stays cheap.
using NodePredicate = bool (*)(const UOp&);
using DTypePredicate = bool (*)(DType);

/// One pattern node. Built through Pattern's helpers, not directly.
struct PatternNode {
  std::bitset<kOpCount> ops;  ///< empty: any op
  std::vector<DType> dtypes;  ///< empty: any dtype
  DTypePredicate dtype_pred = nullptr;
  SrcMode mode = SrcMode::any;
  std::vector<std::shared_ptr<const PatternNode>> srcs;
  std::optional<Arg> arg;
  std::optional<double> const_value;  ///< CONST whose value equals this (ints or floats)
  NodePredicate pred = nullptr;
  std::string name;  ///< binding name; empty: unnamed
};

/// A pattern: a cheap handle to an immutable PatternNode tree.
class Pattern {
 public:
  explicit Pattern(std::shared_ptr<const PatternNode> n) : n_(std::move(n)) {}

  /// This pattern, binding the matched node to `name`. A name used twice in one rule must match
  /// the same node both times.
  Pattern named(std::string name) const;
  /// Restrict the dtype to one of `ts`.
  Pattern dtype(std::initializer_list<DType> ts) const;
  Pattern dtype(DType t) const { return dtype({t}); }
  /// Restrict the dtype by a predicate, e.g. is_int_dtype.
  Pattern dtype(DTypePredicate p) const;
  /// Require `p(node)`.
  Pattern where(NodePredicate p) const;
  /// Require the arg to equal `a`.
  Pattern arg(Arg a) const;
  /// Require exactly these sources, in order.
  Pattern srcs(std::initializer_list<Pattern> ps) const;
  /// Require any number of sources, each matching `p`.
  Pattern repeat(const Pattern& p) const;

  const PatternNode& node() const { return *n_; }
  const std::shared_ptr<const PatternNode>& ptr() const { return n_; }
  /// Readable form, e.g. "ADD(x, CONST=0)"; rules use it as their name.
  std::string to_string() const;

 private:
  std::shared_ptr<const PatternNode> n_;
};

/// Any node, bound to `name` when given.
Pattern var(std::string name = "");
/// Any CONST, bound to `name` when given.
Pattern cvar(std::string name = "");
Pattern cvar(std::string name, DType t);
/// A CONST whose value is `v` (compared as a number: int 0 and float 0.0 both match cconst(0)).
Pattern cconst(double v);
/// A node whose op is `op` (or one of `ops`), with no source constraint until srcs()/repeat().
Pattern pat(Op op);
Pattern pat(std::initializer_list<Op> ops);
/// op(srcs...) with exact sources.
Pattern pat(Op op, std::initializer_list<Pattern> srcs);
/// op(a, b) matching either order.
Pattern pat_commutative(Op op, const Pattern& a, const Pattern& b);
/// A pattern matching any op of a group, e.g. pat_group(opg::alu).
Pattern pat_group(uint32_t groups);

// Operators build ALU patterns; commutative ops (ADD, MUL, MAX, AND, OR, XOR, CMPNE, CMPEQ)
// match either source order.
Pattern operator+(const Pattern& a, const Pattern& b);
Pattern operator-(const Pattern& a, const Pattern& b);
Pattern operator*(const Pattern& a, const Pattern& b);
Pattern operator%(const Pattern& a, const Pattern& b);
Pattern operator-(const Pattern& a);
Pattern operator&(const Pattern& a, const Pattern& b);
Pattern operator|(const Pattern& a, const Pattern& b);
Pattern operator^(const Pattern& a, const Pattern& b);
Pattern idiv(const Pattern& a, const Pattern& b);
Pattern max(const Pattern& a, const Pattern& b);
Pattern lt(const Pattern& a, const Pattern& b);
Pattern ne(const Pattern& a, const Pattern& b);
Pattern eq(const Pattern& a, const Pattern& b);
Pattern where(const Pattern& c, const Pattern& a, const Pattern& b);

// Common predicates.
inline bool is_int_dtype(DType t) {
  return t.is_int();
}
inline bool is_float_dtype(DType t) {
  return t.scalar_type().is_float();
}
inline bool is_int_or_bool_dtype(DType t) {
  return t.is_int() || t.is_bool();
}

}  // namespace polygrad

#endif  // POLYGRAD_REWRITE_PATTERN_HPP
