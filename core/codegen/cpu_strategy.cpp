// plan_cpu(): the CPU strategy (strategy.hpp).
#include "codegen/loop_order.hpp"
#include "codegen/optimize.hpp"
#include "codegen/rebuild.hpp"
#include "codegen/strategy.hpp"
#include "codegen/transcendental.hpp"

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
  ast = simplify_indexing(apply_upcast(ast, plan));
  Stashed stashed = stash_reduced_values(ast);
  Planned out;
  out.sink = stashed.sink;
  out.stashes = std::move(stashed.stashes);
  return out;
}

}  // namespace polygrad::codegen
