// The lowered-program disk cache (lowered_cache.hpp).
#include "runtime/lowered_cache.hpp"
#include "support/phase_timing.hpp"

#include "codegen/group/tuning.hpp"
#include "ir/graph.hpp"

#include <polygrad/disk_cache.hpp>

#include <dlfcn.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <variant>
#include <vector>

namespace polygrad::runtime {

namespace {

/// Beyond either bound, the oldest entries are removed down to three quarters of it.
constexpr size_t kMaxEntries = 4096;
constexpr uintmax_t kMaxBytes = uintmax_t{64} << 20;
/// Writes between two checks of the bounds (the first write of a process checks too).
constexpr size_t kWritesPerCheck = 256;
constexpr const char* kSuffix = ".lowered";

std::string dir_from_env() {
  const char* v = std::getenv("POLYGRAD_PROGRAM_CACHE");
  if (v == nullptr || *v == '\0') return sdk::default_cache_dir("programs");
  const std::string s = v;
  if (s == "off" || s == "0" || s == "false" || s == "no") return "";
  return s;
}

struct State {
  std::mutex mu;
  std::string dir = dir_from_env();
  std::unique_ptr<sdk::DiskCache> cache;  // made at the first use of `dir`
  size_t writes = 0;                      ///< entries written by this process
};

State& state() {
  static auto* s = new State;  // never destroyed: used until the process ends
  return *s;
}

/// This build of libpolygrad: the file holding this function, its size and modification time;
/// "" when the file cannot be found (then the cache is off: no key could tell builds apart).
const std::string& build_identity() {
  static const std::string id = []() -> std::string {
    Dl_info info{};
    if (dladdr(reinterpret_cast<void*>(&build_identity), &info) == 0 || !info.dli_fname) return "";
    struct stat st {};
    if (::stat(info.dli_fname, &st) != 0) return "";
    return std::string("polygrad lowered-program cache 1") + '\0' + info.dli_fname + '\0' +
           std::to_string(st.st_ino) + '\0' + std::to_string(st.st_size) + '\0' +
           std::to_string(st.st_mtim.tv_sec) + '.' + std::to_string(st.st_mtim.tv_nsec);
  }();
  return id;
}

template <typename T>
void put(std::string& out, const T& v) {
  out.append(reinterpret_cast<const char*>(&v), sizeof v);
}
void put_str(std::string& out, const std::string& s) {
  put(out, static_cast<uint64_t>(s.size()));
  out += s;
}

void put_arg(std::string& out, const Arg& a) {
  put(out, static_cast<uint32_t>(a.index()));
  std::visit(
      [&](const auto& v) {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, std::monostate>) {
        } else if constexpr (std::is_same_v<T, int64_t> || std::is_same_v<T, double>) {
          put(out, v);  // a double bit for bit
        } else if constexpr (std::is_same_v<T, bool>) {
          put(out, static_cast<uint8_t>(v));
        } else if constexpr (std::is_same_v<T, std::string>) {
          put_str(out, v);
        } else if constexpr (std::is_same_v<T, std::vector<int64_t>>) {
          put(out, static_cast<uint64_t>(v.size()));
          for (int64_t x : v) put(out, x);
        } else {
          static_assert(std::is_same_v<T, Var>);
          put_str(out, v.name);
          put(out, v.vmin);
          put(out, v.vmax);
        }
      },
      a);
}

/// The capabilities field by field (no padding bytes), each tensor core with the contents of
/// its fragment maps, not their addresses (which move with where the plugin was loaded).
void put_caps(std::string& out, const pg_capabilities& c) {
  put(out, c.flags);
  put(out, c.dtype_mask);
  put(out, c.vector_width_bytes);
  put(out, c.max_vector_lanes);
  put(out, c.max_threads_per_group);
  for (int d = 0; d < 3; ++d) {
    put(out, c.max_local_dims[d]);
    put(out, c.max_global_dims[d]);
  }
  put(out, c.compute_units);
  put(out, c.local_memory_bytes);
  put(out, c.l1_cache_bytes);
  put(out, c.l2_cache_bytes);
  put(out, c.subgroup_size);
  put(out, c.index_bits);
  put(out, c.max_allocation_bytes);
  put(out, c.tensor_core_count);
  for (uint32_t i = 0; i < c.tensor_core_count && i < PG_MAX_TENSOR_CORES; ++i) {
    const pg_tensor_core& t = c.tensor_cores[i];
    for (uint16_t v : {t.m, t.n, t.k, t.threads}) put(out, v);
    for (uint8_t v : {t.dtype_a, t.dtype_b, t.dtype_c}) put(out, v);
    auto map = [&](const uint16_t* entries, size_t n) {
      put(out, static_cast<uint8_t>(entries != nullptr));
      if (entries != nullptr)
        out.append(reinterpret_cast<const char*>(entries), n * sizeof *entries);
    };
    map(t.a_map, size_t{t.m} * t.k);
    map(t.b_map, size_t{t.k} * t.n);
    map(t.c_map, size_t{t.m} * t.n);
  }
}

}  // namespace

