// The linearizer's class, shared by its two source files: linearize.cpp (placement, the
// output loops, flattening) and linearize_reduce.cpp (a REDUCE's loops, accumulators and, on
// group targets, its tree). Internal to the codegen; linearize.hpp describes the algorithm.
#ifndef POLYGRAD_CODEGEN_LINEARIZER_HPP
#define POLYGRAD_CODEGEN_LINEARIZER_HPP

#include <map>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "codegen/linearize.hpp"
#include "codegen/rebuild.hpp"
#include "ir/error.hpp"

namespace polygrad::codegen::detail {

/// Kernel ops whose IR and ISA names agree.
// clang-format off
#define PG_CODEGEN_SAME_OPS(X)                                                                \
  X(CONST) X(INDEX) X(LOAD) X(STORE) X(NEG) X(NOT) X(RECIP) X(SQRT) X(EXP2) X(LOG2) X(SIN)   \
  X(TRUNC) X(ADD) X(SUB) X(MUL) X(FDIV) X(IDIV) X(MOD) X(MAX) X(CMPLT) X(CMPNE) X(CMPEQ)     \
  X(AND) X(OR) X(XOR) X(SHL) X(SHR) X(WHERE) X(MULACC) X(CAST) X(BITCAST) X(VECTORIZE) X(GEP)  \
  X(WMMA)
// clang-format on

inline pg_op to_pg(Op op) {
  switch (op) {
#define PG_X(name) \
  case Op::name:   \
    return PG_OP_##name;
    PG_CODEGEN_SAME_OPS(PG_X)
#undef PG_X
    default:
      ir_error("codegen: op " + std::string(op_name(op)) + " has no kernel-program form");
  }
}

using LoopIds = std::vector<int64_t>;  // sorted

struct Inst {
  pg_instruction in{};
  std::vector<uint32_t> srcs;
};

struct Item {
  bool is_scope;
  uint32_t id;
};

struct Scope {
  int parent = -1;
  int64_t loop_id = -1;          ///< -1 for the root
  uint32_t var = 0;              ///< the int64 loop variable's instruction
  std::vector<uint32_t> header;  ///< RANGE, or SPECIAL + CAST
  bool is_loop = false;          ///< closed by END_RANGE(header[0])
  bool open = true;
  std::vector<Item> body;
};

struct PairHash {
  size_t operator()(const std::pair<const UOp*, int>& k) const {
    return std::hash<const void*>{}(k.first) * 31u + static_cast<size_t>(k.second);
  }
};

struct PtrPairHash {
  size_t operator()(const std::pair<const UOp*, const UOp*>& k) const {
    return std::hash<const void*>{}(k.first) * 31u + std::hash<const void*>{}(k.second);
  }
};

class Linearizer {
 public:
  Linearizer(const Target& target, const std::vector<Stash>& stashes, bool grouped,
             const std::vector<Stage>& stages)
      : target_(target), grouped_(grouped) {
    for (const Stash& st : stashes) stash_.emplace(st.reduce, st);
    for (const Stage& st : stages) stages_.emplace(st.loop_id, st.stores);
  }
  Linearized run(const UOpRef& sink);

 private:
  int place(const UOp* n, int ctx);
  uint32_t value(const UOpRef& n, int ctx);
  uint32_t constant(const UOpRef& c);
  uint32_t reduce(const UOp* r, int p);
  std::vector<uint32_t> tree(int p, const std::vector<const UOp*>& group,
                             const std::vector<uint32_t>& parts, const UOp* lidx);
  uint32_t special(const UOp* u, int p);
  /// The dtype of offsets into accumulator arrays: int32 where the index math may be int32.
  DType offset_t() const {
    return grouped_ && target_.caps.index_bits == 32 ? dtypes::int32 : dtypes::index;
  }
  void accumulate(int s, Op op, DType t, uint32_t acc, const UOpRef& at, const UOpRef& v);
  void materialize(int p, const Stash& stash);
  std::vector<const UOp*> reduce_group(const UOp* r, int p);
  bool reaches(const UOp* from, const UOp* to);
  int try_place(const UOp* n, int ctx);
  int reduce_lanes(DType t, const UOpRef& end) const;
  /// Whether a REDUCE group's sum runs in blocks, and the block of a split single range (0:
  /// the outermost range's iterations are the blocks; a range split in lanes alone: the
  /// block in steps of the lanes).
  struct BlockedSum {
    bool on = false;
    int64_t block = 0;
  };
  BlockedSum blocked_sum(const std::vector<const UOp*>& group, size_t full, int lanes) const;
  uint32_t make(pg_op op, DType t, std::vector<uint32_t> srcs, pg_arg arg = {0}, int64_t arg2 = 0);
  uint32_t add(int scope, pg_op op, DType t, std::vector<uint32_t> srcs, pg_arg arg = {0});
  void insert(int scope, Item item);
  int open_loop(int parent, int64_t id, const UOpRef& end);
  void flatten(int s, Linearized& out, std::vector<uint32_t>& final_index);
  uint32_t push_final(Linearized& out, const pg_instruction& in, const std::vector<uint32_t>& srcs);

  const Target& target_;
  const bool grouped_;  // the AST holds its launch indices (the group strategy's plan)
  std::unordered_map<int64_t, std::vector<UOpRef>> stages_;  // by loop id
  std::unordered_map<const UOp*, Stash> stash_;  // by the REDUCE that reads the values back
  LoopDeps deps_;
  std::unordered_map<std::pair<const UOp*, int>, uint32_t, PairHash> memo_;
  std::unordered_map<std::pair<const UOp*, const UOp*>, bool, PtrPairHash> reach_;
  std::vector<const UOp*> reduces_;  // every REDUCE of the kernel, sources first
  std::vector<Inst> insts_;
  std::vector<Scope> scopes_;
  std::vector<UOpRef> keep_;  // nodes built here, alive while their pointers are keys
  std::map<std::string, uint32_t> var_slot_;
  int64_t next_id_ = 0;
  uint32_t buffer_count_ = 0;
  bool has_reduce_ = false;
};

inline pg_arg arg_i(int64_t v) {
  pg_arg a;
  a.i = v;
  return a;
}

}  // namespace polygrad::codegen::detail

#endif  // POLYGRAD_CODEGEN_LINEARIZER_HPP
