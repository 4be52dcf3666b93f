// Size expressions over bound variables (see symbolic.hpp).
#include "tensor/symbolic.hpp"

#include "ir/error.hpp"
#include "ir/graph.hpp"

#include <polygrad/error.hpp>

#include <atomic>

namespace polygrad::lazy {

namespace {

std::atomic<bool> bound_once{false};

bool is_movement_with_dims(Op op) {
  return op == Op::RESHAPE || op == Op::EXPAND || op == Op::PAD || op == Op::SHRINK;
}

/// The leaves of a product, in order (a merged (n, d) axis is MUL(n, d)).
void factors(const UOpRef& d, std::vector<UOpRef>& out) {
  if (d->op() == Op::MUL) {
    factors(d->src(0), out);
    factors(d->src(1), out);
  } else {
    out.push_back(d);
  }
}

SymShape consts(const Shape& s) {
  SymShape out;
  for (int64_t d : s) out.push_back(dim_const(d));
  return out;
}

SymShape compute(const UOp* u, const std::unordered_map<const UOp*, SymShape>& done) {
  auto src = [&](size_t i) -> const SymShape& { return done.at(u->src(i).get()); };
  switch (u->op()) {
    case Op::BUFFER:
      return {dim_const(buffer_count(u))};
    case Op::IOTA:
      return {dim_const(u->arg_int())};
    case Op::CONST:
    case Op::VCONST:
    case Op::DEFINE_VAR:
    case Op::BIND:
    case Op::SINK:
      return {};
    case Op::RESHAPE:
    case Op::EXPAND:
      return SymShape(u->srcs().begin() + 1, u->srcs().end());
    case Op::PERMUTE: {
      SymShape out;
      for (int64_t a : u->arg_ints()) out.push_back(src(0).at(static_cast<size_t>(a)));
      return out;
    }
    case Op::PAD:
    case Op::SHRINK: {
      SymShape s = src(0);
      for (size_t i = 0; i < s.size(); ++i) {
        const UOpRef &a = u->src(1 + 2 * i), &b = u->src(2 + 2 * i);
        s[i] = u->op() == Op::PAD ? dim_add(dim_add(s[i], a), b)
                                  : dim_add(b, dim_mul(a, dim_const(-1)));
      }
      return s;
    }
    case Op::REDUCE_AXIS: {
      SymShape s = src(0);
      for (int64_t a : reduce_axes(u)) s.at(static_cast<size_t>(a)) = dim_const(1);
      return s;
    }
    default: {
      if (u->nsrcs() == 0) return {};
      if (u->op() == Op::ASSIGN && u->nsrcs() == 3) return src(0);  // (a write through a view)
      // Elementwise (and CAST, COPY, ASSIGN...): the sources have one shape; an axis is
      // symbolic when it is in some source.
      SymShape s = src(u->op() == Op::WHERE ? 1 : 0);
      for (size_t i = 0; i < u->nsrcs(); ++i) {
        const SymShape& o = src(i);
        if (o.size() != s.size()) continue;
        for (size_t k = 0; k < s.size(); ++k)
          if (is_static(s[k].get()) && !is_static(o[k].get())) s[k] = o[k];
      }
      return s;
    }
  }
}

}  // namespace

UOpRef bind_var(const std::string& name, int64_t vmin, int64_t vmax, int64_t value) {
  bool ident = !name.empty() && !(name[0] >= '0' && name[0] <= '9');
  for (char c : name)
    ident = ident && ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                      c == '_');
  if (!ident)
    user_error("Variable '" + name +
               "': a name is letters, digits and '_', not starting with a digit");
  if (vmin > vmax || vmin < 0)
    user_error("Variable '" + name + "': bounds [" + std::to_string(vmin) + ", " +
               std::to_string(vmax) + "] are empty or negative");
  if (value < vmin || value > vmax)
    user_error("Variable '" + name + "': value " + std::to_string(value) + " is outside [" +
               std::to_string(vmin) + ", " + std::to_string(vmax) + "]");
  bound_once.store(true, std::memory_order_relaxed);
  return UOp::make(Op::BIND, dtypes::index,
                   {define_var(name, vmin, vmax, dtypes::index), dim_const(value)});
}

