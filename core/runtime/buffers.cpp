// The buffer table: id -> (device, dtype, count, memory), and the pool of freed memory.
#include "runtime/buffers.hpp"

#include "runtime/panel_cache.hpp"
#include "runtime/runtime.hpp"

#include <polygrad/error.hpp>
#include <polygrad/registry.hpp>

#include <atomic>
#include <map>
#include <mutex>
#include <unordered_map>

namespace polygrad::runtime {

namespace {

struct Entry {
  std::string device;
  int64_t nbytes = 0;
  std::shared_ptr<Buffer> memory;
  bool external = false;  // host memory the caller may write behind polygrad's back
};

struct Table {
  std::mutex mu;
  std::unordered_map<int64_t, Entry> entries;
  std::atomic<int64_t> next_id{1};
  std::map<std::string, Device> devices;
};

// Never destroyed: BUFFER nodes may die during static destruction.
Table& table() {
  static Table* t = [] {
    auto* tab = new Table;
    set_buffer_release_hook([](int64_t id) {
      std::shared_ptr<Buffer> memory;  // freed outside the lock
      {
        std::lock_guard<std::mutex> lock(table().mu);
        auto it = table().entries.find(id);
        if (it == table().entries.end()) return;
        memory = std::move(it->second.memory);
        table().entries.erase(it);
      }
      forget_packings(id);  // (outside the table's lock: the panel cache takes it inside its own)
    });
    return tab;
  }();
  return *t;
}

// Freed device memory of at least kPoolMinBytes is kept (up to kPoolCapBytes in all) and handed
// out again for the next buffer of the same device and size: a training step or a repeated
// realize allocates the same sizes every time, and fresh large allocations cost the host page
// faults (or a device allocation call) on every run. Never destroyed, like the table.
constexpr int64_t kPoolMinBytes = int64_t{1} << 16;
constexpr int64_t kPoolCapBytes = int64_t{1} << 30;

struct Pool {
  std::mutex mu;
  std::map<std::pair<std::string, int64_t>, std::vector<Buffer>> free;
  int64_t held = 0;
};

Pool& pool() {
  static Pool* p = new Pool;
  return *p;
}

std::shared_ptr<Buffer> pooled_alloc(const std::string& device, int64_t nbytes) {
  Buffer b;
  bool reused = false;
  if (nbytes >= kPoolMinBytes) {
    Pool& p = pool();
    std::lock_guard<std::mutex> lock(p.mu);
    auto it = p.free.find({device, nbytes});
    if (it != p.free.end() && !it->second.empty()) {
      b = std::move(it->second.back());
      it->second.pop_back();
      p.held -= nbytes;
      reused = true;
    }
  }
  if (!reused) b = device_handle(device).alloc(static_cast<uint64_t>(nbytes));
  return std::shared_ptr<Buffer>(new Buffer(std::move(b)), [device, nbytes](Buffer* dead) {
    if (nbytes >= kPoolMinBytes) {
      Pool& p = pool();
      std::lock_guard<std::mutex> lock(p.mu);
      if (p.held + nbytes <= kPoolCapBytes) {
        p.free[{device, nbytes}].push_back(std::move(*dead));
        p.held += nbytes;
      }
    }
    delete dead;
  });
}

Entry& entry_locked(Table& t, const UOp* buffer) {
  auto it = t.entries.find(lazy::buffer_id(buffer));
  if (it == t.entries.end())
    internal_error("runtime: BUFFER " + std::to_string(lazy::buffer_id(buffer)) +
                   " has no entry in the buffer table");
  return it->second;
}

}  // namespace

Device device_handle(const std::string& canonical) {
  Table& t = table();
  {
    std::lock_guard<std::mutex> lock(t.mu);
    auto it = t.devices.find(canonical);
    if (it != t.devices.end()) return it->second;
  }
  Device d = Registry::global().device(canonical);
  std::lock_guard<std::mutex> lock(t.mu);
  return t.devices.emplace(canonical, d).first->second;
}

codegen::Target device_target(const std::string& canonical) {
  const Device dev = device_handle(canonical);
  codegen::Target target;
  target.caps = dev.properties().caps;
  target.isa_version = dev.isa_version();
  target.device = canonical;
  return target;
}

std::string canonical_device(const std::string& name) {
  Registry& r = Registry::global();
  const std::string wanted = name.empty() ? r.default_device_name() : name;
  return device_handle(r.device(wanted).name()).name();
}

UOpRef new_buffer(const std::string& device, DType dtype, int64_t count) {
  Table& t = table();
  int64_t id = t.next_id.fetch_add(1);
  {
    std::lock_guard<std::mutex> lock(t.mu);
    t.entries[id] = Entry{device, count * dtype.itemsize(), nullptr};
  }
  return lazy::buffer(dtype, count, id);
}

std::string buffer_device(const UOp* buffer) {
  Table& t = table();
  std::lock_guard<std::mutex> lock(t.mu);
  return entry_locked(t, buffer).device;
}

std::shared_ptr<Buffer> buffer_memory(const UOp* buffer) {
  Table& t = table();
  std::string device;
  int64_t nbytes;
  {
    std::lock_guard<std::mutex> lock(t.mu);
    Entry& e = entry_locked(t, buffer);
    if (e.memory) return e.memory;
    device = e.device;
    nbytes = e.nbytes;
  }
  std::shared_ptr<Buffer> memory = pooled_alloc(device, nbytes);
  std::lock_guard<std::mutex> lock(t.mu);
  Entry& e = entry_locked(t, buffer);
  if (!e.memory) e.memory = std::move(memory);
  return e.memory;
}

void alias_buffer(const UOp* buffer, std::shared_ptr<Buffer> memory) {
  Table& t = table();
  std::lock_guard<std::mutex> lock(t.mu);
  entry_locked(t, buffer).memory = std::move(memory);
}

bool buffer_allocated(const UOp* buffer) {
  Table& t = table();
  std::lock_guard<std::mutex> lock(t.mu);
  return entry_locked(t, buffer).memory != nullptr;
}

bool buffer_external(const UOp* buffer) {
  Table& t = table();
  std::lock_guard<std::mutex> lock(t.mu);
  return entry_locked(t, buffer).external;
}

void mark_buffer_external(const UOp* buffer) {
  Table& t = table();
  std::lock_guard<std::mutex> lock(t.mu);
  entry_locked(t, buffer).external = true;
}

size_t live_buffer_count() {
  Table& t = table();
  std::lock_guard<std::mutex> lock(t.mu);
  return t.entries.size();
}

}  // namespace polygrad::runtime
