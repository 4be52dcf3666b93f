// Small AST builders shared by the group strategy's forms (plan.cpp, tiles.cpp).
#ifndef POLYGRAD_CODEGEN_GROUP_AST_PARTS_HPP
#define POLYGRAD_CODEGEN_GROUP_AST_PARTS_HPP

#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "codegen/lower.hpp"
#include "ir/graph.hpp"
#include "ir/uop.hpp"
#include "symbolic/simplify.hpp"

namespace polygrad::codegen::group_ast {

using Ranges = std::vector<const UOp*>;  // outermost (lowest id) first

inline UOpRef idx(int64_t v) {
  return const_int(dtypes::index, v);
}

inline UOpRef special(const char* name, const UOpRef& size) {
  return UOp::make(Op::SPECIAL, dtypes::index, {size}, Arg(std::string(name)));
}

inline int64_t pow2_floor(int64_t v) {
  int64_t p = 1;
  while (p <= v / 2) p *= 2;
  return p;
}

inline UOpRef extent_of(const Ranges& ranges) {
  UOpRef n = idx(1);
  for (const UOp* r : ranges) n = n * r->src(0);
  return simplify(n);
}

/// The constant value of `e`, or -1 when it is symbolic.
inline int64_t constant_or(const UOpRef& e) {
  return e->op() == Op::CONST ? e->arg_int() : -1;
}

/// A flat index over the product of `ranges`' extents, split back into each range: the
/// innermost is f % e_n, the next (f / e_n) % e_(n-1), ..., the outermost takes no modulo.
inline void unflatten(const Ranges& ranges, const UOpRef& f,
                      std::unordered_map<const UOp*, UOpRef>& to) {
  UOpRef rest = f;
  for (size_t i = ranges.size(); i-- > 0;) {
    if (i == 0) {
      to[ranges[i]] = rest;
    } else {
      to[ranges[i]] = rest % ranges[i]->src(0);
      rest = rest / ranges[i]->src(0);
    }
  }
}

/// A flat index f = step * L + lidx over `total` values: whether it is in range (null when it
/// always is), and f clamped to the last value (so loads at it stay in bounds).
struct Shared {
  UOpRef inside;
  UOpRef at;
};
inline Shared share(const UOpRef& f, const UOpRef& total, int64_t threads, bool exact) {
  if (exact) return {UOpRef(), f};
  UOpRef inside = lt(f, total);
  return {inside, where(inside, f, simplify(total - 1))};
}

inline UOpRef and_gate(const UOpRef& a, const UOpRef& b) {
  if (!a) return b;
  if (!b) return a;
  return alu(Op::AND, {a, b});
}

/// Every node of `root` rebuilt with `fn(original, rebuilt)`.
inline UOpRef rewrite(const UOpRef& root,
                      const std::function<UOpRef(const UOp*, const UOpRef&)>& fn) {
  std::unordered_map<const UOp*, UOpRef> done;
  std::vector<UOpRef> srcs;
  for (const UOp* n : toposort(root)) {
    srcs.clear();
    for (const UOpRef& s : n->srcs()) srcs.push_back(done.at(s.get()));
    done.emplace(n, fn(n, n->with_srcs(srcs)));
  }
  return done.at(root.get());
}

/// A kernel's ranges and reduces.
struct Kernel {
  Ranges outputs;  // output ranges, outermost first
  std::vector<const UOp*> reduces;
  std::set<int64_t> reduced_ids;  // every id a REDUCE reduces over
  int64_t next_id = 0;
};

inline Kernel survey(const UOpRef& sink) {
  Kernel k;
  const std::vector<const UOp*> order = toposort(sink);
  std::map<int64_t, const UOp*> ranges;
  for (const UOp* u : order) {
    if (u->op() == Op::RANGE) {
      ranges.emplace(u->arg_int(), u);
      k.next_id = std::max(k.next_id, u->arg_int() + 1);
    }
    if (u->op() == Op::REDUCE) {
      k.reduces.push_back(u);
      for (size_t i = 1; i < u->nsrcs(); ++i) k.reduced_ids.insert(u->src(i)->arg_int());
    }
  }
  for (const auto& [id, r] : ranges)
    if (!k.reduced_ids.count(id)) k.outputs.push_back(r);
  return k;
}

/// The most threads a group may have along dim 0.
inline uint32_t max_local(const codegen::Target& t) {
  return std::max<uint32_t>(1, std::min(t.caps.max_threads_per_group, t.caps.max_local_dims[0]));
}

/// `x` with the nodes of `to` replaced (ranges by their expressions, a REDUCE by another).
inline UOpRef substituted(const UOpRef& x, const std::unordered_map<const UOp*, UOpRef>& to) {
  return rewrite(x, [&](const UOp* orig, const UOpRef& n) -> UOpRef {
    if (auto it = to.find(orig); it != to.end()) return it->second;
    return n;
  });
}

/// A STORE with `gate` added to its own.
inline UOpRef gate_store(const UOpRef& st, const UOpRef& gate) {
  if (!gate) return st;
  if (st->nsrcs() == 3)
    return UOp::make(Op::STORE, st->dtype(), {st->src(0), st->src(1), and_gate(st->src(2), gate)});
  return UOp::make(Op::STORE, st->dtype(), {st->src(0), st->src(1), gate});
}

}  // namespace polygrad::codegen::group_ast

#endif  // POLYGRAD_CODEGEN_GROUP_AST_PARTS_HPP
