// Integer division and modulo by positive constants, using bounds. IDIV truncates and MOD takes
// the dividend's sign (C), so most rules need a dividend proven non-negative and no wrap.
#include "symbolic/rules_util.hpp"
#include "symbolic/simplify.hpp"

namespace polygrad {

using detail::cval;
using detail::ivar;
using detail::linear_no_wrap;
using detail::positive_const;

namespace {

Pattern pconst(const char* name) {
  return cvar(name).where(positive_const);
}

// (x*c1 + y) with c1 % c2 == 0, non-negative and not wrapping, y non-negative: the parts.
bool splits(Match& m, int64_t c2) {
  int64_t c1 = cval(m, "c1");
  if (c1 % c2 != 0) return false;
  auto by = bounds(m["y"]);
  auto all = linear_no_wrap(m["x"]->dtype(), m["x"], c1, m["y"].get());
  return by && by->lo >= 0 && all && all->lo >= 0;
}

// (x*c1 + y) with c2 a multiple of c1, x non-negative, y in [0, c1) and no wrap: the
// multiples of c2 come from x alone.
bool below(Match& m, int64_t c1, int64_t c2) {
  if (c2 % c1 != 0 || c2 == c1) return false;
  auto bx = bounds(m["x"]);
  auto by = bounds(m["y"]);
  return bx && by && bx->lo >= 0 && by->lo >= 0 && by->hi < c1 &&
         linear_no_wrap(m["x"]->dtype(), m["x"], c1, m["y"].get());
}

}  // namespace

const RuleSet& divmod_rules() {
  static const RuleSet set =
      RuleSet("divmod") |
      rule(ivar("x") % pconst("c"),
           [](Match& m) {
             auto b = bounds(m["x"]);
             int64_t c = cval(m, "c");
             if (!b || b->lo < 0 || b->lo / c != b->hi / c) return UOpRef();
             int64_t k = b->lo / c;
             return k == 0 ? m["x"] : m["x"] + const_like(m["x"], -k * c);
           })  // x%c -> x-k*c when x//c is the constant k >= 0
      | rule(ivar("x") % pconst("c"),
             [](Match& m) {
               auto b = bounds(m["x"]);
               return b && b->hi <= 0 && b->lo > -cval(m, "c") ? m["x"] : UOpRef();
             })  // x%c -> x when -c < x <= 0
      | rule(idiv(ivar("x") * pconst("c1") + var("y"), pconst("c2")),
             [](Match& m) {
               int64_t c2 = cval(m, "c2");
               if (!splits(m, c2)) return UOpRef();
               return m["x"] * (cval(m, "c1") / c2) + m["y"] / c2;
             })  // (x*c1+y)//c2 -> x*(c1/c2) + y//c2
      | rule(idiv(ivar("x") * pconst("c1") + var("y"), pconst("c2")),
             [](Match& m) {
               int64_t c1 = cval(m, "c1"), c2 = cval(m, "c2");
               if (!below(m, c1, c2)) return UOpRef();
               return m["x"] / (c2 / c1);
             })  // (x*c1+y)//(c1*d) -> x//d when 0 <= y < c1
      | rule((ivar("x") * pconst("c1") + var("y")) % pconst("c2"),
             [](Match& m) {
               int64_t c2 = cval(m, "c2");
               if (!splits(m, c2)) return UOpRef();
               return m["y"] % c2;
             })  // (x*c1+y)%c2 -> y%c2
      | rule((ivar("x") * pconst("c1") + var("y")) % pconst("c2"),
             [](Match& m) {
               int64_t c1 = cval(m, "c1"), c2 = cval(m, "c2");
               if (!below(m, c1, c2)) return UOpRef();
               return m["x"] % (c2 / c1) * c1 + m["y"];
             })  // (x*c1+y)%(c1*d) -> (x%d)*c1 + y when 0 <= y < c1
      | rule(idiv(ivar("x"), pconst("c")) * pconst("c3") + (var("x") % var("c")) * pconst("c4"),
             [](Match& m) {
               return cval(m, "c") * cval(m, "c4") == cval(m, "c3") ? m["x"] * m["c4"] : UOpRef();
             })  // (x//c)*(c*k) + (x%c)*k -> x*k
      | rule(idiv(ivar("x") * pconst("c1"), pconst("c2")),
             [](Match& m) {
               int64_t c1 = cval(m, "c1"), c2 = cval(m, "c2");
               if (c1 % c2 != 0 || !linear_no_wrap(m["x"]->dtype(), m["x"], c1, nullptr))
                 return UOpRef();
               return m["x"] * (c1 / c2);
             })  // (x*c1)//c2 -> x*(c1/c2)
      | rule((ivar("x") * pconst("c1")) % pconst("c2"),
             [](Match& m) {
               int64_t c1 = cval(m, "c1"), c2 = cval(m, "c2");
               if (c1 % c2 != 0 || !linear_no_wrap(m["x"]->dtype(), m["x"], c1, nullptr))
                 return UOpRef();
               return const_like(m["x"], 0);
             })  // (x*c1)%c2 -> 0
      | rule(idiv(idiv(ivar("x"), pconst("c1")), pconst("c2")),
             [](Match& m) {
               __int128 c = static_cast<__int128>(cval(m, "c1")) * cval(m, "c2");
               if (!fits(m["x"]->dtype(), c, c)) return UOpRef();
               return m["x"] / static_cast<int64_t>(c);
             })  // (x//c1)//c2 -> x//(c1*c2)
      | rule((ivar("x") % pconst("c1")) % pconst("c2"),
             [](Match& m) {
               return cval(m, "c1") % cval(m, "c2") == 0 ? m["x"] % m["c2"] : UOpRef();
             })  // (x%c1)%c2 -> x%c2 when c2 divides c1
      | rule(idiv(ivar("x"), pconst("c")) * var("c") + var("x") % var("c"),
             [](Match& m) { return m["x"]; });  // (x//c)*c + x%c -> x
  return set;
}

}  // namespace polygrad
