// lower(): the codegen pipeline, kernel naming and launch-size evaluation.
#include "codegen/lower.hpp"

#include <polygrad/plugin.hpp>

#include <cctype>
#include <cstdio>
#include <functional>

#include "codegen/check.hpp"
#include "codegen/group/narrow.hpp"
#include "codegen/linearize.hpp"
#include "codegen/rebuild.hpp"
#include "codegen/strategy.hpp"
#include "codegen/transcendental.hpp"
#include "codegen/unroll.hpp"
#include "ir/error.hpp"
#include "ir/graph.hpp"
#include "support/phase_timing.hpp"

namespace polygrad::codegen {

namespace {

/// FNV-1a over the program bytes: a short, deterministic suffix.
uint32_t program_hash(const Linearized& l) {
  uint64_t h = 1469598103934665603ull;
  auto mix = [&](const void* p, size_t n) {
    const auto* b = static_cast<const unsigned char*>(p);
    for (size_t i = 0; i < n; ++i) h = (h ^ b[i]) * 1099511628211ull;
  };
  mix(l.instructions.data(), l.instructions.size() * sizeof(pg_instruction));
  mix(l.operands.data(), l.operands.size() * sizeof(uint32_t));
  return static_cast<uint32_t>(h ^ (h >> 32));
}

std::string kernel_name(const Linearized& l) {
  std::string name = l.has_reduce ? "r" : "E";
  bool needs_hash = false;
  for (const UOpRef& end : l.out_ends) {
    if (end->op() == Op::CONST) {
      name += '_';
      name += std::to_string(end->arg_int());
    } else if (end->op() == Op::DEFINE_VAR) {
      std::string v;
      for (char ch : end->arg_var().name)
        v += (std::isalnum(static_cast<unsigned char>(ch)) || ch == '_') ? ch : '_';
      name += '_';
      name += v;
    } else {
      name += '_';
      name += 's';
      needs_hash = true;
    }
  }
  if (needs_hash) {
    char buf[16];
    std::snprintf(buf, sizeof(buf), "_%08x", program_hash(l));
    name += buf;
  }
  return name;
}

int64_t eval(const UOp& u, const std::unordered_map<std::string, int64_t>& vals) {
  auto s = [&](size_t i) { return eval(*u.src(i), vals); };
  switch (u.op()) {
    case Op::CONST:
      return u.arg_int();
    case Op::DEFINE_VAR: {
      auto it = vals.find(u.arg_var().name);
      if (it == vals.end())
        ir_error("codegen: launch size needs variable '" + u.arg_var().name + "', not given");
      return it->second;
    }
    case Op::CAST:
      return s(0);
    case Op::ADD:
      return s(0) + s(1);
    case Op::SUB:
      return s(0) - s(1);
    case Op::MUL:
      return s(0) * s(1);
    case Op::NEG:
      return -s(0);
    case Op::MAX:
      return std::max(s(0), s(1));
    case Op::IDIV:
    case Op::MOD: {
      int64_t b = s(1);
      if (b == 0) ir_error("codegen: launch size divides by zero");
      return u.op() == Op::IDIV ? s(0) / b : s(0) % b;
    }
    case Op::CMPLT:
      return s(0) < s(1);
    case Op::CMPNE:
      return s(0) != s(1);
    case Op::CMPEQ:
      return s(0) == s(1);
    case Op::WHERE:
      return s(0) ? s(1) : s(2);
    default:
      ir_error("codegen: cannot evaluate " + node_to_string(u) + " in a launch size");
  }
}

/// Whether a store's address depends on a loaded value (a scatter's out[e] += x with e read
/// from memory): its read-modify-writes of one address must run in the order they were built.
bool stores_at_loaded_index(const UOpRef& sink) {
  for (const UOpRef& st : sink->srcs())
    for (const UOp* u : toposort(st->src(0)))
      if (u->op() == Op::LOAD) return true;
  return false;
}

}  // namespace

pg_kernel_program LoweredKernel::program() const {
  pg_kernel_program p{};
  p.struct_size = sizeof(pg_kernel_program);
  p.isa_version = isa_version;
  p.name = name.c_str();
  p.instructions = instructions.data();
  p.instruction_count = static_cast<uint32_t>(instructions.size());
  p.operands = operands.data();
  p.operand_count = static_cast<uint32_t>(operands.size());
  p.buffer_count = buffer_count;
  p.scalar_count = static_cast<uint32_t>(vars.size());
  for (int d = 0; d < 3; ++d) p.local_size[d] = local_size[d];
  return p;
}

std::array<uint32_t, 3> LoweredKernel::launch_global(
    const std::unordered_map<std::string, int64_t>& vals) const {
  std::array<uint32_t, 3> out{1, 1, 1};
  for (int d = 0; d < 3; ++d) {
    int64_t v = global_size[d] ? eval(*global_size[d], vals) : 1;
    if (v < 0 || v > int64_t{UINT32_MAX})
      ir_error("codegen: kernel '" + name + "' global size " + std::to_string(v) + " along dim " +
               std::to_string(d) + " is out of range");
    out[d] = static_cast<uint32_t>(v);
  }
  return out;
}

LoweredKernel lower(const UOpRef& sink, const Target& target) {
  timing::Timed timed(timing::Phase::lower);
  check_kernel_ast(sink);
  // A scatter keeps its loops as built (the launched range owns its addresses; the others,
  // sequential inside, must not be unrolled into copies whose loads could pass their stores).
  const bool scatter = stores_at_loaded_index(sink);
  UOpRef ast = simplify_indexing(sink);
  ast =
      unroll_small_reduces(scatter ? ast : unroll_selectors(unroll_segments(unroll_strides(ast))));
  if (target.caps.flags & PG_CAP_DECOMPOSE_TRANSCENDENTAL)
    ast = decompose_transcendentals(ast, target);
  const Planned planned = (target.caps.flags & PG_CAP_GROUPS) ? plan_groups(ast, target, scatter)
                                                              : plan_cpu(ast, target, scatter);
  UOpRef planned_sink = planned.grouped ? simplify_indexing(planned.sink) : planned.sink;
  std::vector<Stage> stages = planned.stages;
  for (Stage& st : stages)
    for (UOpRef& store : st.stores) store = simplify_indexing(store);
  if (planned.grouped && target.caps.index_bits == 32)
    planned_sink = narrow_indices(planned_sink, stages, target);
  Linearized l = linearize(planned_sink, target, planned.stashes, planned.grouped, stages);
  if (planned.grouped) l.out_ends = planned.out_ends;

  LoweredKernel k;
  k.name = kernel_name(l);
  check_target_dtypes(l.instructions, target, k.name);
  k.instructions = std::move(l.instructions);
  k.operands = std::move(l.operands);
  k.isa_version = target.isa_version;
  for (const pg_instruction& in : k.instructions)
    if (sdk::op_isa(in.op) > target.isa_version)
      ir_error("codegen: kernel '" + k.name + "' uses " + sdk::op_name(in.op) +
               ", an op of kernel ISA " + std::to_string(sdk::op_isa(in.op)) +
               ", for a target of ISA " + std::to_string(target.isa_version));
  k.buffer_count = l.buffer_count;
  k.vars = std::move(l.vars);
  if (planned.grouped) {
    k.global_size = planned.groups;
    k.local_size = planned.local;
  } else {
    k.global_size = {l.global0 ? l.global0 : const_int(dtypes::index, 1),
                     const_int(dtypes::index, 1), const_int(dtypes::index, 1)};
  }
  return k;
}

}  // namespace polygrad::codegen
