// Integer division and modulo by positive constants, using bounds. IDIV truncates and MOD takes
// the dividend's sign (C), so most rules need a dividend proven non-negative and no wrap.
#include "symbolic/rules_util.hpp"
#include "symbolic/simplify.hpp"

#include <algorithm>
#include <vector>

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

/// One term of a sum: t * k (t null: the constant k).
struct Term {
  UOpRef t;
  int64_t k = 0;
};

/// The terms of the ADD chain `x` with their constant coefficients; false when a term could
/// be negative (a constant may: split_sum then needs the whole sum non-negative), or its
/// coefficient or the sum's range does not fit (nothing is rewritten).
bool nonnegative_terms(const UOpRef& x, std::vector<Term>& out) {
  if (x->op() == Op::ADD)
    return nonnegative_terms(x->src(0), out) && nonnegative_terms(x->src(1), out);
  Term term{x, 1};
  if (x->op() == Op::CONST && std::holds_alternative<int64_t>(x->arg()))
    term = {UOpRef(), x->arg_int()};
  else if (x->op() == Op::MUL && positive_const(*x->src(1)))
    term = {x->src(0), x->src(1)->arg_int()};
  if (term.k < 0 && term.t) return false;
  if (term.t) {
    auto b = bounds(term.t);
    if (!b || b->lo < 0) return false;
  }
  out.push_back(term);
  return true;
}

/// t * k as a node (the constant k when t is null).
UOpRef term_value(const UOpRef& t, int64_t k, const UOpRef& like) {
  return !t ? const_like(like, k) : k == 1 ? t : t * k;
}

/// k // g and k % g rounded down (a negative constant term: -262 = 9 * -30 + 8).
int64_t floor_div(int64_t k, int64_t g) {
  return k / g - (k % g < 0);
}
int64_t floor_mod(int64_t k, int64_t g) {
  return k - floor_div(k, g) * g;
}

/// Σ t * (k / g) over the terms, each coefficient's quotient by g (`whole`: only the terms g
/// divides, the rest left out entirely).
UOpRef quotient_sum(const std::vector<Term>& terms, int64_t g, const UOpRef& like, bool whole) {
  UOpRef sum;
  for (const Term& t : terms) {
    if (floor_div(t.k, g) == 0 || (whole && t.k % g != 0)) continue;
    UOpRef v = term_value(t.t, floor_div(t.k, g), like);
    sum = sum ? sum + v : v;
  }
  return sum ? sum : const_like(like, 0);
}

/// Σ t * (k % g) over the terms (`whole`: the terms g does not divide, with their whole
/// coefficients), and its range.
UOpRef remainder_sum(const std::vector<Term>& terms, int64_t g, const UOpRef& like, bool whole,
                     Bounds& range) {
  UOpRef sum;
  range = {0, 0};
  for (const Term& t : terms) {
    const int64_t k = whole ? (t.k % g == 0 ? 0 : t.k) : floor_mod(t.k, g);
    if (k == 0) continue;
    if (!t.t) {
      range.lo += k;
      range.hi += k;
    } else {
      auto b = bounds(t.t);
      range.lo += b->lo * k;
      range.hi += b->hi * k;
    }
    UOpRef v = term_value(t.t, k, like);
    sum = sum ? sum + v : v;
  }
  return sum ? sum : const_like(like, 0);
}

/// x // c (div) or x % c for a sum x of non-negative terms: with g = c or a coefficient that
/// divides c, every coefficient k splits into (k / g) * g + k % g, so x = g * q + r; when
/// 0 <= r < g, x // c = q // (c/g) and x % c = (q % (c/g)) * g + r (a coefficient larger than
/// g counts too: (a * (n + 2) + y) % n is a * 2 + y when that stays below n, the index of
/// tinygrad-style pooling views). Else, with g = c and the terms c divides as q and the others
/// as r >= 0, x // c = q + r // c and x % c = r % c. Null when nothing splits.
UOpRef split_sum(const UOpRef& x, int64_t c, bool div) {
  if (x->op() != Op::ADD) return UOpRef();
  auto bx = bounds(x);
  std::vector<Term> terms;
  if (!bx || !nonnegative_terms(x, terms)) return UOpRef();
  // A negative constant term splits too (x = 9*y - 262 as 9*(y - 30) + 8) when the sum as a
  // whole is non-negative: the division then rounds down, as the split assumes.
  for (const Term& t : terms)
    if (t.k < 0 && bx->lo < 0) return UOpRef();
  std::vector<int64_t> divisors{c};
  for (const Term& t : terms)
    if (t.t && t.k > 1 && t.k < c && c % t.k == 0) divisors.push_back(t.k);
  std::sort(divisors.rbegin(), divisors.rend());
  for (int64_t g : divisors) {
    bool any = false;
    for (const Term& t : terms) any = any || t.k >= g;
    if (!any) continue;
    Bounds r{};
    const UOpRef rest = remainder_sum(terms, g, x, false, r);
    if (r.lo >= 0 && r.hi < g) {
      const UOpRef q = quotient_sum(terms, g, x, false);
      const int64_t d = c / g;
      if (div) return d == 1 ? q : q / d;
      return d == 1 ? rest : q % d * g + rest;
    }
    if (g != c) continue;
    const UOpRef whole_rest = remainder_sum(terms, g, x, true, r);
    bool divisible = false;
    for (const Term& t : terms) divisible = divisible || t.k % g == 0;
    if (divisible && r.lo >= 0)
      return div ? quotient_sum(terms, g, x, true) + whole_rest / c : whole_rest % c;
  }
  return UOpRef();
}