bool any_bound() {
  return bound_once.load(std::memory_order_relaxed);
}

int64_t dim_value(const UOp* d) {
  switch (d->op()) {
    case Op::CONST:
      return d->arg_int();
    case Op::BIND:
      return d->src(1)->arg_int();
    case Op::ADD:
      return dim_value(d->src(0).get()) + dim_value(d->src(1).get());
    case Op::MUL:
      return dim_value(d->src(0).get()) * dim_value(d->src(1).get());
    default:
      ir_error("size: " + std::string(op_name(d->op())) + " is not a size expression");
  }
}

UOpRef dim_const(int64_t v) {
  return const_int(dtypes::index, v);
}

UOpRef dim_add(const UOpRef& a, const UOpRef& b) {
  if (is_static(a.get()) && is_static(b.get())) return dim_const(a->arg_int() + b->arg_int());
  if (is_static(b.get()) && b->arg_int() == 0) return a;
  if (is_static(a.get()) && a->arg_int() == 0) return b;
  return UOp::make(Op::ADD, dtypes::index, {a, b});
}

UOpRef dim_mul(const UOpRef& a, const UOpRef& b) {
  if (is_static(a.get()) && is_static(b.get())) return dim_const(a->arg_int() * b->arg_int());
  if (is_static(b.get()) && b->arg_int() == 1) return a;
  if (is_static(a.get()) && a->arg_int() == 1) return b;
  return UOp::make(Op::MUL, dtypes::index, {a, b});
}

namespace {

// Nodes are immutable, so their expressions are kept per thread (held, so no address is reused
// while it is a key), and dropped wholesale past a bound small enough that the buffers the
// held nodes keep alive stay few, and after each realisation (forget_sym_shapes). Never
// destroyed: at exit its nodes would free buffers whose owners (a Python array's release
// callback) are gone.
struct SymShapeMemo {
  std::unordered_map<const UOp*, SymShape> done;
  std::vector<UOpRef> held;
};
SymShapeMemo& sym_shape_memo() {
  thread_local SymShapeMemo* memo = new SymShapeMemo;
  return *memo;
}

}  // namespace

void forget_sym_shapes() {
  SymShapeMemo& m = sym_shape_memo();
  m.done.clear();
  m.held.clear();
}

SymShape sym_shape(const UOp* u) {
  if (!any_bound()) return consts(shape_of(u->ref()));
  std::unordered_map<const UOp*, SymShape>& done = sym_shape_memo().done;
  std::vector<UOpRef>& held = sym_shape_memo().held;
  if (done.size() > 4096) {
    done.clear();
    held.clear();
  }
  if (auto it = done.find(u); it != done.end()) return it->second;
  std::vector<std::pair<const UOp*, bool>> stack{{u, false}};
  while (!stack.empty()) {
    auto [n, ready] = stack.back();
    stack.pop_back();
    if (done.count(n)) continue;
    const size_t nsrc = is_movement(n->op()) ? 1 : n->nsrcs();
    if (!ready) {
      stack.push_back({n, true});
      for (size_t i = 0; i < nsrc; ++i)
        if (!done.count(n->src(i).get())) stack.push_back({n->src(i).get(), false});
      continue;
    }
    done.emplace(n, compute(n, done));
    held.push_back(n->ref());
  }
  return done.at(u);
}

bool has_symbolic(const SymShape& s) {
  for (const UOpRef& d : s)
    if (!is_static(d.get())) return true;
  return false;
}

