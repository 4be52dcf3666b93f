// Whole-graph helpers: toposort, substitution, printing and verification.
#ifndef POLYGRAD_IR_GRAPH_HPP
#define POLYGRAD_IR_GRAPH_HPP

#include "ir/uop.hpp"

#include <string>
#include <unordered_map>
#include <vector>

namespace polygrad {

/// Every node reachable from `root`, sources before users, each once. The pointers are
/// borrowed: valid while `root` is alive.
std::vector<const UOp*> toposort(const UOpRef& root);
/// Every node reachable from any of `roots`, sources before users, each once (one walk: a
/// node under several roots is visited once, not once per root).
std::vector<const UOp*> toposort(const std::vector<UOpRef>& roots);

/// Whether a node has `target` among its sources, transitively (or is it), memoised: asking
/// about every node of a graph walks it once. Pointers are borrowed.
class ReachesNode {
 public:
  explicit ReachesNode(const UOp* target) : target_(target) {}
  bool operator()(const UOp* n);

 private:
  const UOp* target_;
  std::unordered_map<const UOp*, bool> memo_;
};

/// `root` with every node that is a key of `replace` swapped for its value (users rebuilt).
UOpRef substitute(const UOpRef& root, const std::unordered_map<const UOp*, UOpRef>& replace);

/// One node: "ADD int32 (%1, %2)" style without numbering: "ADD int32 arg".
std::string node_to_string(const UOp& u);
/// The graph, one line per node in toposort order: "%3 = ADD int32 (%1, %2) arg".
std::string to_string(const UOpRef& root);

/// Checks every node under `root` against its op's rules (source count, source and result
/// dtypes, arg kind); throws IrError naming the op and the rule broken.
void verify(const UOpRef& root);

}  // namespace polygrad

/// Graph passes call POLYGRAD_VERIFY(result) after each pass: verify() in debug builds,
/// nothing when NDEBUG is defined.
#ifndef NDEBUG
#define POLYGRAD_VERIFY(root) ::polygrad::verify(root)
#else
#define POLYGRAD_VERIFY(root) ((void)0)
#endif

#endif  // POLYGRAD_IR_GRAPH_HPP
