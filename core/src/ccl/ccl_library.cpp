// Opening one collective-communication plugin and checking its table before anything else
// touches it; then init and probe. Every step leaves its mark on the load record.
#include "src/ccl/loaded_ccl.hpp"
#include "src/plugin/discovery.hpp"
#include "src/plugin/loaded_plugin.hpp"

#include <cstddef>
#include <filesystem>

namespace polygrad::detail {

namespace {

std::shared_ptr<LoadedCcl> refused(LoadRecord& record, LoadStage stage, const std::string& why) {
  refuse(record, stage, why);
  return nullptr;
}

/// "" when the table's version and required slots are fine, else why not (and the stage).
std::string check_table(const pg_ccl_plugin& t, LoadRecord& record) {
  if (!check_abi_version("CCL ABI", t.abi_major, t.abi_minor, PG_CCL_ABI_MAJOR, PG_CCL_ABI_MINOR,
                         record))
    return record.reason;
  record.stage = LoadStage::abi;
  if (t.struct_size < sizeof(pg_ccl_plugin))  // the host speaks CCL ABI 1.0: the whole table
    return "pg_ccl_plugin struct_size " + std::to_string(t.struct_size) +
           " is smaller than the CCL ABI 1.0 table (" + std::to_string(sizeof(pg_ccl_plugin)) +
           " bytes)";
  record.stage = LoadStage::slots;
  std::string missing;
  auto need = [&](bool present, const char* slot) {
    if (!present) missing += (missing.empty() ? "" : ", ") + std::string(slot);
  };
  need(t.name != nullptr && t.name[0] != '\0', "name");
  need(t.version != nullptr, "version");
  need(t.option_count == 0 || t.options != nullptr, "options");
  need(t.init != nullptr, "init");
  need(t.probe != nullptr, "probe");
  need(t.comm_init != nullptr, "comm_init");
  need(t.comm_destroy != nullptr, "comm_destroy");
  need(t.comm_info != nullptr, "comm_info");
  need(t.all_reduce != nullptr, "all_reduce");
  need(t.broadcast != nullptr, "broadcast");
  need(t.all_gather != nullptr, "all_gather");
  need(t.reduce_scatter != nullptr, "reduce_scatter");
  need(t.barrier != nullptr, "barrier");
  if (!missing.empty()) return "required slots missing: " + missing;
  return "";
}

/// The plugin's message, or a stand-in when it gave none.
std::string message_of(pg_error& err) {
  err.message[PG_ERROR_MESSAGE_MAX - 1] = '\0';
  return err.message[0] ? err.message : "(no message)";
}

}  // namespace

std::shared_ptr<LoadedCcl> load_ccl(const std::string& path, LoadRecord& record) {
  record.kind = PluginKind::ccl;
  // Never closed: the transport (MPI) lives until the process ends.
  auto entry = reinterpret_cast<pg_ccl_entry_fn>(
      open_library_entry(path, PG_CCL_ENTRY_NAME, "(a ccl plugin must export it)", record));
  if (entry == nullptr) return nullptr;
  const pg_ccl_plugin* table = nullptr;
  try {
    table = entry();
  } catch (...) {
    return refused(record, LoadStage::table,
                   PG_CCL_ENTRY_NAME " threw a C++ exception across the C boundary: " +
                       describe_current_exception());
  }
  if (table == nullptr)
    return refused(record, LoadStage::table, PG_CCL_ENTRY_NAME " returned NULL");
  if (std::string why = check_table(*table, record); !why.empty())
    return refused(record, record.stage, why);
  record.plugin_name = table->name;
  record.plugin_version = table->version;

  auto plugin = std::make_shared<LoadedCcl>();
  plugin->table = table;
  plugin->name = table->name;
  plugin->version = table->version;
  plugin->path = path;
  plugin->host = make_host_context("ccl_" + plugin->name, path, PluginOptions{});

  record.stage = LoadStage::init;
  pg_error err;
  err.message[0] = '\0';
  pg_status status = PG_OK;
  try {
    status = table->init(&plugin->host->services, &plugin->state, &err);
  } catch (...) {
    plugin->state = nullptr;  // the plugin is never called again, shutdown included
    return refused(
        record, LoadStage::init,
        "init threw a C++ exception across the C boundary: " + describe_current_exception());
  }
  if (status != PG_OK) {
    plugin->state = nullptr;
    return refused(record, LoadStage::init,
                   std::string("init failed with ") + status_name(status) + ": " + message_of(err));
  }

  record.stage = LoadStage::devices;
  uint32_t usable = 0;
  err.message[0] = '\0';
  try {
    status = table->probe(plugin->state, &usable, &err);
  } catch (...) {
    return refused(
        record, LoadStage::devices,
        "probe threw a C++ exception across the C boundary: " + describe_current_exception());
  }
  if (status != PG_OK)
    return refused(
        record, LoadStage::devices,
        std::string("probe failed with ") + status_name(status) + ": " + message_of(err));
  plugin->usable = usable != 0;
  if (!plugin->usable) plugin->unusable_reason = err.message[0] ? message_of(err) : "no reason";
  record.status = LoadStatus::loaded;
  record.stage = LoadStage::ready;
  record.device_count = plugin->usable ? 1 : 0;
  record.reason = plugin->unusable_reason;
  return plugin;
}

void CclPlugins::add_candidates(const std::string& dir_or_file, PluginSource source) {
  std::error_code ec;
  std::vector<std::string> files;
  if (std::filesystem::is_directory(dir_or_file, ec))
    files = ccl_plugin_files_in(dir_or_file);
  else if (ccl_plugin_name_from_file(dir_or_file))
    files.push_back(dir_or_file);
  for (const std::string& f : files) {
    const std::string path = canonical_path(f);
    bool seen = false;
    for (const auto& c : candidates_) seen = seen || c.first == path;
    if (!seen) candidates_.emplace_back(path, source);
  }
}

void CclPlugins::load_all(std::vector<LoadRecord>& records) {
  for (; loaded_upto_ < candidates_.size(); ++loaded_upto_) {
    const auto& [path, source] = candidates_[loaded_upto_];
    LoadRecord record;
    record.path = path;
    record.source = source;
    record.kind = PluginKind::ccl;
    const std::string stem = ccl_plugin_name_from_file(path).value_or("");
    std::shared_ptr<LoadedCcl> first;
    for (const auto& p : plugins_)
      if (p->name == stem) first = p;
    std::shared_ptr<LoadedCcl> plugin;
    if (first) {
      refused(record, LoadStage::unique, "shadowed by " + first->path);
    } else {
      plugin = load_ccl(path, record);
      for (const auto& p : plugins_)
        if (plugin && p->name == plugin->name) {
          refused(record, LoadStage::unique, "shadowed by " + p->path);
          plugin = nullptr;
        }
    }
    if (plugin) plugins_.push_back(plugin);
    if (!record.loaded() && record.reason.rfind("shadowed by ", 0) != 0)
      host_log(PG_LOG_WARNING, format_record(record));
    records.push_back(std::move(record));
  }
}

std::shared_ptr<LoadedCcl> CclPlugins::find(const std::string& name, std::string& names) const {
  std::shared_ptr<LoadedCcl> found;
  for (const auto& p : plugins_) {
    names += (names.empty() ? "" : ", ") + p->name;
    if (p->name == name) found = p;
  }
  return found;
}

}  // namespace polygrad::detail
