// Schedules cached by graph structure (see schedule_cache.hpp).
#include "runtime/schedule_cache.hpp"

#include "runtime/buffers.hpp"
#include "runtime/memory_plan.hpp"
#include "runtime/symbolic_schedule.hpp"
#include "schedule/symbolic_sizes.hpp"
#include "support/side_by_side.hpp"
#include "tensor/symbolic.hpp"

#include "ir/graph.hpp"
#include "ir/ptr_map.hpp"
#include "runtime/runtime.hpp"

#include <polygrad/error.hpp>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <unordered_set>

namespace polygrad::runtime {

namespace {

/// Buffers the cached schedule creates get ids from here (never a real buffer's id).
std::atomic<int64_t> next_placeholder{-(int64_t{1} << 40)};

/// A graph read for the cache: its nodes in toposort order, each node's sources as positions
/// in that order, its input buffers in order with their devices, and a hash of all of it
/// that leaves out which buffers the inputs are and the ASSIGN serials (lazy::assign).
struct Structure {
  std::vector<const UOp*> nodes;
  std::vector<uint32_t> srcs;  // every node's source positions, one node after another
  std::vector<const UOp*> inputs;
  std::vector<std::string> devices;  // the target device, then each input's
  /// Each BIND's value (toposort order): left out of the hash and of same_structure, so one
  /// entry serves every value of a variable (compared only for an entry scheduled per value).
  std::vector<int64_t> bind_values;
  size_t hash = 0;
};

/// The size of the latest graph read: the next one is likely as large (every step of a
/// training loop), so its position map starts that large instead of growing to it.
std::atomic<size_t> latest_size{64};

Structure structure_of(const UOpRef& sink, const std::string& device) {
  Structure g;
  g.devices.push_back(device);
  g.hash = std::hash<std::string>{}(device);
  g.nodes.reserve(latest_size.load(std::memory_order_relaxed));
  g.srcs.reserve(2 * g.nodes.capacity());
  // A depth-first walk in toposort's order (sources in order, each node after them); one map
  // holds both "seen" (kOpen) and each node's position once it is placed.
  constexpr uint32_t kOpen = UINT32_MAX;
  detail::PtrMap<uint32_t> position(g.nodes.capacity());
  std::vector<std::pair<const UOp*, size_t>> stack{{sink.get(), 0}};
  position.put(sink.get(), kOpen);
  while (!stack.empty()) {
    auto& [n, next] = stack.back();
    // (A BIND's value is no part of the structure: only its DEFINE_VAR is walked.)
    if (next < (n->op() == Op::BIND ? 1 : n->nsrcs())) {
      const UOp* s = n->src(next++).get();
      if (!position.find(s)) {
        position.put(s, kOpen);
        stack.emplace_back(s, 0);
      }
      continue;
    }
    const UOp* u = n;
    stack.pop_back();
    position.put(u, static_cast<uint32_t>(g.nodes.size()));
    g.nodes.push_back(u);
    size_t h = hash_mix(static_cast<size_t>(u->op()), u->dtype().key());
    if (u->op() == Op::BUFFER) {
      g.inputs.push_back(u);
      g.devices.push_back(buffer_device(u));
      h = hash_mix(hash_mix(h, static_cast<size_t>(lazy::buffer_count(u))),
                   std::hash<std::string>{}(g.devices.back()));
    } else if (u->op() != Op::ASSIGN) {
      h = hash_mix(h, arg_hash(u->arg()));
    }
    if (u->op() == Op::BIND) {
      g.bind_values.push_back(u->src(1)->arg_int());
      g.srcs.push_back(*position.find(u->src(0).get()));
      h = hash_mix(h, g.srcs.back());
    } else {
      for (const UOpRef& s : u->srcs()) {
        g.srcs.push_back(*position.find(s.get()));
        h = hash_mix(h, g.srcs.back());
      }
    }
    g.hash = hash_mix(g.hash, h);
  }
  latest_size.store(g.nodes.size(), std::memory_order_relaxed);
  return g;
}

}  // namespace

struct CacheEntry {
  UOpRef key_graph;        // keeps the key alive
  UOpRef scheduled_graph;  // the key graph as scheduled (its BINDs replaced by their values)
  /// What a graph must match to use this entry: the structure of the graph it was made from,
  /// with the key graph's nodes and input placeholders in place of that graph's.
  Structure key;
  schedule::Schedule schedule;
  /// Buffers the schedule creates (made afresh for every run), with their devices.
  std::vector<std::pair<const UOp*, std::string>> created;
  /// The schedule's buffers as slots: the inputs (in key.inputs' order), then the created
  /// buffers. A bound schedule holds its real buffers in the same order.
  std::vector<std::vector<uint32_t>> item_slots;  // each item's buffers
  std::vector<uint32_t> intermediate_slots;
  /// Each root's realised form: its buffer's slot, and the shape a RESHAPE gives it (none for
  /// a BUFFER root).
  struct Output {
    uint32_t slot;
    std::optional<lazy::Shape> shape;
  };
  std::vector<Output> outputs;
  /// The memory plan (memory_plan.hpp) over slots: (slot, slot whose memory it uses).
  std::vector<std::pair<uint32_t, uint32_t>> shared;
  /// Each kernel item's kernel and launch arguments, prepared on the first run and again once
  /// the program cache changed what it holds (program_generation). The kernel is only
  /// watched: the program cache decides how long it stays loaded.
  struct Prepared {
    std::weak_ptr<CompiledKernel> kernel;
    std::vector<int64_t> scalars;
    std::array<uint32_t, 3> global{1, 1, 1};
    uint64_t generation = 0;
    int64_t value = 0;  ///< the variable's value it was prepared for (a generalised schedule)
  };
  std::mutex mu;
  std::vector<Prepared> prepared;
  /// A graph over a bound variable: scheduled for the value it was bound to only (by_value),
  /// or for every value, with the sizes below as rules of the variable (symbolic_schedule.hpp).
  bool by_value = false;
  struct Symbolic {
    std::string var;
    std::vector<SizeRule> created_counts;             // per created buffer
    std::vector<SizeRule> nbytes;                     // per item
    std::vector<std::vector<SizeRule>> item_vars;     // per item, per launch variable
    std::vector<std::vector<int64_t>> item_var_max;   // ...and the most its kernel allows
    std::vector<std::vector<SizeRule>> output_shape;  // per output
  };
  std::optional<Symbolic> symbolic;
};

namespace {

/// Whether `g` has the structure `key`: the same ops, dtypes, args (a buffer's count, not its
/// id; no ASSIGN serial), sources at the same positions, and devices.
bool same_structure(const Structure& g, const Structure& key) {
  if (g.hash != key.hash || g.nodes.size() != key.nodes.size() || g.srcs != key.srcs ||
      g.devices != key.devices)
    return false;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const UOp* u = g.nodes[i];
    const UOp* k = key.nodes[i];
    if (u->op() != k->op() || u->dtype() != k->dtype() || u->nsrcs() != k->nsrcs()) return false;
    if (u->op() == Op::BUFFER) {
      if (lazy::buffer_count(u) != lazy::buffer_count(k)) return false;
    } else if (u->op() != Op::ASSIGN && !arg_equal(u->arg(), k->arg())) {
      return false;
    }
  }
  return true;
}

/// Whether the launch variables of a generalised schedule stay within their kernels' bounds
/// at `value` (a kernel's own variable, n0, runs to the most that keeps its offsets 32-bit).
bool within_bounds(const CacheEntry::Symbolic& sym, int64_t value) {
  for (size_t i = 0; i < sym.item_vars.size(); ++i)
    for (size_t j = 0; j < sym.item_vars[i].size(); ++j)
      if (sym.item_vars[i][j].at(value) > sym.item_var_max[i][j]) return false;
  return true;
}

/// Whether `entry` serves the graph `g` of its structure (an entry made per value: at that
/// value; a generalised one: at a value within its kernels' bounds).
bool serves(const CacheEntry& entry, const Structure& g) {
  if (entry.symbolic && !g.bind_values.empty())
    return within_bounds(*entry.symbolic, g.bind_values.front());
  return !entry.by_value || entry.key.bind_values == g.bind_values;
}

/// `ast` with each DEFINE_VAR but `keep` declared up to the most its offsets allow with every
/// other variable anywhere in its range (schedule::int32_var_limit); `most` gets each one's,
/// by name.
UOpRef widen_kernel_vars(const UOpRef& ast, const UOp* keep, std::map<std::string, int64_t>& most) {
  std::unordered_map<const UOp*, UOpRef> to;
  for (const UOp* u : toposort(ast)) {
    if (u->op() != Op::DEFINE_VAR || u->arg_var().name == keep->arg_var().name) continue;
    const Var& v = u->arg_var();
    const UOpRef wide = define_var(v.name, v.vmin, INT32_MAX, u->dtype());
    const UOpRef at = substitute(ast, {{u, wide}});
    const int64_t m = schedule::int32_var_limit(at, wide.get(), std::max<int64_t>(v.vmin, 1));
    most[v.name] = m;
    to.emplace(u, define_var(v.name, v.vmin, m, u->dtype()));
  }
  return to.empty() ? ast : substitute(ast, to);
}

/// Entries by structure hash, the least recently used dropped beyond the limit (kMaxEntries
/// unless set): a program that builds a new graph per step (a constant that changes every
/// step) would otherwise grow the cache by a graph and its schedule each step.
struct Cache {
  static constexpr size_t kMaxEntries = 2048;
  using Order = std::list<std::shared_ptr<CacheEntry>>;
  std::mutex mu;
  Order order;  // most recently used first
  std::unordered_multimap<size_t, Order::iterator> by_hash;
  size_t hits = 0;
  size_t limit = kMaxEntries;

