// The registry: discovery order, shadowing, option validation and device resolution.
#include <polygrad/registry.hpp>

#include "discovery.hpp"
#include "loaded_plugin.hpp"
#include "src/ccl/loaded_ccl.hpp"
#include "support/phase_timing.hpp"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <mutex>
#include <set>

namespace polygrad {

namespace fs = std::filesystem;
using detail::LoadedPlugin;

namespace {

/// Entries of plugins linked into the program, in registration order, and the registries
/// alive now (so a late registration reaches the ones that have already discovered).
struct StaticPlugins {
  std::mutex mutex;
  std::vector<pg_plugin_entry_fn> entries;
  std::set<Registry*> registries;
};

StaticPlugins& static_plugins() {
  static auto* s = new StaticPlugins;  // never destroyed: registries may outlive main
  return *s;
}

}  // namespace

struct Registry::Impl {
  RegistryOptions options;
  std::mutex mutex;
  bool discovered = false;
  Config config;
  std::string config_error;
  std::vector<LoadRecord> records;
  std::vector<std::shared_ptr<LoadedPlugin>> plugins;
  std::set<std::string> seen;              // canonical candidate paths already considered
  std::vector<std::string> searched_dirs;  // for "no plugin named ..." messages
  detail::CclPlugins ccl;                  // collective-communication plugins, loaded lazily

