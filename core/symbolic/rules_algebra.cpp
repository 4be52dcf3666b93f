// Reassociation and like terms for integer arithmetic: constants move right and outward, SUB
// and NEG become multiplication by -1, so that equal terms meet and combine.
#include "symbolic/rules_util.hpp"
#include "symbolic/simplify.hpp"

namespace polygrad {

using detail::cval;
using detail::ivar;
using detail::neg_wrap;
using detail::not_const;

const RuleSet& reassociation_rules() {
  static const RuleSet set =
      RuleSet("reassociation") |
      rule(pat(Op::ADD, {cvar("c"), ivar("x").where(not_const)}),
           [](Match& m) { return m["x"] + m["c"]; })  // c+x -> x+c
      | rule(pat(Op::MUL, {cvar("c"), ivar("x").where(not_const)}),
             [](Match& m) { return m["x"] * m["c"]; })  // c*x -> x*c
      | rule(pat(Op::SUB, {ivar("x"), cvar("c")}),
             [](Match& m) {
               return m["x"] + const_like(m["x"], neg_wrap(cval(m, "c")));
             })  // x-c -> x+(-c)
      | rule(pat(Op::SUB, {ivar("x"), var("y").where(not_const)}),
             [](Match& m) { return m["x"] + m["y"] * -1; })     // x-y -> x+y*-1
      | rule(-ivar("x"), [](Match& m) { return m["x"] * -1; })  // -x -> x*-1
      | rule((ivar("x") + cvar("c1")) + cvar("c2"),
             [](Match& m) { return m["x"] + (m["c1"] + m["c2"]); })  // (x+c1)+c2 -> x+(c1+c2)
      | rule((ivar("x") * cvar("c1")) * cvar("c2"),
             [](Match& m) { return m["x"] * (m["c1"] * m["c2"]); })  // (x*c1)*c2 -> x*(c1*c2)
      | rule((ivar("x") + cvar("c1")) * cvar("c2"),
             [](Match& m) {
               return m["x"] * m["c2"] + m["c1"] * m["c2"];
             })  // (x+c1)*c2 -> x*c2+c1*c2
      | rule((ivar("x") + var("y").where(not_const)) * cvar("c"),
             [](Match& m) {
               return m["x"] * m["c"] + m["y"] * m["c"];
             })  // (x+y)*c -> x*c+y*c: the digits of an index meet their neighbours
      | rule((ivar("x") + cvar("c")) + var("y").where(not_const),
             [](Match& m) { return (m["x"] + m["y"]) + m["c"]; })        // (x+c)+y -> (x+y)+c
      | rule(ivar("x") + var("x"), [](Match& m) { return m["x"] * 2; })  // x+x -> x*2
      | rule(ivar("x") * cvar("c1") + var("x") * cvar("c2"),
             [](Match& m) { return m["x"] * (m["c1"] + m["c2"]); })  // x*c1+x*c2 -> x*(c1+c2)
      | rule(ivar("x") * cvar("c") + var("x"),
             [](Match& m) { return m["x"] * (m["c"] + 1); })  // x*c+x -> x*(c+1)
      | rule((ivar("y") + var("x")) + var("x"),
             [](Match& m) { return m["y"] + m["x"] * 2; })  // (y+x)+x -> y+x*2
      | rule((ivar("y") + var("x") * cvar("c1")) + var("x") * cvar("c2"),
             [](Match& m) {
               return m["y"] + m["x"] * (m["c1"] + m["c2"]);
             })  // (y+x*c1)+x*c2 -> y+x*(c1+c2)
      | rule((ivar("y") + var("x") * cvar("c")) + var("x"),
             [](Match& m) { return m["y"] + m["x"] * (m["c"] + 1); })  // (y+x*c)+x -> y+x*(c+1)
      | rule((ivar("y") + var("x")) + var("x") * cvar("c"),
             [](Match& m) { return m["y"] + m["x"] * (m["c"] + 1); });  // (y+x)+x*c -> y+x*(c+1)
  return set;
}

}  // namespace polygrad