  /// The entry `g` matches, made the most recently used; or null.
  std::shared_ptr<CacheEntry> find(const Structure& g) {
    auto [first, last] = by_hash.equal_range(g.hash);
    for (auto it = first; it != last; ++it)
      if (same_structure(g, (*it->second)->key) && serves(**it->second, g)) {
        order.splice(order.begin(), order, it->second);
        ++hits;
        return order.front();
      }
    return nullptr;
  }

  void insert(std::shared_ptr<CacheEntry> e) {
    order.push_front(std::move(e));
    by_hash.emplace(order.front()->key.hash, order.begin());
    while (order.size() > limit) drop_last();
  }

  void drop_last() {
    auto [first, last] = by_hash.equal_range(order.back()->key.hash);
    for (auto it = first; it != last; ++it)
      if (it->second == std::prev(order.end())) {
        by_hash.erase(it);
        break;
      }
    order.pop_back();
  }
};

Cache& cache() {
  static Cache* c = new Cache;
  return *c;
}

/// A key graph scheduled, its buffers as slots: the inputs (in key order), then the buffers
/// the schedule creates and uses, in the order they were made.
struct Scheduled {
  UOpRef graph;  // what was scheduled (keeps it alive)
  schedule::Schedule schedule;
  std::vector<std::pair<const UOp*, std::string>> created;
  std::vector<std::vector<uint32_t>> item_slots;
  std::vector<uint32_t> intermediate_slots;
  std::vector<CacheEntry::Output> outputs;
  std::unordered_map<const UOp*, uint32_t> slot;
};

Scheduled schedule_key(const UOpRef& key_graph, const std::vector<const UOp*>& inputs,
                       const std::map<const UOp*, std::string>& input_device,
                       const std::string& device) {
  Scheduled out;
  out.graph = lazy::strip_binds(key_graph);
  std::vector<std::pair<UOpRef, std::string>> made;  // in the order they were made
  std::unordered_map<const UOp*, std::string> made_device;
  schedule::Context ctx;
  ctx.device = device;
  ctx.new_buffer = [&](const std::string& dev, DType t, int64_t n) {
    UOpRef b = lazy::buffer(t, n, next_placeholder.fetch_sub(1));
    made.emplace_back(b, dev);
    made_device.emplace(b.get(), dev);
    return b;
  };
  ctx.buffer_device = [&](const UOp* b) {
    auto in = input_device.find(b);
    if (in != input_device.end()) return in->second;
    auto m = made_device.find(b);
    if (m != made_device.end()) return m->second;
    internal_error("schedule cache: unknown buffer " + node_to_string(*b));
  };
  ctx.target = device_target;
  std::vector<UOpRef> roots(out.graph->srcs().begin(), out.graph->srcs().end());
  out.schedule = schedule::make_schedule(roots, ctx);
  // Only the buffers the schedule uses are made per run (a second scheduling pass leaves the
  // first one's behind).
  std::unordered_set<const UOp*> used;
  for (const schedule::Item& item : out.schedule.items)
    for (const UOpRef& b : item.buffers) used.insert(b.get());
  for (const UOpRef& b : out.schedule.intermediates) used.insert(b.get());
  for (const UOpRef& o : out.schedule.outputs)
    for (const UOp* u : toposort(o)) used.insert(u);
  for (size_t k = 0; k < inputs.size(); ++k) out.slot.emplace(inputs[k], static_cast<uint32_t>(k));
  for (const auto& [b, dev] : made)
    if (used.count(b.get())) {
      out.slot.emplace(b.get(), static_cast<uint32_t>(out.slot.size()));
      out.created.emplace_back(b.get(), dev);
    }
  for (const schedule::Item& item : out.schedule.items) {
    std::vector<uint32_t>& slots = out.item_slots.emplace_back();
    for (const UOpRef& b : item.buffers) slots.push_back(out.slot.at(b.get()));
  }
  for (const UOpRef& b : out.schedule.intermediates)
    out.intermediate_slots.push_back(out.slot.at(b.get()));
  for (const UOpRef& o : out.schedule.outputs) {
    if (o->op() == Op::BUFFER) {
      out.outputs.push_back({out.slot.at(o.get()), std::nullopt});
    } else if (o->op() == Op::RESHAPE && o->src(0)->op() == Op::BUFFER) {
      out.outputs.push_back({out.slot.at(o->src(0).get()), lazy::shape_of(o)});
    } else {
      internal_error("schedule cache: a realised root is neither a BUFFER nor its RESHAPE: " +
                     node_to_string(*o));
    }
  }
  return out;
}

/// Probe values a graph over a variable is scheduled at, and the fewest schedules of one
/// structure a generalisation is fitted to (3 determine a*n*n + b*n + c; one more checks it).
constexpr size_t kProbes = 5, kMinPoints = 4;

int debug_level() {
  static const int level = [] {
    const char* v = std::getenv("POLYGRAD_DEBUG");
    return v ? std::atoi(v) : 0;
  }();
  return level;
}

/// The name a bound variable has in kernels (apart from the scheduler's own launch variables).
std::string kernel_var_name(const std::string& name) {
  return "v_" + name;
}

/// The values to schedule a graph over `v` at besides v's own: near it and far from it (a
/// size that is a piecewise function of v, rounded to a tile, shows in a fit over them), never
/// 1 (an axis of size 1 gets no loop: a schedule of another structure).
std::vector<int64_t> probe_values(const Var& var, int64_t v) {
  std::vector<int64_t> out;
  for (int64_t d : {1, 17, 38, -1, -17, -38, 2, 3, 5, 7, 11, -2, -3, -5, -7, -11}) {
    const int64_t p = v + d;
    if (p < var.vmin || p > var.vmax || p < 2 || p == v) continue;
    if (std::find(out.begin(), out.end(), p) == out.end()) out.push_back(p);
    if (out.size() == kProbes) break;
  }
  return out;
}

/// A key graph rebound to another value, with each input placeholder that a reshape over the
/// variable views (an (n, d) input given as x.reshape(n, d)) replaced by one of the count that
/// reshape now has; the inputs and their devices follow.
struct ResizedInputs {
  UOpRef graph;
  std::vector<const UOp*> inputs;
  std::map<const UOp*, std::string> devices;
};

ResizedInputs resize_inputs(const UOpRef& g, const std::vector<const UOp*>& inputs,
                            const std::map<const UOp*, std::string>& devices) {
  ResizedInputs r{g, inputs, devices};
  std::unordered_map<const UOp*, UOpRef> replace;
  for (const UOp* u : toposort(g)) {
    if (u->op() != Op::RESHAPE || u->src(0)->op() != Op::BUFFER) continue;
    const UOp* b = u->src(0).get();
    const int64_t n = lazy::numel(lazy::int_srcs(u, 1));
    if (n == lazy::buffer_count(b) || replace.count(b) || !devices.count(b)) continue;
    UOpRef resized = lazy::buffer(b->dtype(), n, lazy::buffer_id(b));
    for (const UOp*& in : r.inputs)
      if (in == b) in = resized.get();
    r.devices[resized.get()] = devices.at(b);
    replace.emplace(b, std::move(resized));
  }
  if (!replace.empty()) r.graph = substitute(g, replace);
  return r;
}

/// Whether two schedules of one graph at two values of its variable have one structure: the
/// same items over the same slots, kernels that differ in their integer constants at most.
bool same_schedule(const Scheduled& a, const Scheduled& b) {
  const std::vector<schedule::Item>&x = a.schedule.items, &y = b.schedule.items;
  if (x.size() != y.size() || a.item_slots != b.item_slots ||
      a.intermediate_slots != b.intermediate_slots || a.created.size() != b.created.size() ||
      a.outputs.size() != b.outputs.size())
    return false;
  for (size_t k = 0; k < a.created.size(); ++k)
    if (a.created[k].first->dtype() != b.created[k].first->dtype() ||
        a.created[k].second != b.created[k].second)
      return false;
  for (size_t k = 0; k < a.outputs.size(); ++k)
    if (a.outputs[k].slot != b.outputs[k].slot ||
        a.outputs[k].shape.has_value() != b.outputs[k].shape.has_value() ||
        (a.outputs[k].shape && a.outputs[k].shape->size() != b.outputs[k].shape->size()))
      return false;
  for (size_t i = 0; i < x.size(); ++i) {
    if (x[i].kind != y[i].kind || x[i].device != y[i].device ||
        x[i].vars.size() != y[i].vars.size() ||
        x[i].packing.has_value() != y[i].packing.has_value())
      return false;
    for (size_t j = 0; j < x[i].vars.size(); ++j)
      if (x[i].vars[j].first != y[i].vars[j].first) return false;
    if (x[i].kind == schedule::Item::Kind::kernel && !same_kernel_structure(x[i].ast, y[i].ast))
      return false;
  }
  return true;
}

/// The entry's schedule generalised over its one variable (see symbolic_schedule.hpp), or
/// nothing when too few of the schedules at the value and the probes agree in structure, or a
/// size fits no rule. A value whose size coincides with another (n = 4 beside a head size 4)
/// can merge two index expressions into one: its schedule is left out of the fit, which the
/// others make (at least 4 of them), and the value runs the general kernels like any other.
/// The schedule at the bound value is made here into `s0`, beside the probes' (alone when a
/// probe graph's shapes are inconsistent), and becomes the schedule the entry keeps.
std::optional<CacheEntry::Symbolic> generalize(CacheEntry& entry, Scheduled& s0,
                                               const lazy::Binding& b,
                                               const std::vector<const UOp*>& inputs,
                                               const std::map<const UOp*, std::string>& devices,
                                               const std::string& device) {
  const Var& var = b.var->arg_var();
  auto fail = [&](const char* why) -> std::optional<CacheEntry::Symbolic> {
    if (debug_level() >= 2)
      std::fprintf(stderr, "schedule cache: graph over '%s' = %lld scheduled for this value: %s\n",
                   var.name.c_str(), static_cast<long long>(b.value), why);
    return std::nullopt;
  };
  const std::vector<int64_t> probes = probe_values(var, b.value);
  std::vector<ResizedInputs> graphs;
  for (int64_t p : probes) {
    graphs.push_back(
        resize_inputs(lazy::rebind(entry.key_graph, {{var.name, p}}), inputs, devices));
    if (!lazy::consistent_shapes(graphs.back().graph)) {
      s0 = schedule_key(entry.key_graph, inputs, devices, device);
      return fail(
          "the graph rebound to another value has inconsistent shapes (a size worked "
          "out as an int)");
    }
  }
  // The graph at its value and the probe graphs are scheduled side by side (each schedule is
  // independent work on nodes of its own); a helper drops its memo of shapes after each, as a
  // realisation does.
  std::vector<Scheduled> ss(probes.size());
  support::side_by_side(probes.size() + 1, [&](size_t i) {
    if (i == 0)
      s0 = schedule_key(entry.key_graph, inputs, devices, device);
    else
      ss[i - 1] =
          schedule_key(graphs[i - 1].graph, graphs[i - 1].inputs, graphs[i - 1].devices, device);
    if (support::on_helper_thread()) lazy::forget_sym_shapes();
  });
  std::vector<std::pair<int64_t, Scheduled*>> points{{b.value, &s0}};
  for (size_t i = 0; i < probes.size(); ++i) points.emplace_back(probes[i], &ss[i]);
  // The largest set of schedules of one structure (the bound value's on a tie).
  std::vector<std::vector<size_t>> classes;
  for (size_t i = 0; i < points.size(); ++i) {
    bool placed = false;
    for (std::vector<size_t>& c : classes)
      if (!placed && same_schedule(*points[c[0]].second, *points[i].second)) {
        c.push_back(i);
        placed = true;
      }
    if (!placed) classes.push_back({i});
  }
  const std::vector<size_t>* best = &classes[0];
  for (const std::vector<size_t>& c : classes)
    if (c.size() > best->size()) best = &c;
  if (best->size() < kMinPoints)
    return fail("too few of the schedules at other values have one structure");
  std::vector<int64_t> ts;
  std::vector<const Scheduled*> members;
  for (size_t i : *best) {
    ts.push_back(points[i].first);
    members.push_back(points[i].second);
  }
  Scheduled& base = *points[best->front()].second;
  auto rule = [&](auto value_of) -> std::optional<SizeRule> {
    std::vector<int64_t> qs;
    for (const Scheduled* o : members) qs.push_back(value_of(*o));
    return fit_rule(ts, qs);
  };
  CacheEntry::Symbolic sym;
  sym.var = var.name;
  for (size_t k = 0; k < base.created.size(); ++k) {
    auto r = rule([&](const Scheduled& o) { return lazy::buffer_count(o.created[k].first); });
    if (!r) return fail("a created buffer's size fits no rule");
    sym.created_counts.push_back(*r);
  }
  const UOpRef kvar = define_var(kernel_var_name(var.name), var.vmin, var.vmax);
  std::vector<schedule::Item>& items = base.schedule.items;
  std::vector<UOpRef> general(items.size());
  for (size_t i = 0; i < items.size(); ++i) {
    auto nb = rule([&](const Scheduled& o) { return o.schedule.items[i].nbytes; });
    if (!nb) return fail("a copy's size fits no rule");
    sym.nbytes.push_back(*nb);
    std::vector<SizeRule>& vars = sym.item_vars.emplace_back();
    for (size_t j = 0; j < items[i].vars.size(); ++j) {
      auto r = rule([&](const Scheduled& o) { return o.schedule.items[i].vars[j].second; });
      if (!r) return fail("a launch variable's value fits no rule");
      vars.push_back(*r);
    }
    sym.item_var_max.emplace_back(items[i].vars.size(), INT64_MAX);
    if (items[i].kind != schedule::Item::Kind::kernel) continue;
    std::vector<UOpRef> asts;
    for (const Scheduled* o : members) asts.push_back(o->schedule.items[i].ast);
    std::optional<UOpRef> g = generalize_kernel(asts, ts, kvar);
    if (!g && debug_level() >= 4)
      for (size_t a = 0; a < asts.size(); ++a)
        std::fprintf(stderr, "at %lld:\n%s\n", static_cast<long long>(ts[a]),
                     to_string(asts[a]).c_str());
    if (!g) return fail("a kernel's constant fits no rule");
    std::map<std::string, int64_t> most;
    general[i] = widen_kernel_vars(*g, kvar.get(), most);
    for (size_t j = 0; j < items[i].vars.size(); ++j)
      if (const auto it = most.find(items[i].vars[j].first); it != most.end())
        sym.item_var_max[i][j] = it->second;
  }
  if (!within_bounds(sym, b.value))
    return fail("a kernel's own variable exceeds the most its offsets allow at this value");
  for (size_t k = 0; k < base.outputs.size(); ++k) {
    std::vector<SizeRule>& dims = sym.output_shape.emplace_back();
    for (size_t d = 0; base.outputs[k].shape && d < base.outputs[k].shape->size(); ++d) {
      auto r = rule([&](const Scheduled& o) { return (*o.outputs[k].shape)[d]; });
      if (!r) return fail("an output's shape fits no rule");
      dims.push_back(*r);
    }
  }
  // The kernels take the variable at launch (those that use it).
  for (size_t i = 0; i < items.size(); ++i) {
    if (!general[i]) continue;
    items[i].ast = general[i];
    for (const UOp* u : toposort(items[i].ast))
      if (u->op() == Op::DEFINE_VAR && u->arg_var().name == kvar->arg_var().name) {
        items[i].vars.emplace_back(kvar->arg_var().name, b.value);
        sym.item_vars[i].push_back(SizeRule{0, 1, 0});
        sym.item_var_max[i].push_back(INT64_MAX);  // (the variable's own bounds hold at bind)
        break;
      }
  }
  if (&base != &s0) s0 = std::move(base);
  return sym;
}

/// A new entry for the graph `g`: the graph with its inputs replaced by placeholders -(k+1)
/// and each ASSIGN's serial by its number in toposort order (the same structure, the same
/// key), scheduled. A graph over one bound variable is scheduled at probe values too, and its
/// schedule generalised over the variable when they agree (else it serves its values only).
std::shared_ptr<CacheEntry> schedule_entry(const Structure& g) {
  auto entry = std::make_shared<CacheEntry>();
  entry->key = g;
  std::unordered_map<const UOp*, UOpRef> key_of;
  std::map<const UOp*, std::string> input_device;
  int64_t assigns = 0;
  size_t inputs = 0;
  std::vector<UOpRef> srcs;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const UOp* u = g.nodes[i];
    if (u->op() == Op::BUFFER) {
      const size_t k = inputs++;
      UOpRef ph = lazy::buffer(u->dtype(), lazy::buffer_count(u), -static_cast<int64_t>(k + 1));
      entry->key.inputs[k] = entry->key.nodes[i] = ph.get();
      input_device[ph.get()] = g.devices[k + 1];
      key_of.emplace(u, std::move(ph));
      continue;
    }
    if (u->op() == Op::BIND) {  // (its value is no node of the structure)
      key_of.emplace(u, u->ref());
      continue;
    }
    srcs.clear();
    bool same = u->op() != Op::ASSIGN;
    for (const UOpRef& s : u->srcs()) {
      srcs.push_back(key_of.at(s.get()));
      same = same && srcs.back() == s;
    }
    UOpRef key = same ? u->ref()
                      : UOp::make(u->op(), u->dtype(), srcs,
                                  u->op() == Op::ASSIGN ? Arg(++assigns) : u->arg());
    entry->key.nodes[i] = key.get();
    key_of.emplace(u, std::move(key));
  }
  entry->key_graph = key_of.at(g.nodes.back());
  const std::string& device = g.devices[0];
  Scheduled s;  // (a graph over one variable is scheduled by generalize, beside its probes)
  std::unordered_map<std::string, lazy::Binding> binds;
  if (!g.bind_values.empty()) binds = lazy::bindings(entry->key_graph);
  if (binds.size() == 1)
    entry->symbolic =
        generalize(*entry, s, binds.begin()->second, entry->key.inputs, input_device, device);
  else
    s = schedule_key(entry->key_graph, entry->key.inputs, input_device, device);
  entry->by_value = !g.bind_values.empty() && !entry->symbolic;
  entry->scheduled_graph = s.graph;
  entry->schedule = std::move(s.schedule);
  entry->created = std::move(s.created);
  entry->item_slots = std::move(s.item_slots);
  entry->intermediate_slots = std::move(s.intermediate_slots);
  entry->outputs = std::move(s.outputs);
  // (Sizes that change with the variable may change which buffers can share memory: a
  // generalised schedule shares none.)
  if (!entry->symbolic) {
    std::unordered_map<const UOp*, std::string> devices(entry->created.begin(),
                                                        entry->created.end());
    auto is_created = [&](const UOp* b) { return devices.count(b) > 0; };
    auto device_of = [&](const UOp* b) { return devices.at(b); };
    for (const SharedMemory& m : plan_shared_memory(entry->schedule, is_created, device_of))
      entry->shared.emplace_back(s.slot.at(m.buffer), s.slot.at(m.owner));
  }
  entry->prepared.resize(entry->schedule.items.size());
  return entry;
}

}  // namespace