std::array<uint8_t, 32> lowered_cache_key(const UOpRef& ast, const codegen::Target& target) {
  std::string m = build_identity();
  m += '\0';
  put(m, static_cast<uint32_t>(sizeof(pg_instruction)));
  put(m, target.isa_version);
  put_caps(m, target.caps);
  put_str(m, codegen::group_tuning::overrides());  // a tuning run's shapes plan differently
  std::unordered_map<const UOp*, uint32_t> id;
  for (const UOp* n : toposort(ast)) {
    const auto i = static_cast<uint32_t>(id.size());
    id.emplace(n, i);
    put(m, static_cast<uint32_t>(n->op()));
    put(m, n->dtype().key());
    put(m, static_cast<uint32_t>(n->nsrcs()));
    for (const UOpRef& s : n->srcs()) put(m, id.at(s.get()));
    put_arg(m, n->arg());
  }
  return sdk::sha256(m);
}

namespace {

/// A graph (a launch size's expression) node by node: count, then each node's op, dtype,
/// sources by position and arg.
void put_graph(std::string& out, const UOpRef& root) {
  const std::vector<const UOp*> nodes = toposort(root);
  std::unordered_map<const UOp*, uint32_t> id;
  put(out, static_cast<uint64_t>(nodes.size()));
  for (const UOp* n : nodes) {
    id.emplace(n, static_cast<uint32_t>(id.size()));
    put(out, static_cast<uint32_t>(n->op()));
    put(out, n->dtype().key());
    put(out, static_cast<uint64_t>(n->nsrcs()));
    for (const UOpRef& src : n->srcs()) put(out, id.at(src.get()));
    put_arg(out, n->arg());
  }
}

/// The payload of an entry.
std::vector<char> pack(const codegen::LoweredKernel& k) {
  std::string out;
  put_str(out, k.name);
  put(out, k.isa_version);
  put(out, k.buffer_count);
  for (uint32_t l : k.local_size) put(out, l);
  for (const UOpRef& g : k.global_size) put_graph(out, g ? g : const_int(dtypes::index, 1));
  put(out, static_cast<uint64_t>(k.vars.size()));
  for (const Var& v : k.vars) {
    put_str(out, v.name);
    put(out, v.vmin);
    put(out, v.vmax);
  }
  put(out, static_cast<uint64_t>(k.instructions.size()));
  out.append(reinterpret_cast<const char*>(k.instructions.data()),
             k.instructions.size() * sizeof(pg_instruction));
  put(out, static_cast<uint64_t>(k.operands.size()));
  out.append(reinterpret_cast<const char*>(k.operands.data()),
             k.operands.size() * sizeof(uint32_t));
  return std::vector<char>(out.begin(), out.end());
}

/// Reads an entry's payload back; false when it does not parse (then it is rewritten).
class Reader {
 public:
  explicit Reader(const std::vector<char>& p) : p_(p) {}
  template <typename T>
  bool get(T& v) {
    return bytes(&v, sizeof v);
  }
  bool bytes(void* dst, uint64_t n) {
    if (n > p_.size() - at_) return false;
    if (n > 0) std::memcpy(dst, p_.data() + at_, n);
    at_ += n;
    return true;
  }
  bool str(std::string& s) {
    uint64_t n = 0;
    if (!get(n) || n > p_.size() - at_) return false;
    s.assign(p_.data() + at_, n);
    at_ += n;
    return true;
  }
  bool count(uint64_t& n, size_t each) { return get(n) && n <= (p_.size() - at_) / each; }
  bool done() const { return at_ == p_.size(); }

