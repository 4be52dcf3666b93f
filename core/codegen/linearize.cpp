// The linearizer; the algorithm is described in linearize.hpp.
#include "codegen/linearize.hpp"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <optional>
#include <span>
#include <unordered_map>

#include "codegen/rebuild.hpp"
#include "ir/error.hpp"
#include "ir/graph.hpp"
#include "symbolic/bounds.hpp"
#include "symbolic/simplify.hpp"

namespace polygrad::codegen {

namespace {

/// Kernel ops whose IR and ISA names agree.
// clang-format off
#define PG_CODEGEN_SAME_OPS(X)                                                                \
  X(CONST) X(INDEX) X(LOAD) X(STORE) X(NEG) X(NOT) X(RECIP) X(SQRT) X(EXP2) X(LOG2) X(SIN)   \
  X(TRUNC) X(ADD) X(SUB) X(MUL) X(FDIV) X(IDIV) X(MOD) X(MAX) X(CMPLT) X(CMPNE) X(CMPEQ)     \
  X(AND) X(OR) X(XOR) X(SHL) X(SHR) X(WHERE) X(MULACC) X(CAST) X(BITCAST) X(VECTORIZE) X(GEP)  \
  X(WMMA)
// clang-format on

pg_op to_pg(Op op) {
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

pg_arg arg_i(int64_t v) {
  pg_arg a;
  a.i = v;
  return a;
}

/// The hints of one of the kernel's stores (PG_STORE_STREAM for an ungated vector store of at
/// least kStreamBytes, a constant size, into a buffer the kernel does not read), given the
/// slots it loads from.
int64_t store_hints(const UOp& store, const std::vector<int64_t>& loaded) {
  const DType t = store.src(1)->dtype();
  const UOp& index = *store.src(0);
  if (store.nsrcs() != 2 || t.lanes() < 2) return 0;
  if (std::find(loaded.begin(), loaded.end(), index.src(0)->arg_int()) != loaded.end()) return 0;
  for (const UOp* u : toposort(index.src(1)))
    if (u->op() == Op::DEFINE_VAR) return 0;  // any size: small ones must stay cached
  std::optional<Bounds> b = bounds(index.src(1));
  if (!b || b->lo < 0) return 0;
  return (b->hi + t.lanes()) * t.scalar_size() >= kStreamBytes ? PG_STORE_STREAM : 0;
}

/// An offset as base + constant (the constant 0 when it is not an ADD of one).
std::pair<const UOp*, int64_t> base_and_step(const UOp* off) {
  if (off->op() == Op::ADD && off->src(1)->op() == Op::CONST)
    return {off->src(0).get(), off->src(1)->arg_int()};
  return {off, 0};
}

/// The end of the run of stores from `first` that store scalars ungated, one element after the
/// other, into a buffer the kernel does not load (at most kMaxRun; `first + 1` when there is
/// none). The linearizer emits such a run's values before its stores: the target's compiler
/// cannot tell the stores from the loads of the values after them, so interleaved they stay
/// scalar moves, and together they become vector moves (a panel copy's P elements of a row).
size_t consecutive_run(std::span<const UOpRef> stores, size_t first,
                       const std::vector<int64_t>& loaded) {
  constexpr size_t kMaxRun = cpu_tuning::kMaxStoreRun;
  auto plain = [&](const UOp& st) {
    const UOp& buffer = *st.src(0)->src(0);
    return st.nsrcs() == 2 && st.src(1)->dtype().lanes() == 1 && buffer.op() == Op::DEFINE_GLOBAL &&
           std::find(loaded.begin(), loaded.end(), buffer.arg_int()) == loaded.end();
  };
  size_t end = first + 1;
  if (!plain(*stores[first])) return end;
  const UOp& index = *stores[first]->src(0);
  const auto [base, step] = base_and_step(index.src(1).get());
  for (; end < stores.size() && end - first < kMaxRun; ++end) {
    const UOp& st = *stores[end];
    const int64_t k = static_cast<int64_t>(end - first);
    if (!plain(st) || st.src(0)->src(0) != index.src(0) ||
        base_and_step(st.src(0)->src(1).get()) != std::pair{base, step + k})
      break;
  }
  return end;
}

int Linearizer::try_place(const UOp* n, int ctx) {
  const LoopIds& ids = deps_.of(n);
  if (ids.empty()) return 0;
  int found = -1;
  size_t seen = 0;
  for (int s = ctx; s > 0; s = scopes_[s].parent) {
    if (std::binary_search(ids.begin(), ids.end(), scopes_[s].loop_id)) {
      if (found < 0) found = s;
      ++seen;
    }
  }
  return seen < ids.size() ? -1 : found;
}

int Linearizer::place(const UOp* n, int ctx) {
  int found = try_place(n, ctx);
  if (found < 0)
    ir_error("codegen: " + node_to_string(*n) + " uses a RANGE outside its loop (a reduce " +
             "range outside its REDUCE?)");
  return found;
}

uint32_t Linearizer::make(pg_op op, DType t, std::vector<uint32_t> srcs, pg_arg arg, int64_t arg2) {
  Inst inst;
  inst.in.op = static_cast<uint16_t>(op);
  inst.in.dtype = static_cast<uint8_t>(t.scalar());
  inst.in.vcount = static_cast<uint8_t>(t.lanes());
  // A STORE has no result; its vcount is the number of lanes it writes: its value's (plugin.h).
  if (op == PG_OP_STORE) inst.in.vcount = insts_.at(srcs.at(1)).in.vcount;
  inst.in.addrspace = static_cast<uint8_t>(t.addrspace());
  inst.in.arg = arg;
  inst.in.arg2 = arg2;
  inst.srcs = std::move(srcs);
  insts_.push_back(std::move(inst));
  return static_cast<uint32_t>(insts_.size() - 1);
}

void Linearizer::insert(int scope, Item item) {
  std::vector<Item>& body = scopes_[scope].body;
  auto at = std::find_if(body.begin(), body.end(),
                         [&](const Item& i) { return i.is_scope && scopes_[i.id].open; });
  body.insert(at, item);
}

uint32_t Linearizer::add(int scope, pg_op op, DType t, std::vector<uint32_t> srcs, pg_arg arg) {
  uint32_t id = make(op, t, std::move(srcs), arg);
  insert(scope, {false, id});
  return id;
}

int Linearizer::open_loop(int parent, int64_t id, const UOpRef& end) {
  uint32_t e = value(end, parent);
  Scope s;
  s.parent = parent;
  s.loop_id = id;
  s.is_loop = true;
  s.var = make(PG_OP_RANGE, end->dtype(), {e}, arg_i(id));
  s.header = {s.var};
  scopes_.push_back(std::move(s));
  int index = static_cast<int>(scopes_.size() - 1);
  insert(parent, {true, static_cast<uint32_t>(index)});
  return index;
}

uint32_t Linearizer::constant(const UOpRef& c) {
  keep_.push_back(c);
  return value(c, 0);
}

uint32_t Linearizer::value(const UOpRef& ref, int ctx) {
  const UOp* u = ref.get();
  if (u->op() == Op::RANGE) {
    for (int s = ctx; s > 0; s = scopes_[s].parent)
      if (scopes_[s].loop_id == u->arg_int()) return scopes_[s].var;
    ir_error("codegen: " + node_to_string(*u) + " is used outside its loop");
  }
  const int p = place(u, ctx);
  if (auto it = memo_.find({u, p}); it != memo_.end()) return it->second;
  uint32_t id = 0;
  const DType t = u->dtype();
  switch (u->op()) {
    case Op::REDUCE:
      id = reduce(u, p);
      break;
    case Op::DEFINE_GLOBAL: {
      const int64_t slot = u->arg_int();
      buffer_count_ = std::max<uint32_t>(buffer_count_, static_cast<uint32_t>(slot + 1));
      id = add(p, PG_OP_PARAM_BUFFER, t, {}, arg_i(slot));
      break;
    }
    case Op::SPECIAL:
      id = special(u, p);
      break;
    case Op::DEFINE_LOCAL:
      id = add(p, PG_OP_DEFINE_LOCAL, t, {}, arg_i(u->arg_ints().at(1)));
      break;
    case Op::DEFINE_VAR:
      id = add(p, PG_OP_PARAM_SCALAR, t, {}, arg_i(var_slot_.at(u->arg_var().name)));
      break;
    case Op::CONST: {
      pg_arg a = arg_i(0);
      if (t.is_float())
        a.f = u->arg_float();
      else
        a.i = u->arg_int();
      id = add(p, PG_OP_CONST, t, {}, a);
      break;
    }
    default: {
      std::vector<uint32_t> srcs;
      for (const UOpRef& s : u->srcs()) srcs.push_back(value(s, p));
      const pg_arg a = u->op() == Op::GEP    ? arg_i(u->arg_ints().at(0))
                       : u->op() == Op::WMMA ? arg_i(u->arg_int())
                                             : arg_i(0);
      id = add(p, to_pg(u->op()), t, std::move(srcs), a);
      break;
    }
  }
  memo_.emplace(std::make_pair(u, p), id);
  return id;
}

int Linearizer::reduce_lanes(DType t, const UOpRef& end) const {
  if (grouped_) return 1;  // a thread's values are L apart: no SIMD lanes to fill
  if (t.is_bool() || t.is_vector() || t.scalar_size() == 0) return 1;
  uint32_t lanes = target_.caps.vector_width_bytes / static_cast<uint32_t>(t.scalar_size());
  lanes = std::min(lanes, target_.caps.max_vector_lanes);
  if (lanes < 2) return 1;
  if (end->op() == Op::CONST && end->arg_int() < 2 * static_cast<int64_t>(lanes)) return 1;
  return static_cast<int>(lanes);
}

void Linearizer::accumulate(int s, Op op, DType t, uint32_t acc, const UOpRef& at,
                            const UOpRef& v) {
  const DType reg = t.scalar_type().ptr(AddrSpace::reg);
  keep_.push_back(at);
  // A vector sum of products (the upcast matmul) accumulates with MULACC: one fused
  // multiply-add per vector instead of a multiply and an add.
  const bool fuse = op == Op::ADD && t.is_vector() && t.is_float() && v->op() == Op::MUL;
  // A sum of tensor-core products WMMA(A, B, 0) accumulates through the C operand.
  if (op == Op::ADD && v->op() == Op::WMMA && is_zero_const(v->src(2).get())) {
    const uint32_t a = value(v->src(0), s), b = value(v->src(1), s);
    uint32_t idx = add(s, PG_OP_INDEX, reg, {acc, value(at, s)});
    uint32_t cur = add(s, PG_OP_LOAD, t, {idx});
    add(s, PG_OP_STORE, dtypes::void_,
        {idx, add(s, PG_OP_WMMA, t, {a, b, cur}, arg_i(v->arg_int()))});
    return;
  }
  std::vector<uint32_t> srcs;
  if (fuse)
    srcs = {value(v->src(0), s), value(v->src(1), s)};
  else
    srcs = {value(v, s)};
  uint32_t idx = add(s, PG_OP_INDEX, reg, {acc, value(at, s)});
  uint32_t cur = add(s, PG_OP_LOAD, t, {idx});
  uint32_t next = fuse ? add(s, PG_OP_MULACC, t, {srcs[0], srcs[1], cur})
                       : add(s, to_pg(op), t, {cur, srcs[0]});
  add(s, PG_OP_STORE, dtypes::void_, {idx, next});
}

bool Linearizer::reaches(const UOp* from, const UOp* to) {
  if (from == to) return true;
  auto key = std::make_pair(from, to);
  if (auto it = reach_.find(key); it != reach_.end()) return it->second;
  bool r = false;
  for (const UOpRef& s : from->srcs()) r = r || reaches(s.get(), to);
  reach_.emplace(key, r);
  return r;
}

std::vector<const UOp*> Linearizer::reduce_group(const UOp* r, int p) {
  std::vector<const UOp*> group{r};
  for (const UOp* s : reduces_) {
    if (s == r || s->dtype() != r->dtype() || s->nsrcs() != r->nsrcs()) continue;
    bool same_ranges = true;
    for (size_t i = 1; i < r->nsrcs(); ++i) same_ranges = same_ranges && s->src(i) == r->src(i);
    if (!same_ranges || memo_.count({s, p}) || try_place(s, p) != p) continue;
    bool independent = true;
    for (const UOp* g : group) independent = independent && !reaches(s, g) && !reaches(g, s);
    if (independent) group.push_back(s);
  }
  return group;
}

namespace {

/// Sums of at least this many values per accumulator are summed in blocks (Linearizer::reduce).
constexpr int64_t kBlockedSum = 128;
/// The blocks of a sum over one symbolic range.
constexpr int64_t kSymbolicBlock = 64;

}  // namespace

Linearizer::BlockedSum Linearizer::blocked_sum(const std::vector<const UOp*>& group, size_t full,
                                               int lanes) const {
  const UOp* r = group.front();
  if (!r->dtype().is_float()) return {};
  // (its ranges: sources 1 .. n, without a group reduce's trailing thread index)
  const size_t n = r->nsrcs() - (r->src(r->nsrcs() - 1)->op() == Op::SPECIAL ? 1 : 0);
  for (const UOp* g : group)
    if (static_cast<Op>(g->arg_int()) != Op::ADD ||
        (r->dtype().is_vector() && g->src(0)->op() == Op::MUL))
      return {};
  if (full == 0) {
    // One range split in lanes: its steps (end / lanes) in blocks of about their square root.
    const UOpRef& end = r->src(1)->src(0);
    if (lanes == 1 || n != 2 || end->op() != Op::CONST) return {};
    const int64_t steps = end->arg_int() / lanes;
    if (steps < kBlockedSum) return {};
    int64_t b = 16;
    while ((b + 1) * (b + 1) <= steps) ++b;
    return {true, b};
  }
  // One symbolic range (a batch): blocks of kSymbolicBlock and a rest.
  const UOpRef& first = r->src(1)->src(0);
  if (n == 2 && lanes == 1 && first->op() != Op::CONST) return {true, kSymbolicBlock};
  int64_t values = 1;
  for (size_t i = 1; i < n; ++i) {
    const UOpRef& end = r->src(i)->src(0);
    if (end->op() != Op::CONST) return {};
    values *= end->arg_int();
  }
  if (values / lanes < kBlockedSum) return {};
  if (n > 2 || lanes > 1) return {true, 0};  // blocks of the outermost range
  // One range: split in blocks of the divisor nearest its square root, at least 16.
  const int64_t k = first->arg_int();
  int64_t best = 0;
  for (int64_t b = 16; b * b <= 4 * k && b <= k / 2; ++b)
    if (k % b == 0 && (best == 0 || std::llabs(b * b - k) < std::llabs(best * best - k))) best = b;
  if (best == 0) return {};
  return {true, best};
}

void Linearizer::materialize(int p, const Stash& stash) {
  const UOp* k = stash.reduce->src(1).get();
  const int64_t id = next_id_++;
  const UOpRef kv = range(k->src(0), id);
  const UOpRef at = simplify_indexing(substitute_range(stash.index, k, kv));
  const UOpRef v = simplify_indexing(substitute_range(stash.value, k, kv));
  keep_.push_back(at);
  keep_.push_back(v);
  const int s = open_loop(p, id, k->src(0));
  add(s, PG_OP_STORE, dtypes::void_, {value(at, s), value(v, s)});
  scopes_[s].open = false;
}

uint32_t Linearizer::reduce(const UOp* r, int p) {
  has_reduce_ = true;
  // Every REDUCE over the same RANGEs that is placed here too shares the loops (matmul's
  // upcast rows and vectors: one k loop with many independent accumulators).
  const std::vector<const UOp*> group = reduce_group(r, p);
  const size_t n = group.size();
  const DType t = r->dtype();
  const DType reg = t.scalar_type().ptr(AddrSpace::reg);
  // A trailing SPECIAL (the group strategy's thread index): the group's threads each reduce
  // their share, then their partials meet in a tree (Linearizer::tree).
  const UOp* lidx =
      r->src(r->nsrcs() - 1)->op() == Op::SPECIAL ? r->src(r->nsrcs() - 1).get() : nullptr;
  const size_t nranges = r->nsrcs() - 1 - (lidx != nullptr ? 1 : 0);
  const int lanes = nranges == 0 ? 1 : reduce_lanes(t, r->src(nranges)->src(0));
  const int width = t.lanes();  // elements per lane (a vector REDUCE's lanes are vectors)
  // Stashed values are stored in a loop of their own first (an elementwise loop the target
  // vectorises as it does any), then read back by the reduce loop.
  for (const UOp* g : group)
    if (auto it = stash_.find(g); it != stash_.end()) materialize(p, it->second);

  std::vector<uint32_t> acc(n);
  auto init_lanes = [&](int scope, size_t g, uint32_t into) {
    const uint32_t init = constant(reduce_identity(static_cast<Op>(group[g]->arg_int()), t));
    for (int l = 0; l < lanes; ++l) {
      uint32_t idx =
          add(scope, PG_OP_INDEX, reg, {into, constant(const_int(offset_t(), int64_t{l} * width))});
      add(scope, PG_OP_STORE, dtypes::void_, {idx, init});
    }
  };
  for (size_t g = 0; g < n; ++g) {
    acc[g] = add(p, PG_OP_DEFINE_REG, reg, {}, arg_i(int64_t{lanes} * width));
    init_lanes(p, g, acc[g]);
  }
  const size_t full = lanes > 1 ? nranges - 1 : nranges;
  // A long float sum in blocks: each iteration of its outermost loop (split in two when it is
  // the only one, or its steps of lanes when it is split in lanes alone) sums into partial
  // accumulators, added to the sum after it, so each
  // accumulator's rounding error grows with the block and the block count, not with all the
  // values it adds (a column sum of 4096 rows: 4e-6 -> 5e-7 relative; torch's pairwise
  // kernels 2e-7). Not a product's sum (the upcast matmul's, whose k slices already cut it).
  bool staged = false;
  for (size_t i = 1; i <= nranges; ++i) staged = staged || stages_.count(r->src(i)->arg_int());
  // (Not a staged tile's: its slices already cut the sums short.)
  const BlockedSum blocked = staged ? BlockedSum{} : blocked_sum(group, full, lanes);
  std::vector<uint32_t> part(blocked.on ? n : 0);
  for (size_t g = 0; g < part.size(); ++g)
    part[g] = add(p, PG_OP_DEFINE_REG, reg, {}, arg_i(int64_t{lanes} * width));
  const std::vector<uint32_t>& into = blocked.on ? part : acc;
  // group[g]'s value, with range `k` at `at` (k null: as it is), added into lane `lane` of
  // dst[g] in scope `sc`.
  auto add_value = [&](int sc, size_t g, const std::vector<uint32_t>& dst, const UOpRef& lane,
                       const UOp* k, const UOpRef& at) {
    UOpRef v = group[g]->src(0);
    if (k != nullptr) {
      v = simplify_indexing(substitute_range(v, k, at));
      keep_.push_back(v);
    }
    accumulate(sc, static_cast<Op>(group[g]->arg_int()), t, dst[g], lane, v);
  };
  // The block's partial sums join the sums, in the block's loop after the inner ones.
  auto join_parts = [&](int sc) {
    for (size_t g = 0; g < n; ++g)
      for (int l = 0; l < lanes; ++l) {
        const uint32_t at = constant(const_int(offset_t(), int64_t{l} * width));
        const uint32_t pi = add(sc, PG_OP_INDEX, reg, {part[g], at});
        const uint32_t ai = add(sc, PG_OP_INDEX, reg, {acc[g], at});
        const uint32_t sum =
            add(sc, PG_OP_ADD, t, {add(sc, PG_OP_LOAD, t, {ai}), add(sc, PG_OP_LOAD, t, {pi})});
        add(sc, PG_OP_STORE, dtypes::void_, {ai, sum});
      }
  };
  const UOpRef lane0 = const_int(offset_t(), 0);
  std::vector<int> loops;
  int s = p;
  int outer = -1;            // the blocked sum's outer loop
  UOpRef split_k, split_at;  // a split single range: k -> k0 * B + k1
  UOpRef split_rest;         // ...and its last end % B values, past the blocks
  for (size_t i = 1; i <= full; ++i) {
    if (i == 1 && blocked.on && blocked.block > 0) {
      const UOp* k = r->src(1).get();
      const int64_t id0 = next_id_++, id1 = next_id_++;
      const UOpRef end0 = simplify(k->src(0) / blocked.block);
      const UOpRef end1 = const_int(k->src(0)->dtype(), blocked.block);
      split_rest = simplify(k->src(0) % blocked.block);
      keep_.push_back(split_rest);
      keep_.push_back(end0);
      keep_.push_back(end1);
      outer = s = open_loop(s, id0, end0);
      loops.push_back(s);
      for (size_t g = 0; g < n; ++g) init_lanes(s, g, part[g]);
      s = open_loop(s, id1, end1);
      loops.push_back(s);
      split_k = r->src(1);
      split_at = range(end0, id0) * blocked.block + range(end1, id1);
      keep_.push_back(split_at);
      continue;
    }
    s = open_loop(s, r->src(i)->arg_int(), r->src(i)->src(0));
    loops.push_back(s);
    if (auto it = stages_.find(r->src(i)->arg_int()); it != stages_.end()) {
      // The group's threads store this iteration's tiles, then wait for one another.
      for (const UOpRef& st : it->second) {
        std::vector<uint32_t> srcs;
        for (const UOpRef& src : st->srcs()) srcs.push_back(value(src, s));
        add(s, PG_OP_STORE, dtypes::void_, std::move(srcs));
      }
      add(s, PG_OP_BARRIER, dtypes::void_, {});
    }
    if (i == 1 && blocked.on) {
      outer = s;
      for (size_t g = 0; g < n; ++g) init_lanes(s, g, part[g]);
    }
  }
  if (lanes == 1) {
    for (size_t g = 0; g < n; ++g) add_value(s, g, into, lane0, split_k.get(), split_at);
  } else {
    const UOp* k = r->src(nranges).get();
    const UOpRef& end = k->src(0);
    const UOpRef main_end = simplify(end / lanes);
    const UOpRef tail_end = simplify(end % lanes);
    keep_.push_back(main_end);
    keep_.push_back(tail_end);
    bool branchy = false;
    for (const UOp* g : group) branchy = branchy || has_selects(g->src(0));
    // The values for k = k0 * lanes + l, l < lanes, added into `dst`'s lanes in scope `sm`.
    auto lane_values = [&](int sm, const UOpRef& k0, const std::vector<uint32_t>& dst) {
      keep_.push_back(k0);
      if (branchy) {
        // The lanes as a loop with a constant trip count (not unrolled): its iterations touch
        // distinct accumulators, so clang's loop vectoriser turns it into vector code without
        // reordering a float sum, however large the value (SLP gave up on the unrolled copies
        // of a decomposed exp2). The accumulators stay in memory, so plain values keep the
        // unrolled form below, which SLP keeps in registers.
        const int64_t lane_id = next_id_++;
        const UOpRef lane = range(const_int(dtypes::index, lanes), lane_id);
        const int sl = open_loop(sm, lane_id, lane->src(0));
        for (size_t g = 0; g < n; ++g) add_value(sl, g, dst, lane, k, k0 * lanes + lane);
        scopes_[sl].open = false;
      } else {
        for (int l = 0; l < lanes; ++l)
          for (size_t g = 0; g < n; ++g)
            add_value(sm, g, dst, const_int(dtypes::index, l), k, k0 * lanes + l);
      }
    };
    if (full == 0 && blocked.on) {
      // One long range: its steps of `lanes` values in blocks, each summed into partial
      // sums added to the sums after it (softmax over 50257 columns: 3.9e-6 -> 1.2e-6 relative),
      // then the steps past the last whole block.
      const int64_t steps = main_end->arg_int(), b = blocked.block, blocks = steps / b;
      const int64_t outer_id = next_id_++, inner_id = next_id_++;
      const UOpRef ob = range(const_int(dtypes::index, blocks), outer_id);
      const UOpRef ib = range(const_int(dtypes::index, b), inner_id);
      const int so = open_loop(s, outer_id, ob->src(0));
      for (size_t g = 0; g < n; ++g) init_lanes(so, g, part[g]);
      const int si = open_loop(so, inner_id, ib->src(0));
      lane_values(si, ob * b + ib, part);
      scopes_[si].open = false;
      join_parts(so);
      scopes_[so].open = false;
      if (steps % b != 0) {
        const int64_t rest_id = next_id_++;
        const UOpRef kr = range(const_int(dtypes::index, steps % b), rest_id);
        const int sr = open_loop(s, rest_id, kr->src(0));
        lane_values(sr, kr + blocks * b, acc);
        scopes_[sr].open = false;
      }
    } else {
      const int64_t main_id = next_id_++;
      const int sm = open_loop(s, main_id, main_end);
      lane_values(sm, range(main_end, main_id), into);
      scopes_[sm].open = false;
    }
    if (!(tail_end->op() == Op::CONST && tail_end->arg_int() == 0)) {
      const int64_t tail_id = next_id_++;
      const UOpRef kt = range(tail_end, tail_id);
      const int st = open_loop(s, tail_id, tail_end);
      // (past a blocked single range's blocks: into the sums themselves)
      for (size_t g = 0; g < n; ++g)
        add_value(st, g, full == 0 ? acc : into, lane0, k, main_end * lanes + kt);
      scopes_[st].open = false;
    }
  }
  for (auto it = loops.rbegin(); it != loops.rend(); ++it) {
    if (*it == outer) join_parts(outer);
    if (stages_.count(scopes_[*it].loop_id)) add(*it, PG_OP_BARRIER, dtypes::void_, {});
    scopes_[*it].open = false;
  }
  if (split_rest && !(split_rest->op() == Op::CONST && split_rest->arg_int() == 0)) {
    // A symbolic range's values past its whole blocks, straight into the sums.
    const int64_t rest_id = next_id_++;
    const UOpRef kr = range(split_rest, rest_id);
    const UOpRef at = simplify(split_k->src(0) - split_rest) + kr;
    keep_.push_back(at);
    const int sr = open_loop(p, rest_id, split_rest);
    for (size_t g = 0; g < n; ++g) add_value(sr, g, acc, lane0, split_k.get(), at);
    scopes_[sr].open = false;
  }

  std::vector<uint32_t> results(n);
  for (size_t g = 0; g < n; ++g) {
    const Op op = static_cast<Op>(group[g]->arg_int());
    auto lane_value = [&](int l) {
      uint32_t idx =
          add(p, PG_OP_INDEX, reg, {acc[g], constant(const_int(offset_t(), int64_t{l} * width))});
      return add(p, PG_OP_LOAD, t, {idx});
    };
    results[g] = lane_value(0);
    for (int l = 1; l < lanes; ++l) results[g] = add(p, to_pg(op), t, {results[g], lane_value(l)});
  }
  if (lidx != nullptr) results = tree(p, group, results, lidx);
  for (size_t g = 1; g < n; ++g) memo_.emplace(std::make_pair(group[g], p), results[g]);
  return results[0];
}

uint32_t Linearizer::special(const UOp* u, int p) {
  // "gidx0", "lidx1": the kind from the first letter, the dim from the last.
  const std::string& name = u->arg_str();
  const int64_t kind = name[0] == 'g' ? PG_SPECIAL_GROUP : PG_SPECIAL_LOCAL;
  const int64_t dim = name.back() - '0';
  if (name.size() != 5 || (name[0] != 'g' && name[0] != 'l') || dim < 0 || dim > 2)
    ir_error("codegen: SPECIAL '" + name + "' is not gidxD or lidxD (D in 0..2)");
  const uint32_t s = make(PG_OP_SPECIAL, dtypes::int32, {}, arg_i(dim), kind);
  insert(p, {false, s});
  return u->dtype() == dtypes::int32 ? s : add(p, PG_OP_CAST, u->dtype(), {s});
}

std::vector<uint32_t> Linearizer::tree(int p, const std::vector<const UOp*>& group,
                                       const std::vector<uint32_t>& parts, const UOp* lidx) {
  // Each thread stores its partial at [lidx]; then for s = L/2, L/4, ..., 1 the threads below
  // s add [lidx + s] into [lidx], a barrier after each step; every thread reads [0]. The last
  // barrier keeps the array from being written again (a reduce in a loop) before all have
  // read it. Gated loads and stores, not branches: every thread reaches every barrier.
  const int64_t threads = lidx->src(0)->arg_int();
  const DType t = group.front()->dtype();
  const DType lp = t.scalar_type().ptr(AddrSpace::local);
  const uint32_t me = value(lidx->ref(), p);
  const size_t n = group.size();
  std::vector<uint32_t> arrays(n), mine(n), out(n);
  for (size_t g = 0; g < n; ++g) {
    arrays[g] = add(0, PG_OP_DEFINE_LOCAL, lp, {}, arg_i(threads));
    mine[g] = add(p, PG_OP_INDEX, lp, {arrays[g], me});
    add(p, PG_OP_STORE, dtypes::void_, {mine[g], parts[g]});
  }
  add(p, PG_OP_BARRIER, dtypes::void_, {});
  for (int64_t s = threads / 2; s >= 1; s /= 2) {
    const uint32_t step = constant(const_int(lidx->dtype(), s));
    const uint32_t below = add(p, PG_OP_CMPLT, dtypes::bool_, {me, step});
    const uint32_t other = add(p, PG_OP_ADD, lidx->dtype(), {me, step});
    for (size_t g = 0; g < n; ++g) {
      const Op op = static_cast<Op>(group[g]->arg_int());
      const uint32_t identity = constant(reduce_identity(op, t));
      const uint32_t a = add(p, PG_OP_LOAD, t, {mine[g], identity, below});
      const uint32_t at = add(p, PG_OP_INDEX, lp, {arrays[g], other});
      const uint32_t b = add(p, PG_OP_LOAD, t, {at, identity, below});
      add(p, PG_OP_STORE, dtypes::void_, {mine[g], add(p, to_pg(op), t, {a, b}), below});
    }
    add(p, PG_OP_BARRIER, dtypes::void_, {});
  }
  const uint32_t zero = constant(const_int(lidx->dtype(), 0));
  for (size_t g = 0; g < n; ++g)
    out[g] = add(p, PG_OP_LOAD, t, {add(p, PG_OP_INDEX, lp, {arrays[g], zero})});
  add(p, PG_OP_BARRIER, dtypes::void_, {});
  return out;
}

uint32_t Linearizer::push_final(Linearized& out, const pg_instruction& in,
                                const std::vector<uint32_t>& srcs) {
  pg_instruction f = in;
  f.src_start = static_cast<uint32_t>(out.operands.size());
  f.src_count = static_cast<uint32_t>(srcs.size());
  out.operands.insert(out.operands.end(), srcs.begin(), srcs.end());
  out.instructions.push_back(f);
  return static_cast<uint32_t>(out.instructions.size() - 1);
}

void Linearizer::flatten(int s, Linearized& out, std::vector<uint32_t>& final_index) {
  auto emit = [&](uint32_t id) {
    std::vector<uint32_t> srcs;
    for (uint32_t src : insts_[id].srcs) {
      if (final_index[src] == UINT32_MAX)
        ir_error("codegen: internal error: instruction placed before its source");
      srcs.push_back(final_index[src]);
    }
    final_index[id] = push_final(out, insts_[id].in, srcs);
  };
  for (uint32_t h : scopes_[s].header) emit(h);
  for (const Item& item : scopes_[s].body) {
    if (item.is_scope)
      flatten(static_cast<int>(item.id), out, final_index);
    else
      emit(item.id);
  }
  if (scopes_[s].is_loop) {
    pg_instruction end{};
    end.op = PG_OP_END_RANGE;
    end.dtype = PG_DTYPE_VOID;
    end.vcount = 1;
    push_final(out, end, {final_index[scopes_[s].header[0]]});
  }
}

Linearized Linearizer::run(const UOpRef& sink) {
  Linearized out;
  std::vector<const UOp*> order = toposort(sink);
  // A load from a local array a stage fills stays inside the stage's loop, between its
  // barriers, even where its address does not change with the loop (a tensor core's fragment).
  std::unordered_map<const UOp*, int64_t> staged;  // DEFINE_LOCAL -> loop id
  for (const auto& [id, stores] : stages_)
    for (const UOpRef& st : stores) staged.emplace(st->src(0)->src(0).get(), id);
  for (const UOp* u : order)
    if (u->op() == Op::LOAD)
      if (auto it = staged.find(u->src(0)->src(0).get()); it != staged.end())
        deps_.force(u, it->second);
  std::map<int64_t, const UOp*> outputs;
  std::vector<int64_t> reduced;
  std::vector<const UOp*> vars;
  for (const UOp* u : order) {
    if (u->op() == Op::RANGE) next_id_ = std::max(next_id_, u->arg_int() + 1);
    if (u->op() == Op::DEFINE_VAR && var_slot_.emplace(u->arg_var().name, 0).second)
      vars.push_back(u);
    if (u->op() == Op::REDUCE) {
      reduces_.push_back(u);
      for (size_t i = 1; i < u->nsrcs(); ++i)
        if (u->src(i)->op() == Op::RANGE) reduced.push_back(u->src(i)->arg_int());
    }
  }
  for (const UOp* u : order)
    if (u->op() == Op::RANGE &&
        std::find(reduced.begin(), reduced.end(), u->arg_int()) == reduced.end())
      outputs.emplace(u->arg_int(), u);
  // A stash's value may be all that uses a variable (the sum reads the stashed values back).
  for (const auto& [reduce, stash] : stash_)
    for (const UOpRef& root : {stash.index, stash.value})
      for (const UOp* u : toposort(root))
        if (u->op() == Op::DEFINE_VAR && var_slot_.emplace(u->arg_var().name, 0).second)
          vars.push_back(u);
  uint32_t slot = 0;
  for (auto& [name, s] : var_slot_) s = slot++;
  out.vars.resize(var_slot_.size());
  for (const UOp* u : vars) out.vars[var_slot_.at(u->arg_var().name)] = u->arg_var();

  scopes_.push_back(Scope{});  // the root
  int s = 0;
  bool first = true;
  // The launch steps run in parallel, so the launch range must be one every store's address
  // depends on: not a k slice (optimize.hpp), whose steps all add into the same outputs.
  auto stores_depend_on = [&](const UOp* rng) {
    for (const UOpRef& st : sink->srcs()) {
      const LoopIds& ids = deps_.of(st->src(0).get());
      if (!std::binary_search(ids.begin(), ids.end(), rng->arg_int())) return false;
    }
    return true;
  };
  // Nor one under a reduce that no output range moves (a single row's softmax, its max over the
  // row read by every output): each launch step would compute that reduce again. The outputs
  // then run as a loop, after the reduce, on one launch step.
  auto moved_by_an_output = [&](const UOp* r) {
    const LoopIds& ids = deps_.of(r);
    return std::any_of(outputs.begin(), outputs.end(), [&](const auto& o) {
      return std::binary_search(ids.begin(), ids.end(), o.first);
    });
  };
  const bool serial =
      !outputs.empty() && !std::all_of(reduces_.begin(), reduces_.end(), moved_by_an_output);
  for (const auto& [id, rng] : outputs) {
    const UOpRef& end = rng->src(0);
    out.out_ends.push_back(end);
    std::optional<Bounds> b = bounds(end);
    bool special = !grouped_ && first && !serial && b &&
                   b->hi <= int64_t{target_.caps.max_global_dims[0]} && stores_depend_on(rng);
    first = false;
    if (!special) {
      s = open_loop(s, id, end);
      continue;
    }
    out.global0 = end;
    Scope sc;
    sc.parent = s;
    sc.loop_id = id;
    uint32_t g = make(PG_OP_SPECIAL, dtypes::int32, {}, arg_i(0), PG_SPECIAL_GLOBAL);
    sc.var = make(PG_OP_CAST, dtypes::index, {g});
    sc.header = {g, sc.var};
    scopes_.push_back(std::move(sc));
    int index = static_cast<int>(scopes_.size() - 1);
    insert(s, {true, static_cast<uint32_t>(index)});
    s = index;
  }
  std::vector<int64_t> loaded;
  for (const UOp* u : order)
    if (u->op() == Op::LOAD && u->src(0)->src(0)->op() == Op::DEFINE_GLOBAL)
      loaded.push_back(u->src(0)->src(0)->arg_int());
  const std::span<const UOpRef> stores = sink->srcs();
  for (size_t first_store = 0; first_store < stores.size();) {
    const size_t end = consecutive_run(stores, first_store, loaded);
    std::vector<std::pair<int, std::vector<uint32_t>>> run;
    for (size_t i = first_store; i < end; ++i) {
      int p = place(stores[i].get(), s);
      std::vector<uint32_t> srcs;
      for (const UOpRef& src : stores[i]->srcs()) srcs.push_back(value(src, p));
      run.emplace_back(p, std::move(srcs));
    }
    for (size_t i = first_store; i < end; ++i)
      add(run[i - first_store].first, PG_OP_STORE, dtypes::void_,
          std::move(run[i - first_store].second), arg_i(store_hints(*stores[i], loaded)));
    first_store = end;
  }
  for (Scope& sc : scopes_) sc.open = false;

  std::vector<uint32_t> final_index(insts_.size(), UINT32_MAX);
  flatten(0, out, final_index);
  out.buffer_count = buffer_count_;
  out.has_reduce = has_reduce_;
  return out;
}

}  // namespace

Linearized linearize(const UOpRef& sink, const Target& target, const std::vector<Stash>& stashes,
                     bool grouped, const std::vector<Stage>& stages) {
  return Linearizer(target, stashes, grouped, stages).run(sink);
}

}  // namespace polygrad::codegen