BoundSchedule::BoundSchedule(std::shared_ptr<CacheEntry> entry, std::vector<UOpRef> buffers,
                             int64_t value)
    : entry_(std::move(entry)), buffers_(std::move(buffers)), value_(value) {
  if (!entry_->symbolic) return;
  const CacheEntry::Symbolic& sym = *entry_->symbolic;
  items_ = entry_->schedule.items;
  for (size_t i = 0; i < items_.size(); ++i) {
    items_[i].nbytes = sym.nbytes[i].at(value_);
    for (size_t j = 0; j < items_[i].vars.size(); ++j)
      items_[i].vars[j].second = sym.item_vars[i][j].at(value_);
  }
}

size_t BoundSchedule::size() const {
  return entry_->schedule.items.size();
}

schedule::Schedule BoundSchedule::materialize() const {
  schedule::Schedule out;
  out.items = entry_->symbolic ? items_ : entry_->schedule.items;
  for (size_t i = 0; i < out.items.size(); ++i)
    for (size_t j = 0; j < out.items[i].buffers.size(); ++j)
      out.items[i].buffers[j] = buffers_[entry_->item_slots[i][j]];
  for (uint32_t k : entry_->intermediate_slots) out.intermediates.push_back(buffers_[k]);
  out.outputs = outputs();
  return out;
}