  void discover_locked();
  void add_entry(const std::string& entry, PluginSource source);
  void consider_linked(pg_plugin_entry_fn entry);
  std::set<pg_plugin_entry_fn> linked_seen;
  /// Admit an opened table (from a file or linked in): uniqueness, options, init.
  const LoadRecord& admit(const pg_plugin* table, const std::string& path, LoadRecord& record,
                          const std::function<const LoadRecord&()>& finish);
  const LoadRecord& consider(const std::string& path, PluginSource source);
  void note_config_error(const std::string& message) {
    if (config_error.empty()) config_error = message;
  }
  void throw_if_config_error() const {
    if (!config_error.empty()) throw Error(ErrorKind::user, config_error);
  }
  std::shared_ptr<LoadedPlugin> find_loaded(const std::string& name) const {
    for (const auto& p : plugins)
      if (p->name == name) return p;
    return nullptr;
  }
  /// The record of the loaded plugin named `name`, else of the first candidate whose plugin
  /// name or file name (polygrad_<name>.so) is `name`; nullptr when there is none.
  const LoadRecord* find_record(const std::string& name) const;
  std::string available_devices() const;
};

const LoadRecord* Registry::Impl::find_record(const std::string& name) const {
  if (auto p = find_loaded(name))
    for (const LoadRecord& r : records)
      if (r.path == p->path) return &r;
  for (const LoadRecord& r : records)  // (a failed load has no name: "" matches nothing)
    if (!name.empty() && (r.plugin_name == name || detail::plugin_name_from_file(r.path) == name))
      return &r;
  return nullptr;
}

void Registry::Impl::discover_locked() {
  if (discovered) return;
  discovered = true;
  timing::Timed timed(timing::Phase::discover);
  try {
    if (!options.config_path.empty())
      config = Config::parse_file(options.config_path);
    else if (options.search_config)
      config = Config::load_default();
  } catch (const Error& e) {
    note_config_error(e.what());
  }
  std::vector<pg_plugin_entry_fn> linked;
  {
    std::lock_guard lock(static_plugins().mutex);
    linked = static_plugins().entries;
  }
  for (pg_plugin_entry_fn entry : linked) consider_linked(entry);
  for (const std::string& p : config.plugin_paths()) add_entry(p, PluginSource::config);
  for (const std::string& p : options.plugin_paths) add_entry(p, PluginSource::api);
  if (options.use_env)
    if (const char* env = std::getenv("POLYGRAD_PLUGIN_PATH"))
      for (const std::string& p : detail::split_path_list(env)) add_entry(p, PluginSource::env);
  if (options.use_libdir) {
    std::string dir = detail::library_dir();
    if (!dir.empty())
      add_entry((fs::path(dir) / "polygrad" / "plugins").string(), PluginSource::libdir);
  }
  if (options.use_build_tree) {
    std::string dir = detail::build_tree_plugin_dir();
    if (!dir.empty()) add_entry(dir, PluginSource::build_tree);
  }
  if (config_error.empty()) {
    std::vector<std::string> served;
    for (const auto& p : plugins) served.push_back(p->prefix);
    try {
      config.check_devices_known(served);
    } catch (const Error& e) {
      note_config_error(e.what());
    }
  }
}

void Registry::Impl::add_entry(const std::string& entry, PluginSource source) {
  std::error_code ec;
  const std::string path = detail::canonical_path(entry);
  if (fs::is_directory(path, ec)) {
    if (std::find(searched_dirs.begin(), searched_dirs.end(), path) == searched_dirs.end())
      searched_dirs.push_back(path);
    for (const std::string& file : detail::plugin_files_in(path)) consider(file, source);
    ccl.add_candidates(path, source);
    return;
  }
  if (detail::ccl_plugin_name_from_file(path)) {
    ccl.add_candidates(path, source);
    return;
  }
  // The libdir and build-tree directories are optional; a path someone named is not.
  if (!fs::exists(path, ec) &&
      (source == PluginSource::libdir || source == PluginSource::build_tree))
    return;
  consider(path, source);
}

const LoadRecord& Registry::Impl::consider(const std::string& raw_path, PluginSource source) {
  const std::string path = detail::canonical_path(raw_path);
  for (const LoadRecord& r : records)
    if (r.path == path) return r;
  LoadRecord record;
  record.path = path;
  record.source = source;
  auto finish = [&]() -> const LoadRecord& {
    // Shadowing is normal, and a config error is reported on its own: neither warns.
    if (!record.loaded()) {
      const bool quiet =
          record.reason.rfind("shadowed by ", 0) == 0 || record.stage == LoadStage::options;
      detail::host_log(quiet ? PG_LOG_INFO : PG_LOG_WARNING, format_record(record));
    }
    records.push_back(record);
    return records.back();
  };
  auto refuse = [&](LoadStage stage, const std::string& reason) -> const LoadRecord& {
    record.status = LoadStatus::refused;
    record.stage = stage;
    record.reason = reason;
    return finish();
  };

  std::error_code ec;
  if (!fs::exists(path, ec)) return refuse(LoadStage::open, "no such file or directory");

  // Same file name as a loaded plugin: shadowed without even opening it.
  if (auto stem = detail::plugin_name_from_file(path)) {
    for (const auto& p : plugins)
      if (p->name == *stem || detail::plugin_name_from_file(p->path) == stem)
        return refuse(LoadStage::unique, "shadowed by " + p->path);
  }

  const pg_plugin* table = detail::open_plugin(path, record);
  if (table == nullptr) return finish();
  return admit(table, path, record, finish);
}

void Registry::Impl::consider_linked(pg_plugin_entry_fn entry) {
  if (entry == nullptr || !linked_seen.insert(entry).second) return;
  LoadRecord record;
  record.source = PluginSource::linked;
  record.path = "static:?";
  auto finish = [&]() -> const LoadRecord& {
    if (!record.loaded()) detail::host_log(PG_LOG_WARNING, format_record(record));
    records.push_back(record);
    return records.back();
  };
  const pg_plugin* table = detail::check_entry(entry, record);
  if (table == nullptr) {
    finish();
    return;
  }
  record.path = "static:" + std::string(table->name);
  admit(table, record.path, record, finish);
}

const LoadRecord& Registry::Impl::admit(const pg_plugin* table, const std::string& path,
                                        LoadRecord& record,
                                        const std::function<const LoadRecord&()>& finish) {
  auto refuse = [&](LoadStage stage, const std::string& reason) -> const LoadRecord& {
    record.status = LoadStatus::refused;
    record.stage = stage;
    record.reason = reason;
    return finish();
  };
  record.stage = LoadStage::unique;
  if (auto first = find_loaded(table->name))
    return refuse(LoadStage::unique, "shadowed by " + first->path);
  for (const auto& p : plugins)
    if (p->prefix == table->device_prefix)
      return refuse(LoadStage::unique, "device prefix '" + p->prefix + "' is already served by " +
                                           p->name + " (" + p->path + ")");

  record.stage = LoadStage::options;
  PluginOptions values;
  try {
    values = config.options_for(table->device_prefix, table->options, table->option_count);
  } catch (const Error& e) {
    note_config_error(e.what());
    return refuse(LoadStage::options, e.what());
  }

  std::shared_ptr<LoadedPlugin> plugin =
      detail::start_plugin(table, path, std::move(values), record);
  if (plugin) plugins.push_back(std::move(plugin));
  return finish();
}

std::string Registry::Impl::available_devices() const {
  std::string list;
  std::string none;
  for (const auto& p : plugins) {
    for (uint32_t i = 0; i < p->device_count; ++i)
      list += (list.empty() ? "" : ", ") + p->prefix + ":" + std::to_string(i);
    if (p->device_count == 0) none += "; " + p->prefix + " has no devices: " + p->no_device_reason;
  }
  if (list.empty()) list = "none";
  std::string text = "available: " + list + none;
  if (plugins.empty()) text += " (no plugin loaded; `polygrad devices --verbose` says why)";
  return text;
}

// ---------------------------------------------------------------------------------------------

Registry::Registry() : Registry(RegistryOptions{}) {}

Registry::Registry(RegistryOptions options) : impl_(std::make_unique<Impl>()) {
  impl_->options = std::move(options);
  std::lock_guard lock(static_plugins().mutex);
  static_plugins().registries.insert(this);
}

Registry::~Registry() {
  std::lock_guard lock(static_plugins().mutex);
  static_plugins().registries.erase(this);
}

void register_static_plugin(pg_plugin_entry_fn entry) {
  if (entry == nullptr) user_error("[register_static_plugin] the entry is NULL");
  std::vector<Registry*> registries;
  {
    std::lock_guard lock(static_plugins().mutex);
    auto& e = static_plugins().entries;
    if (std::find(e.begin(), e.end(), entry) != e.end()) return;
    e.push_back(entry);
    registries.assign(static_plugins().registries.begin(), static_plugins().registries.end());
  }
  for (Registry* r : registries) r->add_linked(entry);
}

void Registry::add_linked(pg_plugin_entry_fn entry) {
  std::lock_guard lock(impl_->mutex);
  if (impl_->discovered) impl_->consider_linked(entry);  // before discovery, discovery does it
}

Registry& Registry::global() {
  // Never destroyed: plugins are not shut down or unloaded at exit.
  static Registry* registry = new Registry();
  return *registry;
}

void Registry::add_plugin_path(const std::string& path) {
  std::lock_guard lock(impl_->mutex);
  if (!impl_->discovered)
    impl_->options.plugin_paths.push_back(path);
  else
    impl_->add_entry(path, PluginSource::api);
}

void Registry::discover() {
  std::lock_guard lock(impl_->mutex);
  impl_->discover_locked();
  impl_->throw_if_config_error();
}

LoadRecord Registry::load(const std::string& name_or_path) {
  if (name_or_path.empty()) user_error("[load] an empty plugin name or path");
  std::lock_guard lock(impl_->mutex);
  impl_->discover_locked();
  const bool is_path =
      name_or_path.find('/') != std::string::npos ||
      (name_or_path.size() > 3 && name_or_path.compare(name_or_path.size() - 3, 3, ".so") == 0);
  if (is_path && detail::ccl_plugin_name_from_file(name_or_path)) {
    const std::string path = detail::canonical_path(name_or_path);
    impl_->ccl.add_candidates(path, PluginSource::api);
    impl_->ccl.load_all(impl_->records);
    for (const LoadRecord& r : impl_->records)
      if (r.path == path) return r;
    user_error("[load] no such file: " + path);
  }
  if (is_path) return impl_->consider(name_or_path, PluginSource::api);
  if (const LoadRecord* r = impl_->find_record(name_or_path)) return *r;
  std::string dirs;
  for (const std::string& d : impl_->searched_dirs) dirs += (dirs.empty() ? "" : ", ") + d;
  user_error("[load] no plugin named '" + name_or_path +
             "' (searched: " + (dirs.empty() ? std::string("no directories") : dirs) + ")");
}

LoadReport Registry::report() {
  std::lock_guard lock(impl_->mutex);
  impl_->discover_locked();
  impl_->ccl.load_all(impl_->records);
  LoadReport report;
  report.records = impl_->records;
  report.config_path = impl_->config.path();
  report.config_error = impl_->config_error;
  return report;
}

std::vector<PluginInfo> Registry::plugins() {
  std::lock_guard lock(impl_->mutex);
  impl_->discover_locked();
  impl_->throw_if_config_error();
  std::vector<PluginInfo> out;
  for (const auto& p : impl_->plugins) {
    PluginInfo info;
    info.name = p->name;
    info.version = p->version;
    info.path = p->path;
    info.device_prefix = p->prefix;
    info.abi_major = p->table->abi_major;
    info.abi_minor = p->table->abi_minor;
    info.isa_version = p->table->isa_version;
    info.has_compiler = p->compiler() != nullptr;
    info.has_async = PG_HAS_FIELD(p->table, pg_plugin, async) && p->table->async != nullptr;
    info.device_count = p->device_count;
    info.no_device_reason = p->no_device_reason;
    for (uint32_t i = 0; i < p->table->option_count; ++i) {
      const pg_option_desc& d = p->table->options[i];
      PluginOptionInfo o;
      o.key = d.key ? d.key : "";
      o.type = d.type;
      o.default_value = d.default_value ? d.default_value : "";
      o.help = d.help ? d.help : "";
      o.min_value = d.min_value;
      o.max_value = d.max_value;
      info.options.push_back(std::move(o));
    }
    out.push_back(std::move(info));
  }
  return out;
}

std::vector<std::string> Registry::device_names() {
  std::lock_guard lock(impl_->mutex);
  impl_->discover_locked();
  impl_->throw_if_config_error();
  std::vector<std::string> names;
  for (const auto& p : impl_->plugins)
    for (uint32_t i = 0; i < p->device_count; ++i)
      names.push_back(p->prefix + ":" + std::to_string(i));
  return names;
}

Device Registry::device(const std::string& name) {
  std::shared_ptr<LoadedPlugin> plugin;
  uint32_t index = 0;
  {
    std::lock_guard lock(impl_->mutex);
    impl_->discover_locked();
    impl_->throw_if_config_error();
    auto parsed = parse_device_name(name);
    if (!parsed)
      user_error("[device] '" + name + "' is not a device name (expected e.g. cpu or cuda:1; " +
                 impl_->available_devices() + ")");
    index = parsed->second < 0 ? 0u : static_cast<uint32_t>(parsed->second);
    for (const auto& p : impl_->plugins)
      if (p->prefix == parsed->first) plugin = p;
    if (!plugin || index >= plugin->device_count)
      user_error("[device] unknown device '" + name + "' (" + impl_->available_devices() + ")");
  }
  pg_device_t handle = plugin->open_device(index);
  std::string canonical = plugin->prefix + ":" + std::to_string(index);
  return Device(std::move(plugin), handle, index, std::move(canonical));
}

CompileTarget Registry::compile_target(const std::string& name, const std::string& arch) {
  std::shared_ptr<LoadedPlugin> plugin;
  {
    std::lock_guard lock(impl_->mutex);
    impl_->discover_locked();
    impl_->throw_if_config_error();
    for (const auto& p : impl_->plugins)
      if (p->name == name || p->prefix == name) plugin = p;
    if (!plugin) {
      std::string loaded;
      for (const auto& p : impl_->plugins) loaded += (loaded.empty() ? "" : ", ") + p->name;
      user_error("[compile_target] no loaded plugin named '" + name +
                 "' (loaded: " + (loaded.empty() ? std::string("none") : loaded) + ")");
    }
  }
  const pg_compiler_api* c = plugin->compiler();
  if (c == nullptr)
    user_error("[compile_target] plugin " + plugin->name + " (ABI " +
               std::to_string(plugin->table->abi_major) + "." +
               std::to_string(plugin->table->abi_minor) +
               ") cannot compile without a device: it has no compiler role (SDK 1.3)");
  pg_target target{};
  target.struct_size = sizeof(target);
  target.caps.struct_size = sizeof(target.caps);
  detail::call_plugin(*plugin, "describe_target '" + arch + "'", plugin->name, [&](pg_error* err) {
    return c->describe_target(plugin->state, arch.c_str(), &target, err);
  });
  target.arch[sizeof(target.arch) - 1] = '\0';
  return CompileTarget(std::move(plugin), target);
}

std::string Registry::default_device_name() {
  if (const char* env = std::getenv("POLYGRAD_DEVICE"); env != nullptr && env[0] != '\0')
    return env;
  std::lock_guard lock(impl_->mutex);
  impl_->discover_locked();
  impl_->throw_if_config_error();
  return impl_->config.default_device().value_or("cpu");
}

Device Registry::default_device() {
  return device(default_device_name());
}

Config Registry::config() {
  std::lock_guard lock(impl_->mutex);
  impl_->discover_locked();
  return impl_->config;
}

Communicator Registry::communicator(const std::string& plugin, const Bootstrap& bootstrap) {
  std::shared_ptr<detail::LoadedCcl> found;
  {
    std::lock_guard lock(impl_->mutex);
    impl_->discover_locked();
    impl_->throw_if_config_error();
    impl_->ccl.load_all(impl_->records);
    std::string names;
    found = impl_->ccl.find(plugin, names);
    if (!found)
      user_error("[communicator] no ccl plugin named '" + plugin +
                 "' (loaded: " + (names.empty() ? std::string("none") : names) +
                 "; a ccl plugin is a file polygrad_ccl_<name>.so beside the device plugins)");
  }
  return Communicator(detail::make_communicator(std::move(found), bootstrap));
}

std::string Registry::find_plugin(const std::string& name) {
  std::lock_guard lock(impl_->mutex);
  impl_->discover_locked();
  const LoadRecord* r = impl_->find_record(name);
  return r != nullptr ? r->path : "";
}

}  // namespace polygrad
