#include "symbolic/simplify.hpp"

#include "rewrite/graph_rewrite.hpp"

namespace polygrad {

const RuleSet& symbolic_rules() {
  static const RuleSet set =
      fold_rules() + identity_rules() + reassociation_rules() + divmod_rules();
  return set;
}

UOpRef simplify(const UOpRef& u) {
  return graph_rewrite(u, symbolic_rules());
}

}  // namespace polygrad