/// A term of an ADD chain as node * k (k 1 for a node that is no product with a constant).
struct Scaled {
  UOpRef t;
  int64_t k = 1;
};

void chain_terms(const UOpRef& x, std::vector<Scaled>& out) {
  if (x->op() == Op::ADD) {
    chain_terms(x->src(0), out);
    chain_terms(x->src(1), out);
    return;
  }
  if (x->op() == Op::MUL && x->src(1)->op() == Op::CONST &&
      std::holds_alternative<int64_t>(x->src(1)->arg()))
    out.push_back({x->src(0), x->src(1)->arg_int()});
  else
    out.push_back({x, 1});
}

/// The sum of `terms` with terms a and b replaced by `merged` (where the first of them stood).
UOpRef replace_pair(const std::vector<Scaled>& terms, size_t a, size_t b, const UOpRef& merged,
                    const UOpRef& like) {
  UOpRef sum;
  for (size_t i = 0; i < terms.size(); ++i) {
    if (i == std::max(a, b)) continue;
    const UOpRef v = i == std::min(a, b) ? merged : term_value(terms[i].t, terms[i].k, like);
    sum = sum ? sum + v : v;
  }
  return sum;
}

/// In an ADD chain, a term (x // (c2 * c)) * (c * k) and a term ((x // c2) % c) * k, or
/// (x // c) * (c * k) and (x % c) * k, wherever they stand, make (x // c2) * k, or x * k:
/// the digits of a mixed-radix number put back together (an index through reshapes that split
/// an axis and merge it again), and ((x % c1) // c) * (c * k) and (x % c) * k with c dividing
/// c1 make (x % c1) * k. x == (x // c) * c + x % c holds for every integer x, as C truncates.
/// Null when no pair is found.
UOpRef recombine_digits(const UOpRef& root) {
  std::vector<Scaled> terms;
  chain_terms(root, terms);
  if (terms.size() < 2) return UOpRef();
  auto const_arg = [](const UOpRef& u, int64_t& v) {
    if (u->op() != Op::CONST || !std::holds_alternative<int64_t>(u->arg()) || u->arg_int() <= 0)
      return false;
    v = u->arg_int();
    return true;
  };
  for (size_t a = 0; a < terms.size(); ++a) {
    const UOpRef& mod = terms[a].t;  // (x' % c) * k
    int64_t c = 0;
    if (mod->op() != Op::MOD || !const_arg(mod->src(1), c)) continue;
    const UOpRef& inner = mod->src(0);  // x' = x // c2, or x itself (c2 = 1)
    UOpRef x = inner;
    int64_t c2 = 1;
    if (inner->op() == Op::IDIV && const_arg(inner->src(1), c2)) x = inner->src(0);
    for (size_t b = 0; b < terms.size(); ++b) {
      const UOpRef& quo = terms[b].t;  // (q // cq) * (c * k)
      int64_t cq = 0, c1 = 0;
      if (b == a || quo->op() != Op::IDIV || !const_arg(quo->src(1), cq) ||
          terms[b].k != c * terms[a].k)
        continue;
      const UOpRef& q = quo->src(0);
      // (x // (c2 * c)) and (x' % c), or ((x' % c1) // c) and x' % c standing for
      // (x' % c1) % c when c divides c1.
      if ((q == x && cq == c2 * c) || (q == inner && cq == c))
        return replace_pair(terms, a, b, term_value(inner, terms[a].k, root), root);
      if (cq == c && q->op() == Op::MOD && q->src(0) == inner && const_arg(q->src(1), c1) &&
          c1 % c == 0)
        return replace_pair(terms, a, b, term_value(q, terms[a].k, root), root);
    }
  }
  return UOpRef();
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
      | rule(idiv(ivar("x"), pconst("c")),
             [](Match& m) { return split_sum(m["x"], cval(m, "c"), true); }) |
      rule(ivar("x") % pconst("c"),
           [](Match& m) {
             return split_sum(m["x"], cval(m, "c"), false);
           })  // sums of non-negative terms: see split_sum
      | rule(idiv(ivar("x") * pconst("c1") + var("y"), pconst("c2")),
             [](Match& m) {
               int64_t c2 = cval(m, "c2");
               if (!splits(m, c2)) return UOpRef();
               return m["x"] * (cval(m, "c1") / c2) + m["y"] / c2;
             })  // (x*c1+y)//c2 -> x*(c1/c2) + y//c2
      | rule((ivar("x") * pconst("c1") + var("y")) % pconst("c2"),
             [](Match& m) {
               int64_t c2 = cval(m, "c2");
               if (!splits(m, c2)) return UOpRef();
               return m["y"] % c2;
             })  // (x*c1+y)%c2 -> y%c2
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
      | rule(ivar("x") + var("y"), [](Match& m) {
          return recombine_digits(m.root());
        });  // (x//c)*(c*k) + ... + (x%c)*k -> x*k and kin: see recombine_digits
  return set;
}

}  // namespace polygrad
