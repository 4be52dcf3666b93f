// Graph rewrite drivers: apply a RuleSet over a whole graph.
#ifndef POLYGRAD_REWRITE_GRAPH_REWRITE_HPP
#define POLYGRAD_REWRITE_GRAPH_REWRITE_HPP

#include "rewrite/rule_set.hpp"

#include <memory>

namespace polygrad {

/// Order in which a graph is rewritten.
enum class RewriteMode {
  /// Sources first, then the node, re-matching each result (itself rewritten sources first)
  /// until no rule fires: a fixed point.
  bottom_up,
  /// The node first (to a fixed point), then its sources, then the rebuilt node again.
  top_down,
  /// One walk, sources first; each node is offered to the rules once and results are not
  /// rewritten again.
  single,
};

struct RewriteOptions {
  RewriteMode mode = RewriteMode::bottom_up;
  /// Handed to rewrite functions as Match::ctx<T>().
  void* ctx = nullptr;
  /// Most nested rewrites of rewrites allowed before the driver reports a loop.
  int max_chain = 1000;
};

/// `root` rewritten by `rules`. Throws IrError naming the rule and its file:line when a rule
/// keeps firing (a rewrite result that is already being rewritten, or a chain of results
/// longer than max_chain).
UOpRef graph_rewrite(const UOpRef& root, const RuleSet& rules, const RewriteOptions& opts = {});

namespace detail {
class Rewriter;
}

/// graph_rewrite over many roots that share subgraphs (the index expressions of a kernel's
/// loads and stores): a node rewritten for one root is not rewritten again for the next.
class GraphRewriter {
 public:
  explicit GraphRewriter(const RuleSet& rules, const RewriteOptions& opts = {});
  ~GraphRewriter();
  GraphRewriter(const GraphRewriter&) = delete;
  GraphRewriter& operator=(const GraphRewriter&) = delete;
  /// `root` rewritten, as graph_rewrite(root, rules, opts) would.
  UOpRef rewrite(const UOpRef& root);

 private:
  RewriteOptions opts_;
  std::unique_ptr<detail::Rewriter> rewriter_;
};

}  // namespace polygrad

#endif  // POLYGRAD_REWRITE_GRAPH_REWRITE_HPP
