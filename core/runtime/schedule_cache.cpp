// Schedules cached by graph structure (see schedule_cache.hpp).
#include "runtime/schedule_cache.hpp"

#include "runtime/buffers.hpp"
#include "runtime/memory_plan.hpp"

#include "ir/graph.hpp"
#include "ir/ptr_map.hpp"
#include "runtime/runtime.hpp"

#include <polygrad/error.hpp>

#include <algorithm>
#include <array>
#include <atomic>
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
    if (next < n->nsrcs()) {
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
    for (const UOpRef& s : u->srcs()) {
      g.srcs.push_back(*position.find(s.get()));
      h = hash_mix(h, g.srcs.back());
    }
    g.hash = hash_mix(g.hash, h);
  }
  latest_size.store(g.nodes.size(), std::memory_order_relaxed);
  return g;
}

}  // namespace

struct CacheEntry {
  UOpRef key_graph;  // keeps the key alive
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
  };
  std::mutex mu;
  std::vector<Prepared> prepared;
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
      if (same_structure(g, (*it->second)->key)) {
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

/// A new entry for the graph `g`: the graph with its inputs replaced by placeholders -(k+1)
/// and each ASSIGN's serial by its number in toposort order (the same structure, the same
/// key), scheduled.
std::shared_ptr<CacheEntry> schedule_entry(const Structure& g) {
  auto entry = std::make_shared<CacheEntry>();
  entry->key = g;
  std::unordered_map<const UOp*, UOpRef> key_of;
  std::map<const UOp*, std::string> input_device;
  std::map<const UOp*, std::string> created;
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
  schedule::Context ctx;
  ctx.device = g.devices[0];
  ctx.new_buffer = [&](const std::string& dev, DType t, int64_t n) {
    UOpRef b = lazy::buffer(t, n, next_placeholder.fetch_sub(1));
    created[b.get()] = dev;
    return b;
  };
  ctx.buffer_device = [&](const UOp* b) {
    auto in = input_device.find(b);
    if (in != input_device.end()) return in->second;
    auto made = created.find(b);
    if (made != created.end()) return made->second;
    internal_error("schedule cache: unknown buffer " + node_to_string(*b));
  };
  ctx.target = device_target;
  std::vector<UOpRef> key_roots(entry->key_graph->srcs().begin(), entry->key_graph->srcs().end());
  entry->schedule = schedule::make_schedule(key_roots, ctx);
  // Only the buffers the schedule uses are made per run (a second scheduling pass leaves the
  // first one's behind).
  std::unordered_set<const UOp*> used;
  for (const schedule::Item& item : entry->schedule.items)
    for (const UOpRef& b : item.buffers) used.insert(b.get());
  for (const UOpRef& b : entry->schedule.intermediates) used.insert(b.get());
  for (const UOpRef& o : entry->schedule.outputs)
    for (const UOp* u : toposort(o)) used.insert(u);
  std::unordered_map<const UOp*, uint32_t> slot;
  for (size_t k = 0; k < entry->key.inputs.size(); ++k)
    slot.emplace(entry->key.inputs[k], static_cast<uint32_t>(k));
  for (const auto& [b, dev] : created)
    if (used.count(b)) {
      slot.emplace(b, static_cast<uint32_t>(slot.size()));
      entry->created.emplace_back(b, dev);
    }
  for (const schedule::Item& item : entry->schedule.items) {
    std::vector<uint32_t>& slots = entry->item_slots.emplace_back();
    for (const UOpRef& b : item.buffers) slots.push_back(slot.at(b.get()));
  }
  for (const UOpRef& b : entry->schedule.intermediates)
    entry->intermediate_slots.push_back(slot.at(b.get()));
  for (const UOpRef& o : entry->schedule.outputs) {
    if (o->op() == Op::BUFFER) {
      entry->outputs.push_back({slot.at(o.get()), std::nullopt});
    } else if (o->op() == Op::RESHAPE && o->src(0)->op() == Op::BUFFER) {
      entry->outputs.push_back({slot.at(o->src(0).get()), lazy::shape_of(o)});
    } else {
      internal_error("schedule cache: a realised root is neither a BUFFER nor its RESHAPE: " +
                     node_to_string(*o));
    }
  }
  auto is_created = [&](const UOp* b) { return created.count(b) > 0; };
  auto device_of = [&](const UOp* b) { return created.at(b); };
  for (const SharedMemory& m : plan_shared_memory(entry->schedule, is_created, device_of))
    entry->shared.emplace_back(slot.at(m.buffer), slot.at(m.owner));
  entry->prepared.resize(entry->schedule.items.size());
  return entry;
}

}  // namespace

BoundSchedule::BoundSchedule(std::shared_ptr<CacheEntry> entry, std::vector<UOpRef> buffers)
    : entry_(std::move(entry)), buffers_(std::move(buffers)) {}

size_t BoundSchedule::size() const {
  return entry_->schedule.items.size();
}

schedule::Schedule BoundSchedule::materialize() const {
  schedule::Schedule out;
  out.items = entry_->schedule.items;
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
  return entry_->schedule.items[i];
}

const UOp* BoundSchedule::buffer(size_t i, size_t slot) const {
  return buffers_[entry_->item_slots[i][slot]].get();
}

Launch BoundSchedule::launch(size_t i) const {
  const schedule::Item& item = entry_->schedule.items[i];
  std::vector<const UOp*> buffers;
  buffers.reserve(entry_->item_slots[i].size());
  for (uint32_t k : entry_->item_slots[i]) buffers.push_back(buffers_[k].get());
  KernelLaunch kernel;
  if (item.kind == schedule::Item::Kind::kernel) {
    std::lock_guard<std::mutex> lock(entry_->mu);
    CacheEntry::Prepared& p = entry_->prepared[i];
    const uint64_t generation = program_generation();
    kernel.kernel = p.generation == generation ? p.kernel.lock() : nullptr;
    if (!kernel.kernel) {
      // (The item's AST and variables are the same over placeholders as over real buffers.)
      kernel = prepare_kernel(item);
      p = {kernel.kernel, kernel.scalars, kernel.global, generation};
    } else {
      kernel.scalars = p.scalars;
      kernel.global = p.global;
    }
  }
  return launch_over(item, buffers, std::move(kernel));
}

std::vector<UOpRef> BoundSchedule::outputs() const {
  std::vector<UOpRef> out;
  out.reserve(entry_->outputs.size());
  for (const CacheEntry::Output& o : entry_->outputs)
    out.push_back(o.shape ? lazy::reshape(buffers_[o.slot], *o.shape) : buffers_[o.slot]);
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
  std::vector<UOpRef> buffers;
  buffers.reserve(g.inputs.size() + entry->created.size());
  for (const UOp* in : g.inputs) buffers.push_back(in->ref());
  for (const auto& [ph, dev] : entry->created)
    buffers.push_back(new_buffer(dev, ph->dtype(), lazy::buffer_count(ph)));
  return BoundSchedule(std::move(entry), std::move(buffers));
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
