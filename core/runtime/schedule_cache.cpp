// Schedules cached by graph structure (see schedule_cache.hpp).
#include "runtime/schedule_cache.hpp"

#include "runtime/buffers.hpp"

#include "ir/graph.hpp"
#include "runtime/runtime.hpp"

#include <polygrad/error.hpp>

#include <algorithm>
#include <atomic>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <unordered_set>

namespace polygrad::runtime {

namespace {

/// Buffers the cached schedule creates get ids from here (never a real buffer's id).
std::atomic<int64_t> next_placeholder{-(int64_t{1} << 40)};

struct Entry {
  UOpRef key_graph;  // keeps the key alive
  schedule::Schedule schedule;
  /// Buffers the schedule creates: placeholder -> device.
  std::map<const UOp*, std::string> created;
};

/// Entries by (devices, graph), the least recently used dropped beyond the limit (kMaxEntries
/// unless set): a program
/// that builds a new graph per step (a constant that changes every step) would otherwise grow
/// the cache by a graph and its schedule each step.
struct Cache {
  static constexpr size_t kMaxEntries = 2048;
  using Key = std::pair<std::vector<std::string>, const UOp*>;
  std::mutex mu;
  std::list<Key> order;  // most recently used first
  std::map<Key, std::pair<std::shared_ptr<Entry>, std::list<Key>::iterator>> entries;
  size_t hits = 0;
  size_t limit = kMaxEntries;
};

Cache& cache() {
  static Cache* c = new Cache;
  return *c;
}

}  // namespace

schedule::Schedule cached_schedule(const std::vector<UOpRef>& roots, const std::string& device) {
  // The graph with its inputs replaced by placeholders -(k+1).
  UOpRef sink = UOp::make(Op::SINK, dtypes::void_, std::span<const UOpRef>(roots));
  // Each ASSIGN's serial (lazy::assign) becomes its number in toposort order: the same
  // structure, the same key.
  std::unordered_map<const UOp*, UOpRef> to_placeholder, key_of;
  std::vector<UOpRef> inputs;
  std::vector<std::string> devices{device};
  int64_t assigns = 0;
  std::vector<UOpRef> srcs;
  for (const UOp* u : toposort(sink)) {
    if (u->op() == Op::BUFFER) {
      inputs.push_back(u->ref());
      devices.push_back(buffer_device(u));
      UOpRef ph =
          lazy::buffer(u->dtype(), lazy::buffer_count(u), -static_cast<int64_t>(inputs.size()));
      to_placeholder.emplace(u, ph);
      key_of.emplace(u, std::move(ph));
      continue;
    }
    srcs.clear();
    bool same = u->op() != Op::ASSIGN;
    for (const UOpRef& s : u->srcs()) {
      srcs.push_back(key_of.at(s.get()));
      same = same && srcs.back() == s;
    }
    key_of.emplace(u, same ? u->ref()
                           : UOp::make(u->op(), u->dtype(), srcs,
                                       u->op() == Op::ASSIGN ? Arg(++assigns) : u->arg()));
  }
  UOpRef key_graph = key_of.at(sink.get());
  Cache& c = cache();
  std::shared_ptr<Entry> entry;
  {
    std::lock_guard<std::mutex> lock(c.mu);
    auto it = c.entries.find({devices, key_graph.get()});
    if (it != c.entries.end()) {
      entry = it->second.first;
      c.order.splice(c.order.begin(), c.order, it->second.second);
      ++c.hits;
    }
  }
  if (!entry) {
    entry = std::make_shared<Entry>();
    entry->key_graph = key_graph;
    std::map<const UOp*, std::string> input_device;
    for (const auto& [real, ph] : to_placeholder) input_device[ph.get()] = buffer_device(real);
    schedule::Context ctx;
    ctx.device = device;
    ctx.new_buffer = [&](const std::string& dev, DType t, int64_t n) {
      UOpRef b = lazy::buffer(t, n, next_placeholder.fetch_sub(1));
      entry->created[b.get()] = dev;
      return b;
    };
    ctx.buffer_device = [&](const UOp* b) {
      auto in = input_device.find(b);
      if (in != input_device.end()) return in->second;
      auto made = entry->created.find(b);
      if (made != entry->created.end()) return made->second;
      internal_error("schedule cache: unknown buffer " + node_to_string(*b));
    };
    ctx.target = [](const std::string& dev) {
      codegen::Target t;
      t.caps = device_handle(dev).properties().caps;
      return t;
    };
    std::vector<UOpRef> key_roots(key_graph->srcs().begin(), key_graph->srcs().end());
    entry->schedule = schedule::make_schedule(key_roots, ctx);
    // Only the buffers the schedule uses are made per run (a second scheduling pass leaves the
    // first one's behind).
    std::unordered_set<const UOp*> used;
    for (const schedule::Item& item : entry->schedule.items)
      for (const UOpRef& b : item.buffers) used.insert(b.get());
    for (const UOpRef& b : entry->schedule.intermediates) used.insert(b.get());
    for (const UOpRef& o : entry->schedule.outputs)
      for (const UOp* u : toposort(o)) used.insert(u);
    std::erase_if(entry->created, [&](const auto& kv) { return !used.count(kv.first); });
    std::lock_guard<std::mutex> lock(c.mu);
    Cache::Key key{devices, key_graph.get()};
    if (!c.entries.count(key)) {  // (another thread may have scheduled the same graph)
      c.order.push_front(key);
      c.entries.emplace(key, std::make_pair(entry, c.order.begin()));
      while (c.entries.size() > c.limit) {
        c.entries.erase(c.order.back());
        c.order.pop_back();
      }
    }
  }
  // Instantiate: placeholders -> real inputs and fresh buffers.
  std::unordered_map<const UOp*, UOpRef> real;
  for (const auto& [in, ph] : to_placeholder) real.emplace(ph.get(), in->ref());
  for (const auto& [ph, dev] : entry->created)
    real.emplace(ph, new_buffer(dev, ph->dtype(), lazy::buffer_count(ph)));
  auto map_buffer = [&](const UOpRef& b) { return real.at(b.get()); };
  schedule::Schedule out;
  out.items = entry->schedule.items;
  for (schedule::Item& item : out.items)
    for (UOpRef& b : item.buffers) b = map_buffer(b);
  for (const UOpRef& b : entry->schedule.intermediates) out.intermediates.push_back(map_buffer(b));
  for (const UOpRef& o : entry->schedule.outputs) out.outputs.push_back(substitute(o, real));
  return out;
}

ScheduleCacheStats schedule_cache_stats() {
  Cache& c = cache();
  std::lock_guard<std::mutex> lock(c.mu);
  return {c.entries.size(), c.hits};
}

void set_schedule_cache_limit(size_t limit) {
  Cache& c = cache();
  std::lock_guard<std::mutex> lock(c.mu);
  c.limit = std::max<size_t>(limit, 1);
}

}  // namespace polygrad::runtime
