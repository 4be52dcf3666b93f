// plan_cpu(): the CPU strategy (strategy.hpp).
#include <algorithm>

#include "codegen/loop_order.hpp"
#include "codegen/optimize.hpp"
#include "codegen/rebuild.hpp"
#include "codegen/stash.hpp"
#include "codegen/strategy.hpp"
#include "codegen/transcendental.hpp"
#include "ir/graph.hpp"

namespace polygrad::codegen {

Planned plan_cpu(const UOpRef& sink, const Target& target, bool scatter) {
  UOpRef ast = sink;
  // exp2 and log2 decomposed where the target has SIMD lanes: the decomposition vectorises,
  // a libm call does not.
  if (!(target.caps.flags & PG_CAP_DECOMPOSE_TRANSCENDENTAL))
    ast = decompose_for_vectors(ast, target);
  // A kernel the upcast vectorises keeps its loops (the vectors need its innermost range);
  // one it does not may have them reordered or tiled, and is planned again if they were.
  UpcastPlan plan = choose_upcast(ast, target);
  if (plan.j == nullptr && !scatter) {
    const UOpRef moved = tile_transposes(order_loops(ast));
    if (moved != ast) {
      ast = moved;
      plan = choose_upcast(ast, target);
    }
  }
  // On a target whose scalar loops nothing vectorises (PG_CAP_EXPLICIT_SIMD), the upcast
  // turns a softmax row's store into a vector store, which stash_reduced_values does not
  // take: stash on the scalar form first, so that the upcast vectorises the read-back (and
  // the linearizer the stash's own loop). Only where the upcast keeps the stashed REDUCEs as
  // they are (one row, no k slices, no tail); otherwise as on other targets.
  if ((target.caps.flags & PG_CAP_EXPLICIT_SIMD) != 0 && plan.j != nullptr && plan.rows == 1 &&
      plan.i == nullptr && plan.k == nullptr && plan.dot_k == nullptr && !plan.tail) {
    Stashed early = stash_reduced_values(ast);
    if (!early.stashes.empty()) {
      const UOpRef upcast = simplify_indexing(apply_upcast(early.sink, plan));
      const std::vector<const UOp*> nodes = toposort(upcast);
      bool kept = true;
      for (const Stash& st : early.stashes)
        kept = kept && std::find(nodes.begin(), nodes.end(), st.reduce) != nodes.end();
      if (kept) {
        Planned out;
        out.sink = upcast;
        out.stashes = std::move(early.stashes);
        return out;
      }
    }
  }
  ast = simplify_indexing(apply_upcast(ast, plan));
  Stashed stashed = stash_reduced_values(ast);
  Planned out;
  out.sink = stashed.sink;
  out.stashes = std::move(stashed.stashes);
  return out;
}

}  // namespace polygrad::codegen
