// Rules and rule sets: a rule is a compiled pattern plus a rewrite function; a RuleSet is a
// named, ordered list of rules indexed by root op, composed with `+`.
//
//   const RuleSet identities = RuleSet("identities")
//     | rule(var("x") + cconst(0), [](Match& m) { return m["x"]; })   // x+0 -> x
#ifndef POLYGRAD_REWRITE_RULE_SET_HPP
#define POLYGRAD_REWRITE_RULE_SET_HPP

#include "rewrite/pattern.hpp"

#include <array>
#include <string>
#include <string_view>
#include <vector>

namespace polygrad {

/// Where a rule was written. SourceLocation's role, from __builtin_FILE/__builtin_LINE,
/// which GCC and clang 14 both provide (clang 14 cannot use libstdc++'s source_location).
struct SourceLocation {
  const char* file = "";
  unsigned line = 0;
  static constexpr SourceLocation current(const char* file = __builtin_FILE(),
                                          unsigned line = __builtin_LINE()) {
    return {file, line};
  }
};

class Rule;

/// The bindings of one successful match, handed to a rule's rewrite function.
class Match {
 public:
  static constexpr int kMaxBindings = 16;

  /// The node bound to `name`; IrError naming the rule when the pattern binds no such name.
  const UOpRef& operator[](std::string_view name) const;
  /// The matched root.
  const UOpRef& root() const { return *root_; }
  /// The context passed to graph_rewrite (nullptr when none).
  template <typename T>
  T& ctx() const {
    return *static_cast<T*>(ctx_);
  }
  const Rule& rule() const { return *rule_; }

 private:
  friend class Rule;
  const Rule* rule_ = nullptr;
  const UOpRef* root_ = nullptr;
  void* ctx_ = nullptr;
  uint32_t bound_ = 0;
  std::array<const UOpRef*, kMaxBindings> slots_{};
};

/// Returns the replacement, or a null UOpRef when the rule does not apply after all.
using RewriteFn = UOpRef (*)(Match&);

/// A compiled pattern and its rewrite. Commutative pattern nodes are expanded into every source
/// order at compile time, so matching is a straight walk with no backtracking; the variants are
/// tried in order and the rewrite function may decline one (return null) to let the next try.
class Rule {
 public:
  Rule(const Pattern& pattern, RewriteFn fn, SourceLocation where);

  /// The pattern's text, e.g. "ADD(x, CONST=0)".
  const std::string& name() const { return name_; }
  /// "file.cpp:12", where the rule was written.
  std::string location() const;
  const SourceLocation& where() const { return where_; }
  /// Root ops this rule can match (all ops when the root pattern names none).
  const std::bitset<kOpCount>& root_ops() const { return root_ops_; }

  /// The rewrite of `u`, or null when no variant matches or the function declines.
  UOpRef apply(const UOpRef& u, void* ctx) const;
  /// Whether the pattern matches `u` (ignoring the rewrite function).
  bool matches(const UOpRef& u) const;

  /// Index of binding `name`, or -1.
  int slot_of(std::string_view name) const;

 private:
  struct Node {
    std::bitset<kOpCount> ops;
    bool any_op;
    SrcMode mode;
    int8_t slot;
    uint8_t ndtypes;
    std::array<DType, 4> dtypes;
    DTypePredicate dtype_pred;
    NodePredicate pred;
    const Arg* arg;
    bool has_const;
    double const_value;
    uint16_t first_child;  // into children_
    uint16_t nchildren;
  };
  struct Variant {
    std::vector<Node> nodes;
    std::vector<uint16_t> children;
  };

  uint16_t compile(const PatternNode& p, Variant& v, const std::vector<bool>& flips, size_t& k);
  bool match(const Variant& v, uint16_t ni, const UOpRef& u, Match& m) const;

  std::vector<Variant> variants_;
  std::vector<std::string> slot_names_;
  Pattern pattern_;  // keeps the args the nodes point to alive
  std::bitset<kOpCount> root_ops_;
  RewriteFn fn_;
  std::string name_;
  SourceLocation where_;
};

/// A rule: `pattern` rewritten by `fn`; the call site is recorded for traces and errors.
Rule rule(const Pattern& pattern, RewriteFn fn, SourceLocation where = SourceLocation::current());

/// A named, ordered set of rules. rewrite() tries the rules whose root can match the node's
/// op, in insertion order, and returns the first rewrite.
class RuleSet {
 public:
  explicit RuleSet(std::string name);

  const std::string& name() const { return name_; }
  size_t size() const { return rules_.size(); }

  /// Appends a rule.
  RuleSet& add(Rule r);
  /// Declares that whether a rule of this set fires depends on the node alone (no context, no
  /// other state), so a bottom-up rewrite by this set marks each node on which none fires, over
  /// sources so marked, and later rewrites by this set take a marked node as it is. At most
  /// eight sets in a process (a bit of each node each); IrError beyond.
  RuleSet& remember_fixed_points();
  /// The node bit of remember_fixed_points, or 0.
  uint8_t fixed_point_bit() const { return fixed_point_bit_; }
  friend RuleSet operator|(RuleSet set, Rule r) { return std::move(set.add(std::move(r))); }
  /// The rules of `a`, then those of `b`; named "a+b".
  friend RuleSet operator+(const RuleSet& a, const RuleSet& b);

  /// The first rewrite of `u` by a rule of this set, or null. `fired` (when given) receives the
  /// rule that fired. Logs the firing to stderr when POLYGRAD_TRACE_RULES=1.
  UOpRef rewrite(const UOpRef& u, void* ctx = nullptr, const Rule** fired = nullptr) const;

 private:
  struct Entry {
    std::shared_ptr<const Rule> rule;
    std::string set_name;
  };
  std::string name_;
  std::vector<Entry> rules_;
  std::array<std::vector<uint32_t>, kOpCount> by_op_;
  uint8_t fixed_point_bit_ = 0;
};

}  // namespace polygrad

#endif  // POLYGRAD_REWRITE_RULE_SET_HPP