void BoundSchedule::share_memory() const {
  for (const auto& [b, owner] : entry_->shared)
    alias_buffer(buffers_[b].get(), buffer_memory(buffers_[owner].get()));
}

const schedule::Item& BoundSchedule::item(size_t i) const {
  return entry_->symbolic ? items_[i] : entry_->schedule.items[i];
}

const UOp* BoundSchedule::buffer(size_t i, size_t slot) const {
  return buffers_[entry_->item_slots[i][slot]].get();
}

KernelLaunch BoundSchedule::prepare(size_t i) const {
  const schedule::Item& item = this->item(i);
  KernelLaunch kernel;
  if (item.kind != schedule::Item::Kind::kernel) return kernel;
  std::lock_guard<std::mutex> lock(entry_->mu);
  CacheEntry::Prepared& p = entry_->prepared[i];
  const uint64_t generation = program_generation();
  kernel.kernel = p.generation == generation && p.value == value_ ? p.kernel.lock() : nullptr;
  if (!kernel.kernel) {
    // (The item's AST and variables are the same over placeholders as over real buffers.)
    kernel = prepare_kernel(item);
    p = {kernel.kernel, kernel.scalars, kernel.global, generation, value_};
  } else {
    kernel.scalars = p.scalars;
    kernel.global = p.global;
  }
  return kernel;
}

