#include "symbolic/simplify.hpp"

#include "rewrite/graph_rewrite.hpp"

namespace polygrad {

const RuleSet& symbolic_rules() {
  // (Each rule's decision depends on the node alone: its op, dtype, arg, sources and bounds.)
  static const RuleSet set =
      std::move((fold_rules() + identity_rules() + reassociation_rules() + divmod_rules())
                    .remember_fixed_points());
  return set;
}

UOpRef simplify(const UOpRef& u) {
  return graph_rewrite(u, symbolic_rules());
}

}  // namespace polygrad
