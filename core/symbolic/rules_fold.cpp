// Constant folding and identities.
#include "symbolic/fold.hpp"
#include "symbolic/rules_util.hpp"
#include "symbolic/simplify.hpp"

namespace polygrad {

using detail::not_const;

const RuleSet& fold_rules() {
  static const RuleSet set =
      RuleSet("fold") |
      rule(pat_group(opg::alu).repeat(cvar()),
           [](Match& m) {
             return fold_alu(m.root()->op(), m.root()->dtype(), m.root()->srcs());
           })  // op(c...) -> c
      | rule(where(cvar("c"), var("a"), var("b")),
             [](Match& m) {
               return m["c"]->arg_int() ? m["a"] : m["b"];
             })  // where(c, a, b) -> a or b
      | rule(pat_group(opg::alu).dtype(is_int_or_bool_dtype).where(not_const), [](Match& m) {
          auto b = bounds(m.root());
          return b && b->lo == b->hi ? const_int(m.root()->dtype(), b->lo) : UOpRef();
        });  // bounds pin one value -> that value
  return set;
}

const RuleSet& identity_rules() {
  static const RuleSet set =
      RuleSet("identities") |
      rule((var("x") + cconst(0)).dtype(is_int_dtype), [](Match& m) { return m["x"]; })  // x+0 -> x
      | rule(var("x") - cconst(0), [](Match& m) { return m["x"]; })                      // x-0 -> x
      | rule(var("x") * cconst(1), [](Match& m) { return m["x"]; })                      // x*1 -> x
      | rule(idiv(var("x"), cconst(1)), [](Match& m) { return m["x"]; })            // x//1 -> x
      | rule(var("x") % cconst(1), [](Match& m) { return const_like(m["x"], 0); })  // x%1 -> 0
      | rule((var("x") * cconst(0)).dtype(is_int_dtype),
             [](Match& m) { return const_like(m["x"], 0); })  // x*0 -> 0
      | rule((var("x") - var("x")).dtype(is_int_dtype),
             [](Match& m) { return const_like(m["x"], 0); })  // x-x -> 0
      | rule((var("x") ^ var("x")).dtype(is_int_dtype),
             [](Match& m) { return const_like(m["x"], 0); })                     // x^x -> 0
      | rule(max(var("x"), var("x")), [](Match& m) { return m["x"]; })           // max(x,x) -> x
      | rule(var("x") & var("x"), [](Match& m) { return m["x"]; })               // x&x -> x
      | rule(var("x") | var("x"), [](Match& m) { return m["x"]; })               // x|x -> x
      | rule(where(var(), var("x"), var("x")), [](Match& m) { return m["x"]; })  // c?x:x -> x
      | rule(-(-var("x")), [](Match& m) { return m["x"]; })                      // -(-x) -> x
      | rule(lt(var("x").dtype(is_int_dtype), var("x")),
             [](Match&) { return const_bool(false); })  // x<x -> false
      | rule(ne(var("x").dtype(is_int_dtype), var("x")),
             [](Match&) { return const_bool(false); })  // x!=x -> false
      | rule(eq(var("x").dtype(is_int_dtype), var("x")),
             [](Match&) { return const_bool(true); });  // x==x -> true
  return set;
}

}  // namespace polygrad
