// Bottom-up graph rebuilding shared by the codegen passes.
#ifndef POLYGRAD_CODEGEN_REBUILD_HPP
#define POLYGRAD_CODEGEN_REBUILD_HPP

#include <functional>
#include <unordered_map>
#include <vector>

#include "ir/uop.hpp"

namespace polygrad::codegen {

/// `root` rebuilt bottom-up: every node gets its rebuilt sources, then `fn` may replace it
/// (return the node unchanged to keep it). `fn` sees each node once, sources already done.
UOpRef rebuild(const UOpRef& root, const std::function<UOpRef(const UOpRef&)>& fn);

/// The loop ids (RANGE args) each node depends on, sorted and memoised: a RANGE adds its own,
/// a REDUCE drops those it reduces over (keeping its ranges' ends').
class LoopDeps {
 public:
  const std::vector<int64_t>& of(const UOp* n);
  /// `n` depends on loop `id` as if it used it (a load from a local array that each iteration
  /// of the loop fills: it may not move out of the loop). Before any of() call.
  void force(const UOp* n, int64_t id) { forced_[n].push_back(id); }

 private:
  std::unordered_map<const UOp*, std::vector<int64_t>> memo_;
  std::unordered_map<const UOp*, std::vector<int64_t>> forced_;
};

/// The value a REDUCE with alu `op` (ADD, MUL, MAX) starts from: its result over no values.
UOpRef reduce_identity(Op op, DType t);
/// `root` with the loop variable `range` replaced by `with`, except inside REDUCEs that reduce
/// over `range` themselves (there the name is bound again).
UOpRef substitute_range(const UOpRef& root, const UOp* range, const UOpRef& with);

/// True when `v` selects or compares (WHERE, CMP*, TRUNC, BITCAST: a decomposed exp2 or log2);
/// the renderer writes such vectors lane by lane, so vector forms avoid them.
bool has_selects(const UOpRef& v);

/// `root` with the index math simplified: INDEX offsets, LOAD/STORE gates and RANGE ends run
/// through the symbolic engine.
UOpRef simplify_indexing(const UOpRef& root);

}  // namespace polygrad::codegen

#endif  // POLYGRAD_CODEGEN_REBUILD_HPP
