// Opening one plugin .so and checking its table before anything else touches it.
#include "loaded_plugin.hpp"
#include "support/phase_timing.hpp"

#include <dlfcn.h>
#include <boost/dll/shared_library.hpp>

#include <cstddef>
#include <deque>
#include <mutex>

namespace polygrad::detail {

namespace {

// Libraries are never closed: plugins that start TBB or LLVM crash when unloaded, and the
// host services table must outlive every plugin anyway. Held through a pointer that is never
// freed so no destructor runs at exit.
void keep_loaded(boost::dll::shared_library&& library) {
  static std::mutex mutex;
  // A deque never relocates its elements, so no handle is ever copied or closed.
  static auto* libraries = new std::deque<boost::dll::shared_library>();
  std::lock_guard lock(mutex);
  libraries->push_back(std::move(library));
}

}  // namespace

bool refuse(LoadRecord& record, LoadStage stage, const std::string& reason) {
  record.status = LoadStatus::refused;
  record.stage = stage;
  record.reason = reason;
  return false;
}

bool check_abi_version(const char* abi, uint32_t major, uint32_t minor, uint32_t host_major,
                       uint32_t host_minor, LoadRecord& record) {
  record.abi_known = true;
  record.abi_major = major;
  record.abi_minor = minor;
  auto text = [](uint32_t a, uint32_t b) { return std::to_string(a) + "." + std::to_string(b); };
  const std::string host = std::string("host ") + abi + " " + text(host_major, host_minor);
  const std::string plugin = std::string("plugin ") + abi + " " + text(major, minor);
  if (major != host_major)
    return refuse(record, LoadStage::abi, plugin + ", " + host + " (the major versions differ)");
  if (minor > host_minor)
    return refuse(record, LoadStage::abi,
                  plugin + " is newer than " + host + " (rebuild the plugin against this SDK)");
  return true;
}

void* open_library_entry(const std::string& path, const char* symbol, const char* how_to_export,
                         LoadRecord& record) {
  record.stage = LoadStage::open;
  boost::dll::shared_library library;
  boost::dll::fs::error_code ec;
  dlerror();  // clear any stale message
  library.load(boost::dll::fs::path(path),
               boost::dll::load_mode::rtld_now | boost::dll::load_mode::rtld_local, ec);
  if (ec || !library.is_loaded()) {
    const char* why = dlerror();
    refuse(record, LoadStage::open, why != nullptr ? std::string(why) : ec.message());
    return nullptr;
  }
  void* entry = dlsym(library.native(), symbol);
  keep_loaded(std::move(library));
  if (entry == nullptr)
    refuse(record, LoadStage::entry, std::string("no symbol ") + symbol + " " + how_to_export);
  return entry;
}

namespace {

bool check_abi(const pg_plugin& t, LoadRecord& record) {
  if (!check_abi_version("ABI", t.abi_major, t.abi_minor, PG_PLUGIN_ABI_MAJOR, PG_PLUGIN_ABI_MINOR,
                         record))
    return false;
  if (t.isa_version == 0)
    return refuse(record, LoadStage::abi,
                  "pg_plugin isa_version is 0 (a plugin renders kernel ISA 1 or later)");
  // The host speaks ABI 1.0, whose table is exactly pg_plugin.
  constexpr size_t table_1_0 = offsetof(pg_plugin, compiler);
  if (t.struct_size < table_1_0)
    return refuse(record, LoadStage::abi,
                  "pg_plugin struct_size " + std::to_string(t.struct_size) +
                      " is smaller than the ABI 1.0 table (" + std::to_string(table_1_0) +
                      " bytes)");
  return true;
}

bool check_slots(const pg_plugin& t, LoadRecord& record) {
  std::string missing;
  auto need = [&](bool present, const char* slot) {
    if (!present) missing += (missing.empty() ? "" : ", ") + std::string(slot);
  };
  need(t.name != nullptr && t.name[0] != '\0', "name");
  need(t.version != nullptr, "version");
  need(t.device_prefix != nullptr && t.device_prefix[0] != '\0', "device_prefix");
  need(t.option_count == 0 || t.options != nullptr, "options");
  need(t.init != nullptr, "init");
  need(t.device_count != nullptr, "device_count");
  need(t.device_open != nullptr, "device_open");
  need(t.device_properties != nullptr, "device_properties");
  need(t.allocator != nullptr, "allocator");
  need(t.renderer != nullptr, "renderer");
  need(t.loader != nullptr, "loader");
  if (const pg_allocator_api* a = t.allocator) {
    need(PG_HAS_FIELD(a, pg_allocator_api, copy_out), "allocator (struct_size too small)");
    if (PG_HAS_FIELD(a, pg_allocator_api, copy_out)) {
      need(a->alloc != nullptr, "allocator->alloc");
      need(a->free != nullptr, "allocator->free");
      need(a->copy_in != nullptr, "allocator->copy_in");
      need(a->copy_out != nullptr, "allocator->copy_out");
    }
  }
  if (const pg_renderer_api* r = t.renderer) {
    need(PG_HAS_FIELD(r, pg_renderer_api, render), "renderer (struct_size too small)");
    if (PG_HAS_FIELD(r, pg_renderer_api, render)) need(r->render != nullptr, "renderer->render");
  }
  if (const pg_loader_api* l = t.loader) {
    need(PG_HAS_FIELD(l, pg_loader_api, synchronize), "loader (struct_size too small)");
    if (PG_HAS_FIELD(l, pg_loader_api, synchronize)) {
      need(l->load != nullptr, "loader->load");
      need(l->unload != nullptr, "loader->unload");
      need(l->launch != nullptr, "loader->launch");
      need(l->synchronize != nullptr, "loader->synchronize");
    }
  }
  if (!missing.empty())
    return refuse(record, LoadStage::slots, "required slots missing: " + missing);
  if (!parse_device_name(t.device_prefix) ||
      std::string(t.device_prefix).find(':') != std::string::npos)
    return refuse(record, LoadStage::slots,
                  "device_prefix '" + std::string(t.device_prefix) +
                      "' is not a valid device prefix (lower-case letters, digits, _)");
  return true;
}

}  // namespace

const pg_plugin* open_plugin(const std::string& path, LoadRecord& record) {
  timing::Timed timed(timing::Phase::plugin_open);
  auto entry = reinterpret_cast<pg_plugin_entry_fn>(open_library_entry(
      path, PG_PLUGIN_ENTRY_NAME, "(a plugin must export it, e.g. with PG_DEFINE_PLUGIN)", record));
  return entry != nullptr ? check_entry(entry, record) : nullptr;
}

const pg_plugin* check_entry(pg_plugin_entry_fn entry, LoadRecord& record) {
  const pg_plugin* table = nullptr;
  try {
    table = entry();
  } catch (...) {
    refuse(record, LoadStage::table,
           PG_PLUGIN_ENTRY_NAME " threw a C++ exception across the C boundary: " +
               describe_current_exception());
    return nullptr;
  }
  if (table == nullptr) {
    refuse(record, LoadStage::table, PG_PLUGIN_ENTRY_NAME " returned NULL");
    return nullptr;
  }
  // Version fields first: nothing else in the table is meaningful under another major.
  if (!check_abi(*table, record)) return nullptr;
  if (table->name != nullptr) record.plugin_name = table->name;
  if (table->version != nullptr) record.plugin_version = table->version;
  if (table->device_prefix != nullptr) record.device_prefix = table->device_prefix;
  if (!check_slots(*table, record)) return nullptr;
  return table;
}

}  // namespace polygrad::detail
