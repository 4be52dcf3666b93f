// Copies of weights in panels, kept per version of the weight (see panel_cache.hpp).
#include "runtime/panel_cache.hpp"

#include "runtime/buffers.hpp"
#include "runtime/capture.hpp"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <list>
#include <map>
#include <mutex>
#include <tuple>
#include <unordered_map>
#include <vector>

namespace polygrad::runtime {

namespace {

struct Key {
  std::string device;
  int64_t source = 0;
  const UOp* group = nullptr;
  bool operator<(const Key& o) const {
    return std::tie(source, group, device) < std::tie(o.source, o.group, o.device);
  }
};

struct Entry {
  UOpRef group;  // keeps the key's kernel alive
  std::shared_ptr<Buffer> memory;
  uint64_t nbytes = 0;
  std::vector<uint64_t> versions;  // per kernel of the copy: the source's version it ran at
  std::list<Key>::iterator order;
  uint64_t used = 0;  // the cache's clock at its last use
};

/// A buffer the cache holds copies of: how many, and its write count since the first.
struct Source {
  size_t entries = 0;
  uint64_t version = 1;
};

/// The default limit: an eighth of the machine's memory, at least 1 GiB (a 24 GiB host: 3 GiB,
/// two GPT-2-small models' weights and a third logits weight, 1.2 GB of copies, all kept).
uint64_t default_limit() {
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
  const uint64_t memory = pages > 0 && page > 0 ? uint64_t(pages) * uint64_t(page) : 0;
  return std::max<uint64_t>(memory / 8, uint64_t{1} << 30);
}

/// Never destroyed, like the buffer table: BUFFER nodes may die during static destruction.
struct Cache {
  std::mutex mu;
  std::map<Key, Entry> entries;
  std::list<Key> order;  // most recently used first
  std::unordered_map<int64_t, Source> sources;
  /// The sources by their id modulo kSlots, counted, read without the lock: a launch writing
  /// a buffer takes the lock only when the cache may hold copies of that buffer (another
  /// buffer whose id shares the slot, rarely), not on every launch once it holds any copy.
  static constexpr size_t kSlots = 4096;
  std::array<std::atomic<uint32_t>, kSlots> watched{};
  static size_t slot(int64_t id) { return static_cast<size_t>(id) % kSlots; }
  bool may_watch(int64_t id) const {
    return watched[slot(id)].load(std::memory_order_relaxed) != 0;
  }
  /// The source of id `id`, counted in `watched` when it is new.
  Source& source(int64_t id) {
    auto [it, added] = sources.try_emplace(id);
    if (added) watched[slot(id)].fetch_add(1, std::memory_order_relaxed);
    return it->second;
  }
  uint64_t bytes = 0, limit = default_limit();
  size_t made = 0, reuses = 0;
  /// Counts uses; an entry's `used` and a refused copy's sighting are times on it.
  uint64_t clock = 0;
  /// Copies not kept for want of room, by key: the clock when last asked for (admit()).
  static constexpr size_t kMaxRefused = size_t{1} << 16;
  std::map<Key, uint64_t> refused;

  /// Whether a copy of `nbytes` for `key`, not held, is kept, dropping what makes room. Only
  /// entries unused since the copy was last asked for make room: weights used in turn that do
  /// not fit together (two models' layers, a model larger than the limit) would otherwise
  /// evict each other's copies just before their next use, so that every use made its copy
  /// again. Those keep a fixed part of them instead. A copy never asked for before is not kept
  /// when it needs room: from its second use it displaces copies idle since its first.
  bool admit(const Key& key, uint64_t nbytes, std::vector<Entry>& dead) {
    auto seen = refused.find(key);
    const uint64_t since = seen == refused.end() ? 0 : seen->second;
    uint64_t free = limit - bytes;
    for (auto it = order.rbegin(); free < nbytes && it != order.rend(); ++it) {
      const Entry& e = entries.find(*it)->second;
      if (e.used >= since) break;  // (oldest first: the rest were used later still)
      free += e.nbytes;
    }
    if (free < nbytes) {
      if (refused.size() >= kMaxRefused) refused.clear();
      refused[key] = clock;
      return false;
    }
    if (seen != refused.end()) refused.erase(seen);
    shrink_to(limit - nbytes, dead);
    return true;
  }