SymShape reshape_dims(const SymShape& src, const Shape& src_ints, const Shape& target) {
  SymShape out = consts(target);
  if (!has_symbolic(src)) return out;
  std::vector<size_t> sa, ta;  // the axes other than 1s
  for (size_t i = 0; i < src_ints.size(); ++i) {
    if (src_ints[i] == 0) return out;
    if (src_ints[i] != 1) sa.push_back(i);
  }
  for (size_t j = 0; j < target.size(); ++j) {
    if (target[j] == 0) return out;
    if (target[j] != 1) ta.push_back(j);
  }
  size_t i = 0, j = 0;
  while (i < sa.size() && j < ta.size()) {
    std::vector<size_t> gi{sa[i]}, gj{ta[j]};
    int64_t ps = src_ints[sa[i++]], pt = target[ta[j++]];
    while (ps != pt) {
      if (ps < pt) {
        if (i == sa.size()) return out;
        ps *= src_ints[sa[i]];
        gi.push_back(sa[i++]);
      } else {
        if (j == ta.size()) return out;
        pt *= target[ta[j]];
        gj.push_back(ta[j++]);
      }
    }
    if (gj.size() == 1) {
      UOpRef p = dim_const(1);
      for (size_t a : gi) p = dim_mul(p, src[a]);
      out[gj[0]] = p;
    } else if (gi.size() == 1) {
      std::vector<UOpRef> f;
      factors(src[gi[0]], f);
      bool match = f.size() == gj.size();
      for (size_t k = 0; match && k < f.size(); ++k) match = dim_value(f[k].get()) == target[gj[k]];
      if (match)
        for (size_t k = 0; k < f.size(); ++k) out[gj[k]] = f[k];
    }
  }
  return out;
}

SymShape broadcast_dims(const SymShape& x, const Shape& shape, const SymShape& hint) {
  SymShape out = consts(shape);
  const size_t r = shape.size();
  for (size_t i = 0; i < r; ++i) {
    if (i + x.size() >= r) {
      const UOpRef& d = x[i + x.size() - r];
      if (dim_value(d.get()) == shape[i] && (shape[i] != 1 || !is_static(d.get()))) {
        out[i] = d;
        continue;
      }
    }
    if (i + hint.size() >= r) {
      const UOpRef& h = hint[i + hint.size() - r];
      if (dim_value(h.get()) == shape[i]) out[i] = h;
    }
  }
  return out;
}

UOpRef reshape_sym(const UOpRef& x, const SymShape& dims) {
  std::vector<UOpRef> srcs{x};
  srcs.insert(srcs.end(), dims.begin(), dims.end());
  return UOp::make(Op::RESHAPE, x->dtype(), srcs);
}

UOpRef expand_sym(const UOpRef& x, const SymShape& dims) {
  std::vector<UOpRef> srcs{x};
  srcs.insert(srcs.end(), dims.begin(), dims.end());
  return UOp::make(Op::EXPAND, x->dtype(), srcs);
}

UOpRef shrink_sym(const UOpRef& x, const std::vector<std::pair<UOpRef, UOpRef>>& bounds) {
  std::vector<UOpRef> srcs{x};
  for (const auto& [b, e] : bounds) srcs.insert(srcs.end(), {b, e});
  return UOp::make(Op::SHRINK, x->dtype(), srcs);
}

UOpRef pad_sym(const UOpRef& x, const std::vector<std::pair<UOpRef, UOpRef>>& pads) {
  std::vector<UOpRef> srcs{x};
  for (const auto& [a, b] : pads) srcs.insert(srcs.end(), {a, b});
  return UOp::make(Op::PAD, x->dtype(), srcs);
}

std::unordered_map<std::string, Binding> bindings(const UOpRef& root) {
  std::unordered_map<std::string, Binding> out;
  for (const UOp* u : toposort(root)) {
    if (u->op() != Op::BIND) continue;
    const Var& v = u->src(0)->arg_var();
    const int64_t value = u->src(1)->arg_int();
    auto [it, fresh] = out.emplace(v.name, Binding{u->src(0), value});
    if (fresh) continue;
    if (!(it->second.var->arg_var() == v))
      user_error("Variable '" + v.name + "' is declared with two ranges in one graph");
    if (it->second.value != value)
      user_error("Variable '" + v.name + "' is bound to " + std::to_string(it->second.value) +
                 " and to " + std::to_string(value) + " in one graph");
  }
  return out;
}

