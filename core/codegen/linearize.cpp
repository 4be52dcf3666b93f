// The linearizer's placement, output loops and flattening; the algorithm is described in
// linearize.hpp, a REDUCE's emission is in linearize_reduce.cpp.
#include <algorithm>
#include <optional>
#include <span>

#include "codegen/linearizer.hpp"
#include "ir/graph.hpp"
#include "symbolic/bounds.hpp"
#include "symbolic/simplify.hpp"

namespace polygrad::codegen {

namespace detail {

namespace {

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

}  // namespace

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
    case Op::DEFINE_VAR: {
      const auto slot = var_slot_.find(u->arg_var().name);
      if (slot == var_slot_.end())
        ir_error("codegen: internal error: variable '" + u->arg_var().name +
                 "' is not among the kernel's parameters");
      id = add(p, PG_OP_PARAM_SCALAR, t, {}, arg_i(slot->second));
      break;
    }
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
  // What the reduces emit besides the sink's nodes: a stash's values and a stage's stores. A
  // variable or a buffer may appear only there (a staged operand read at an offset `s0`).
  std::vector<const UOp*> stashed_and_staged;
  for (const auto& [reduce, stash] : stash_)
    for (const UOpRef& root : {stash.index, stash.value})
      for (const UOp* u : toposort(root)) stashed_and_staged.push_back(u);
  for (const auto& [id, stores] : stages_)
    for (const UOpRef& st : stores)
      for (const UOp* u : toposort(st)) stashed_and_staged.push_back(u);
  std::map<int64_t, const UOp*> outputs;
  std::vector<int64_t> reduced;
  std::vector<const UOp*> vars;
  for (const std::vector<const UOp*>* nodes : {&order, &stashed_and_staged})
    for (const UOp* u : *nodes) {
      if (u->op() == Op::RANGE) next_id_ = std::max(next_id_, u->arg_int() + 1);
      if (u->op() == Op::DEFINE_VAR && var_slot_.emplace(u->arg_var().name, 0).second)
        vars.push_back(u);
    }
  for (const UOp* u : order) {
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
  for (const std::vector<const UOp*>* nodes : {&order, &stashed_and_staged})
    for (const UOp* u : *nodes)
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

}  // namespace detail

Linearized linearize(const UOpRef& sink, const Target& target, const std::vector<Stash>& stashes,
                     bool grouped, const std::vector<Stage>& stages) {
  return detail::Linearizer(target, stashes, grouped, stages).run(sink);
}

}  // namespace polygrad::codegen