 private:
  const std::vector<char>& p_;
  size_t at_ = 0;
};

bool get_arg(Reader& r, Arg& a) {
  uint32_t index = 0;
  if (!r.get(index)) return false;
  switch (index) {
    case 0:
      a = std::monostate{};
      return true;
    case 1: {
      int64_t v = 0;
      a = v;
      return r.get(std::get<int64_t>(a));
    }
    case 2: {
      double v = 0;
      a = v;
      return r.get(std::get<double>(a));
    }
    case 3: {
      uint8_t v = 0;
      if (!r.get(v) || v > 1) return false;
      a = v == 1;
      return true;
    }
    case 4: {
      std::string v;
      if (!r.str(v)) return false;
      a = std::move(v);
      return true;
    }
    case 5: {
      uint64_t n = 0;
      if (!r.count(n, sizeof(int64_t))) return false;
      std::vector<int64_t> v(n);
      for (int64_t& x : v)
        if (!r.get(x)) return false;
      a = std::move(v);
      return true;
    }
    case 6: {
      Var v;
      if (!r.str(v.name) || !r.get(v.vmin) || !r.get(v.vmax)) return false;
      a = std::move(v);
      return true;
    }
    default:
      return false;
  }
}

/// put_graph's graph rebuilt; false when it does not parse.
bool get_graph(Reader& r, UOpRef& root) {
  uint64_t n = 0;
  if (!r.count(n, 20) || n == 0) return false;
  std::vector<UOpRef> nodes;
  nodes.reserve(n);
  for (uint64_t i = 0; i < n; ++i) {
    uint32_t op = 0, key = 0;
    uint64_t nsrc = 0;
    if (!r.get(op) || op >= static_cast<uint32_t>(kOpCount) || !r.get(key) ||
        !r.count(nsrc, sizeof(uint32_t)))
      return false;
    std::vector<UOpRef> srcs(nsrc);
    for (UOpRef& src : srcs) {
      uint32_t at = 0;
      if (!r.get(at) || at >= nodes.size()) return false;
      src = nodes[at];
    }
    Arg arg;
    if (!get_arg(r, arg)) return false;
    const DType dtype(static_cast<pg_dtype>(key & 0xff), static_cast<int>((key >> 8) & 0xff),
                      static_cast<AddrSpace>((key >> 16) & 0xff));
    nodes.push_back(UOp::make(static_cast<Op>(op), dtype, srcs, std::move(arg)));
  }
  root = nodes.back();
  return true;
}

bool unpack(const std::vector<char>& payload, codegen::LoweredKernel& k) {
  Reader r(payload);
  if (!r.str(k.name) || !r.get(k.isa_version) || !r.get(k.buffer_count)) return false;
  for (uint32_t& l : k.local_size)
    if (!r.get(l)) return false;
  for (UOpRef& g : k.global_size)
    if (!get_graph(r, g)) return false;
  uint64_t n = 0;
  if (!r.count(n, 24)) return false;
  k.vars.resize(n);
  for (Var& v : k.vars)
    if (!r.str(v.name) || !r.get(v.vmin) || !r.get(v.vmax)) return false;
  if (!r.count(n, sizeof(pg_instruction))) return false;
  k.instructions.resize(n);
  if (!r.bytes(k.instructions.data(), n * sizeof(pg_instruction))) return false;
  if (!r.count(n, sizeof(uint32_t))) return false;
  k.operands.resize(n);
  if (!r.bytes(k.operands.data(), n * sizeof(uint32_t))) return false;
  return r.done();
}

/// Removes the oldest entries of `dir` while it holds more than the bounds allow.
void prune(const std::string& dir) {
  namespace fs = std::filesystem;
  struct Entry {
    fs::file_time_type time;
    uintmax_t size;
    fs::path path;
  };
  std::vector<Entry> entries;
  uintmax_t total = 0;
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
    if (e.path().extension() != kSuffix) continue;
    std::error_code ec2;
    const uintmax_t size = e.file_size(ec2);
    const fs::file_time_type time = e.last_write_time(ec2);
    if (ec2) continue;
    entries.push_back({time, size, e.path()});
    total += size;
  }
  if (entries.size() <= kMaxEntries && total <= kMaxBytes) return;
  std::sort(entries.begin(), entries.end(),
            [](const Entry& a, const Entry& b) { return a.time < b.time; });
  size_t count = entries.size();
  for (const Entry& e : entries) {
    if (count <= kMaxEntries * 3 / 4 && total <= kMaxBytes * 3 / 4) break;
    std::error_code ec2;
    if (fs::remove(e.path, ec2)) {
      --count;
      total -= e.size;
    }
  }
}

/// The cache, or nullptr when off or refused (DiskCache::usable logs why once).
sdk::DiskCache* cache(State& s) {
  if (s.dir.empty() || build_identity().empty()) return nullptr;
  if (!s.cache)
    s.cache = std::make_unique<sdk::DiskCache>(s.dir, sdk::Host(nullptr), "polygrad: program cache",
                                               "PGLOWER1", kSuffix);
  return s.cache->usable() ? s.cache.get() : nullptr;
}

}  // namespace

codegen::LoweredKernel lower_cached(const UOpRef& ast, const codegen::Target& target) {
  State& s = state();
  sdk::DiskCache* c = nullptr;
  {
    std::lock_guard lock(s.mu);
    c = cache(s);
  }
  if (c == nullptr) return codegen::lower(ast, target);
  sdk::DiskCache::Key key;
  {
    timing::Timed timed(timing::Phase::lowered_cache);
    key = lowered_cache_key(ast, target);
    if (std::optional<std::vector<char>> payload = c->read(key)) {
      codegen::LoweredKernel k;
      if (unpack(*payload, k)) return k;
      sdk::Host(nullptr).log(PG_LOG_WARNING,
                             "polygrad: program cache: an entry in '" + s.dir +
                                 "' does not parse; lowering again and rewriting it");
    }
  }
  codegen::LoweredKernel k = codegen::lower(ast, target);
  c->write(key, pack(k));
  std::lock_guard lock(s.mu);
  if (s.writes++ % kWritesPerCheck == 0) prune(s.dir);
  return k;
}

}  // namespace polygrad::runtime