  /// Removes an entry, handing it to `dead` (destroyed by the caller outside the lock: its
  /// memory goes back to the pool, its kernel may die).
  void drop(std::map<Key, Entry>::iterator it, std::vector<Entry>& dead) {
    bytes -= it->second.nbytes;
    if (--sources[it->first.source].entries == 0) {
      sources.erase(it->first.source);
      watched[slot(it->first.source)].fetch_sub(1, std::memory_order_relaxed);
    }
    order.erase(it->second.order);
    dead.push_back(std::move(it->second));
    entries.erase(it);
  }

  void shrink_to(uint64_t cap, std::vector<Entry>& dead) {
    while (bytes > cap && !order.empty()) drop(entries.find(order.back()), dead);
  }
};

Cache& cache() {
  static Cache* c = new Cache;
  return *c;
}

}  // namespace

PackingUse::PackingUse(const schedule::Item& item, const UOp* source, const UOp* packed) {
  if (!item.packing || capturing() || buffer_external(source)) return;
  const uint64_t nbytes = static_cast<uint64_t>(lazy::buffer_count(packed)) *
                          static_cast<uint64_t>(packed->dtype().itemsize());
  Cache& c = cache();
  std::vector<Entry> dead;  // destroyed after the lock is released
  std::lock_guard<std::mutex> lock(c.mu);
  if (nbytes > c.limit) return;
  Key key{item.device, lazy::buffer_id(source), item.packing->group.get()};
  auto it = c.entries.find(key);
  if (it != c.entries.end() && it->second.nbytes != nbytes) {
    c.drop(it, dead);
    it = c.entries.end();
  }
  ++c.clock;
  if (it == c.entries.end()) {
    if (!c.admit(key, nbytes, dead)) return;  // made for this run only
    c.order.push_front(key);
    Entry e{item.packing->group, buffer_memory(packed), nbytes, {}, c.order.begin(), c.clock};
    it = c.entries.emplace(key, std::move(e)).first;
    c.bytes += nbytes;
    ++c.source(key.source).entries;
  } else {
    alias_buffer(packed, it->second.memory);
    c.order.splice(c.order.begin(), c.order, it->second.order);
    it->second.used = c.clock;
  }
  const uint64_t version = c.source(key.source).version;
  std::vector<uint64_t>& versions = it->second.versions;
  const size_t part = static_cast<size_t>(item.packing->part);
  if (versions.size() <= part) versions.resize(part + 1, 0);
  if (versions[part] == version) {
    if (part == 0) ++c.reuses;
    must_run_ = false;
    return;
  }
  kept_ = true;
  device_ = key.device;
  source_ = key.source;
  group_ = key.group;
  part_ = item.packing->part;
  version_ = version;
}

void PackingUse::ran() const {
  if (!kept_) return;
  Cache& c = cache();
  std::lock_guard<std::mutex> lock(c.mu);
  auto it = c.entries.find(Key{device_, source_, group_});
  if (it == c.entries.end()) return;
  std::vector<uint64_t>& versions = it->second.versions;
  const size_t part = static_cast<size_t>(part_);
  if (versions.size() <= part) versions.resize(part + 1, 0);
  versions[part] = version_;
  if (part == 0) ++c.made;
}

void note_packing_source_write(int64_t id) {
  Cache& c = cache();
  if (!c.may_watch(id)) return;
  std::lock_guard<std::mutex> lock(c.mu);
  auto it = c.sources.find(id);
  if (it != c.sources.end()) ++it->second.version;
}

void forget_packings(int64_t id) {
  Cache& c = cache();
  if (!c.may_watch(id)) return;
  std::vector<Entry> dead;
  std::lock_guard<std::mutex> lock(c.mu);
  if (!c.sources.count(id)) return;
  for (auto it = c.entries.lower_bound(Key{"", id, nullptr});
       it != c.entries.end() && it->first.source == id;)
    c.drop(it++, dead);
}

PanelCacheStats panel_cache_stats() {
  Cache& c = cache();
  std::lock_guard<std::mutex> lock(c.mu);
  return {c.made, c.reuses, c.entries.size(), c.bytes, c.limit};
}

void set_panel_cache_limit(uint64_t bytes) {
  Cache& c = cache();
  std::vector<Entry> dead;
  std::lock_guard<std::mutex> lock(c.mu);
  c.limit = bytes;
  c.shrink_to(bytes, dead);
}

}  // namespace polygrad::runtime
