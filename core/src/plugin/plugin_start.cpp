// Initialising an opened plugin, opening its devices, shutting it down.
#include "loaded_plugin.hpp"
#include "support/phase_timing.hpp"

namespace polygrad::detail {

std::string describe_current_exception() {
  try {
    throw;
  } catch (const std::exception& e) {
    return e.what();
  } catch (...) {
    return "an exception that is not a std::exception";
  }
}

LoadedPlugin::~LoadedPlugin() {
  if (state == nullptr || table->shutdown == nullptr) return;
  release_in_plugin(name, "shutdown", [&] { table->shutdown(state); });
}

pg_device_t LoadedPlugin::open_device(uint32_t index) {
  std::lock_guard lock(open_mutex);
  auto it = opened.find(index);
  if (it != opened.end()) return it->second;
  pg_device_t device = nullptr;
  timing::Timed timed(timing::Phase::device_open);
  call_plugin(*this, "device_open", prefix + ":" + std::to_string(index),
              [&](pg_error* err) { return table->device_open(state, index, &device, err); });
  if (device == nullptr)
    throw Error(ErrorKind::internal, "[device_open] " + prefix + ":" + std::to_string(index) +
                                         " (plugin " + name + "): returned PG_OK but no device");
  opened.emplace(index, device);
  return device;
}

std::shared_ptr<LoadedPlugin> start_plugin(const pg_plugin* table, const std::string& path,
                                           PluginOptions options, LoadRecord& record) {
  auto plugin = std::make_shared<LoadedPlugin>();
  plugin->table = table;
  plugin->name = table->name;
  plugin->version = table->version;
  plugin->prefix = table->device_prefix;
  plugin->path = path;
  plugin->host = make_host_context(plugin->name, path, std::move(options));

  auto refuse = [&](LoadStage stage, const std::string& reason) {
    record.status = LoadStatus::refused;
    record.stage = stage;
    record.reason = reason;
    return nullptr;
  };

  pg_error err;
  err.message[0] = '\0';
  pg_status status = PG_OK;
  timing::Timed timed(timing::Phase::plugin_init);
  record.stage = LoadStage::init;
  try {
    status = table->init(&plugin->host->services, &plugin->state, &err);
  } catch (...) {
    plugin->state = nullptr;
    return refuse(LoadStage::init, "init threw a C++ exception across the C boundary: " +
                                       describe_current_exception());
  }
  err.message[PG_ERROR_MESSAGE_MAX - 1] = '\0';
  if (status != PG_OK) {
    plugin->state = nullptr;  // the plugin is never called again, shutdown included
    return refuse(LoadStage::init, std::string("init failed with ") + status_name(status) + ": " +
                                       (err.message[0] ? err.message : "(no message)"));
  }

  record.stage = LoadStage::devices;
  uint32_t count = 0;
  err.message[0] = '\0';
  try {
    status = table->device_count(plugin->state, &count, &err);
  } catch (...) {
    return refuse(LoadStage::devices,
                  "device_count threw a C++ exception across the C "
                  "boundary: " +
                      describe_current_exception());
  }
  err.message[PG_ERROR_MESSAGE_MAX - 1] = '\0';
  if (status != PG_OK)
    return refuse(LoadStage::devices, std::string("device_count failed with ") +
                                          status_name(status) + ": " +
                                          (err.message[0] ? err.message : "(no message)"));
  plugin->device_count = count;
  if (count == 0)
    plugin->no_device_reason = err.message[0] ? err.message : "the plugin gave no reason";

  record.status = LoadStatus::loaded;
  record.stage = LoadStage::ready;
  record.device_count = count;
  record.reason = plugin->no_device_reason;
  return plugin;
}

}  // namespace polygrad::detail