namespace {

/// `root` rebuilt bottom-up, each node through `f(node, rebuilt sources)`.
template <typename F>
UOpRef rebuild(const UOpRef& root, F f) {
  std::unordered_map<const UOp*, UOpRef> made;
  std::vector<UOpRef> srcs;
  for (const UOp* u : toposort(root)) {
    srcs.clear();
    bool same = true;
    for (const UOpRef& s : u->srcs()) {
      srcs.push_back(made.at(s.get()));
      same = same && srcs.back() == s;
    }
    UOpRef r = f(u, srcs, same);
    made.emplace(u, std::move(r));
  }
  return made.at(root.get());
}

}  // namespace

UOpRef rebind(const UOpRef& root, const std::unordered_map<std::string, int64_t>& values) {
  return rebuild(root, [&](const UOp* u, const std::vector<UOpRef>& srcs, bool same) {
    if (u->op() == Op::BIND) {
      auto it = values.find(u->src(0)->arg_var().name);
      if (it != values.end())
        return UOp::make(Op::BIND, u->dtype(), {u->src(0), dim_const(it->second)});
    }
    return same ? u->ref() : u->with_srcs(srcs);
  });
}

UOpRef strip_binds(const UOpRef& root) {
  return rebuild(root, [&](const UOp* u, const std::vector<UOpRef>& srcs, bool same) -> UOpRef {
    auto all_const = [&] {
      for (const UOpRef& s : srcs)
        if (s->op() != Op::CONST) return false;
      return !srcs.empty();
    };
    if (u->op() == Op::BIND) return dim_const(u->src(1)->arg_int());
    if (u->dtype() == dtypes::index && (u->op() == Op::ADD || u->op() == Op::MUL) && all_const())
      return dim_const(u->op() == Op::ADD ? srcs[0]->arg_int() + srcs[1]->arg_int()
                                          : srcs[0]->arg_int() * srcs[1]->arg_int());
    if (u->op() == Op::CAST && srcs[0]->op() == Op::CONST && srcs[0]->dtype() == dtypes::index &&
        u->dtype().is_int() && !u->dtype().is_vector())
      return const_int(u->dtype(), srcs[0]->arg_int());
    return same ? u->ref() : u->with_srcs(srcs);
  });
}

bool consistent_shapes(const UOpRef& root) {
  try {
    ShapeOf shape;
    for (const UOp* u : toposort(root)) {
      const Op op = u->op();
      if (op == Op::SINK || op == Op::BIND || op == Op::DEFINE_VAR) continue;
      const Shape& s = shape(u);
      for (int64_t d : s)
        if (d < 0) return false;
      if (is_movement_with_dims(op)) {
        const Shape& in = shape(u->src(0));
        if (op == Op::RESHAPE && numel(in) != numel(s)) return false;
        if (op == Op::EXPAND) {
          if (in.size() != s.size()) return false;
          for (size_t i = 0; i < s.size(); ++i)
            if (in[i] != s[i] && in[i] != 1) return false;
        }
        const std::vector<int64_t> v = int_srcs(u, 1);
        if (op == Op::SHRINK || op == Op::PAD) {
          if (v.size() != 2 * in.size()) return false;
          for (size_t i = 0; i < in.size(); ++i) {
            if (v[2 * i] < 0 || v[2 * i + 1] < 0) return false;
            if (op == Op::SHRINK && (v[2 * i] > v[2 * i + 1] || v[2 * i + 1] > in[i])) return false;
          }
        }
        continue;
      }
      if (is_movement(op) || op == Op::REDUCE_AXIS || op == Op::BUFFER || op == Op::IOTA) continue;
      if (op == Op::ASSIGN && u->nsrcs() == 3) {  // a write through a view: the value has its shape
        if (shape(u->src(0)) != s || shape(u->src(1)) != shape(u->src(2))) return false;
        continue;
      }
      for (const UOpRef& src : u->srcs())  // (a size expression's are scalars, as it is)
        if (shape(src) != s) return false;
    }
    return true;
  } catch (const std::exception&) {
    return false;
  }
}

}  // namespace polygrad::lazy