Launch BoundSchedule::launch(size_t i, KernelLaunch kernel) const {
  const schedule::Item& item = this->item(i);
  std::vector<const UOp*> buffers;
  buffers.reserve(entry_->item_slots[i].size());
  for (uint32_t k : entry_->item_slots[i]) buffers.push_back(buffers_[k].get());
  return launch_over(item, buffers, std::move(kernel));
}

std::vector<UOpRef> BoundSchedule::outputs() const {
  std::vector<UOpRef> out;
  out.reserve(entry_->outputs.size());
  for (size_t k = 0; k < entry_->outputs.size(); ++k) {
    const CacheEntry::Output& o = entry_->outputs[k];
    if (o.shape && entry_->symbolic) {
      lazy::Shape shape;
      for (const SizeRule& r : entry_->symbolic->output_shape[k]) shape.push_back(r.at(value_));
      out.push_back(lazy::reshape(buffers_[o.slot], shape));
      continue;
    }
    out.push_back(o.shape ? lazy::reshape(buffers_[o.slot], *o.shape) : buffers_[o.slot]);
  }
  return out;
}

BoundSchedule bind_schedule(const std::vector<UOpRef>& roots, const std::string& device) {
  UOpRef sink = UOp::make(Op::SINK, dtypes::void_, std::span<const UOpRef>(roots));
  const Structure g = structure_of(sink, device);
  Cache& c = cache();
  std::shared_ptr<CacheEntry> entry;
  {
    std::lock_guard<std::mutex> lock(c.mu);
    entry = c.find(g);
  }
  if (!entry) {
    entry = schedule_entry(g);
    std::lock_guard<std::mutex> lock(c.mu);
    if (!c.find(g)) c.insert(entry);  // (another thread may have scheduled the same graph)
  }
  // A generalised schedule runs at the value of its variable in this graph.
  int64_t value = 0;
  if (entry->symbolic) {
    value = g.bind_values.front();
    for (int64_t v : g.bind_values)
      if (v != value)
        user_error("Variable '" + entry->symbolic->var + "' is bound to " + std::to_string(value) +
                   " and to " + std::to_string(v) + " in one graph");
  }
  std::vector<UOpRef> buffers;
  buffers.reserve(g.inputs.size() + entry->created.size());
  for (const UOp* in : g.inputs) buffers.push_back(in->ref());
  for (size_t k = 0; k < entry->created.size(); ++k) {
    const auto& [ph, dev] = entry->created[k];
    const int64_t count =
        entry->symbolic ? entry->symbolic->created_counts[k].at(value) : lazy::buffer_count(ph);
    buffers.push_back(new_buffer(dev, ph->dtype(), count));
  }
  return BoundSchedule(std::move(entry), std::move(buffers), value);
}

schedule::Schedule cached_schedule(const std::vector<UOpRef>& roots, const std::string& device) {
  return bind_schedule(roots, device).materialize();
}

ScheduleCacheStats schedule_cache_stats() {
  Cache& c = cache();
  std::lock_guard<std::mutex> lock(c.mu);
  return {c.order.size(), c.hits};
}

void set_schedule_cache_limit(size_t limit) {
  Cache& c = cache();
  std::lock_guard<std::mutex> lock(c.mu);
  c.limit = std::max<size_t>(limit, 1);
  while (c.order.size() > c.limit) c.drop_last();
}

}  // namespace polygrad::runtime
