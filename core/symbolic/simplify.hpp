// The symbolic engine: rule sets that simplify integer index arithmetic (and fold constants of
// every dtype), and simplify(), which runs them to a fixed point.
#ifndef POLYGRAD_SYMBOLIC_SIMPLIFY_HPP
#define POLYGRAD_SYMBOLIC_SIMPLIFY_HPP

#include "rewrite/rule_set.hpp"

namespace polygrad {

/// ALU ops on constants -> the constant; int nodes whose bounds pin one value -> that value.
const RuleSet& fold_rules();
/// x+0, x*1, x-x, x//1, x%1, where(c, x, x), neg(neg(x)), ...
const RuleSet& identity_rules();
/// Constants to the right, (x+c1)+c2, (x*c1)*c2, (x+c)*k, like terms.
const RuleSet& reassociation_rules();
/// Division and modulo by constants using bounds: x//c -> 0, x%c -> x, (x*c+y)//c, nesting.
const RuleSet& divmod_rules();
/// All of the above, in that order.
const RuleSet& symbolic_rules();

/// `u` rewritten by symbolic_rules() bottom-up to a fixed point.
UOpRef simplify(const UOpRef& u);

}  // namespace polygrad

#endif  // POLYGRAD_SYMBOLIC_SIMPLIFY_HPP
