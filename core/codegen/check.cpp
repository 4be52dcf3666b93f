#include "codegen/check.hpp"

#include <polygrad/error.hpp>
#include <polygrad/plugin.hpp>

#include <map>
#include <set>

#include "ir/error.hpp"
#include "ir/graph.hpp"

namespace polygrad::codegen {

namespace {

[[noreturn]] void bad(const UOp& u, const std::string& what) {
  ir_error("codegen: " + node_to_string(u) + ": " + what);
}

bool allowed(Op op) {
  switch (op) {
    case Op::SINK:
    case Op::STORE:
    case Op::INDEX:
    case Op::LOAD:
    case Op::DEFINE_GLOBAL:
    case Op::RANGE:
    case Op::REDUCE:
    case Op::DEFINE_VAR:
    case Op::CONST:
    case Op::CAST:
    case Op::BITCAST:
      return true;
    default:
      return is_alu(op);
  }
}

void check_node(const UOp& u) {
  if (!allowed(u.op())) bad(u, "op is not allowed in a kernel AST");
  const DType t = u.dtype();
  if (t.lanes() != 1) bad(u, "vector dtypes are not allowed in a kernel AST");
  switch (u.op()) {
    case Op::SINK:
      for (const UOpRef& s : u.srcs())
        if (s->op() != Op::STORE) bad(u, "every source must be a STORE");
      break;
    case Op::STORE: {
      if (u.src(0)->op() != Op::INDEX) bad(u, "source 0 must be an INDEX");
      DType want = u.src(0)->dtype().base();
      if (u.src(1)->dtype() != want)
        bad(u, "stores a " + u.src(1)->dtype().name() + " value into a " + want.name() + " buffer");
      if (u.nsrcs() == 3 && u.src(2)->dtype() != dtypes::bool_) bad(u, "gate must be bool");
      break;
    }
    case Op::INDEX:
      if (u.src(0)->op() != Op::DEFINE_GLOBAL) bad(u, "source 0 must be a DEFINE_GLOBAL");
      if (u.nsrcs() != 2) bad(u, "a gate belongs on the LOAD, not on the INDEX");
      if (!u.src(1)->dtype().is_int()) bad(u, "offset must be an int expression");
      break;
    case Op::LOAD:
      if (u.src(0)->op() != Op::INDEX) bad(u, "source 0 must be an INDEX");
      if (u.nsrcs() == 2) bad(u, "a gated LOAD takes (INDEX, alt, gate)");
      if (u.nsrcs() == 3) {
        if (u.src(1)->dtype() != t) bad(u, "alt has dtype " + u.src(1)->dtype().name());
        if (u.src(2)->dtype() != dtypes::bool_) bad(u, "gate must be bool");
      }
      break;
    case Op::DEFINE_GLOBAL:
      if (!t.is_ptr() || t.addrspace() != AddrSpace::global) bad(u, "must be a global pointer");
      if (!std::holds_alternative<int64_t>(u.arg()) || u.arg_int() < 0)
        bad(u, "arg must be a buffer slot >= 0");
      break;
    case Op::RANGE:
      if (!u.src(0)->dtype().is_int() || !t.is_int())
        bad(u, "end must be an int64 expression, got " + u.src(0)->dtype().name());
      if (!std::holds_alternative<int64_t>(u.arg())) bad(u, "arg must be an int64 loop id");
      break;
    case Op::REDUCE: {
      if (!std::holds_alternative<int64_t>(u.arg())) bad(u, "arg must be an alu op");
      int64_t op = u.arg_int();
      if (op != static_cast<int64_t>(Op::ADD) && op != static_cast<int64_t>(Op::MAX) &&
          op != static_cast<int64_t>(Op::MUL))
        bad(u, "reduces with ADD, MAX or MUL only");
      if (u.src(0)->dtype() != t) bad(u, "value has dtype " + u.src(0)->dtype().name());
      for (size_t i = 1; i < u.nsrcs(); ++i)
        if (u.src(i)->op() != Op::RANGE) bad(u, "sources after the first must be RANGEs");
      break;
    }
    case Op::DEFINE_VAR:
      if (!t.is_int()) bad(u, "must have an int dtype");
      break;
    default:
      if (t.is_ptr()) bad(u, "a value op cannot produce a pointer");
      break;
  }
}

}  // namespace

namespace {

/// Errors when a node under `n` uses one of `reduced` (the REDUCE ranges of the kernel) where no
/// REDUCE around it binds it. `bound`: the ranges the REDUCEs on the way down bind; `done`: the
/// (node, bound) pairs already walked.
void check_bound(const UOp* n, const std::set<const UOp*>& reduced, std::set<const UOp*> bound,
                 std::set<std::pair<const UOp*, std::set<const UOp*>>>& done) {
  if (!done.insert({n, bound}).second) return;
  if (n->op() == Op::RANGE && reduced.count(n) && !bound.count(n))
    ir_error("codegen: " + node_to_string(*n) +
             " is used outside its loop (a reduce range outside its REDUCE?)");
  if (n->op() == Op::REDUCE) {
    for (size_t i = 1; i < n->nsrcs(); ++i) bound.insert(n->src(i).get());
    check_bound(n->src(0).get(), reduced, bound, done);
    return;
  }
  for (const UOpRef& s : n->srcs()) check_bound(s.get(), reduced, bound, done);
}

}  // namespace

void check_kernel_ast(const UOpRef& sink) {
  if (!sink || sink->op() != Op::SINK)
    ir_error("codegen: a kernel AST must be rooted at a SINK, got " +
             (sink ? node_to_string(*sink) : std::string("null")));
  std::vector<const UOp*> order = toposort(sink);
  for (const UOp* u : order) check_node(*u);
  verify(sink);
  std::map<int64_t, const UOp*> by_id;
  for (const UOp* u : order) {
    if (u->op() == Op::RANGE) {
      auto [it, fresh] = by_id.emplace(u->arg_int(), u);
      if (!fresh && it->second != u) bad(*u, "two different RANGEs share loop id");
    }
  }
  // Reduce ranges only inside their REDUCE: checked here, before any pass rewrites REDUCEs.
  std::set<const UOp*> reduced;
  for (const UOp* u : order)
    if (u->op() == Op::REDUCE)
      for (size_t i = 1; i < u->nsrcs(); ++i) reduced.insert(u->src(i).get());
  std::set<std::pair<const UOp*, std::set<const UOp*>>> done;
  if (!reduced.empty()) check_bound(sink.get(), reduced, {}, done);
}

void check_target_dtypes(const std::vector<pg_instruction>& program, const Target& target,
                         const std::string& kernel) {
  for (size_t i = 0; i < program.size(); ++i) {
    const pg_instruction& in = program[i];
    if (in.dtype == PG_DTYPE_VOID || ((target.caps.dtype_mask >> in.dtype) & 1u) != 0) continue;
    const char* dtype = sdk::dtype_name(in.dtype);
    std::string why = std::string("(instruction ") + std::to_string(i) + ", " +
                      sdk::op_name(in.op) + " " + dtype + ")";
    if (in.dtype == PG_DTYPE_INT64)
      why +=
          "; the host computes indices, loop counters and sizes in int64, so every kernel "
          "needs it (docs/plugin-sdk.md, \"What a plugin must support\")";
    throw Error(ErrorKind::user,
                "device " + (target.device.empty() ? std::string("?") : target.device) + " lacks " +
                    dtype + ", needed by kernel " + kernel + " " + why,
                PG_ERR_UNSUPPORTED);
  }
}

}  // namespace polygrad::codegen
