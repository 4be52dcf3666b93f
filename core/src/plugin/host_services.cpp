// The host services table handed to every plugin: logging, options, its own path.
#include "loaded_plugin.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace polygrad::detail {

namespace {

/// The lowest level POLYGRAD_LOG lets through; PG_LOG_ERROR + 1 for "off".
int log_threshold() {
  const char* env = std::getenv("POLYGRAD_LOG");
  if (env == nullptr) return PG_LOG_WARNING;
  std::string v(env);
  std::transform(v.begin(), v.end(), v.begin(), [](unsigned char c) { return std::tolower(c); });
  if (v == "debug") return PG_LOG_DEBUG;
  if (v == "info") return PG_LOG_INFO;
  if (v == "warning" || v == "warn") return PG_LOG_WARNING;
  if (v == "error") return PG_LOG_ERROR;
  if (v == "off" || v == "none") return PG_LOG_ERROR + 1;
  return PG_LOG_WARNING;
}

const char* level_name(pg_log_level level) {
  switch (level) {
    case PG_LOG_DEBUG:
      return "debug";
    case PG_LOG_INFO:
      return "info";
    case PG_LOG_WARNING:
      return "warning";
    case PG_LOG_ERROR:
      return "error";
  }
  return "log";
}

void write_log(const std::string& who, pg_log_level level, const char* message) {
  if (static_cast<int>(level) < log_threshold()) return;
  // One fprintf per message so lines from several threads do not interleave.
  std::fprintf(stderr, "%s %s: %s\n", who.c_str(), level_name(level),
               message != nullptr ? message : "");
}

void service_log(void* context, pg_log_level level, const char* message) {
  try {
    auto* host = static_cast<HostContext*>(context);
    write_log("polygrad[" + host->plugin_name + "]", level, message);
  } catch (...) {
    // Logging must never throw into a plugin.
  }
}

const char* service_get_option(void* context, int32_t device_index, const char* key) {
  try {
    auto* host = static_cast<HostContext*>(context);
    if (key == nullptr) return nullptr;
    if (device_index >= 0) {
      auto it = host->options.find({device_index, key});
      if (it != host->options.end()) return it->second.c_str();
    }
    auto it = host->options.find({-1, key});
    return it != host->options.end() ? it->second.c_str() : nullptr;
  } catch (...) {
    return nullptr;
  }
}

}  // namespace

void host_log(pg_log_level level, const std::string& message) {
  write_log("polygrad", level, message.c_str());
}

HostContext* make_host_context(const std::string& plugin_name, const std::string& plugin_path,
                               PluginOptions options) {
  static std::mutex mutex;
  static auto* contexts = new std::vector<std::unique_ptr<HostContext>>();
  auto host = std::make_unique<HostContext>();
  host->plugin_name = plugin_name;
  host->plugin_path = plugin_path;
  host->options = std::move(options);
  host->services.struct_size = sizeof(pg_host_services);
  host->services.abi_major = PG_PLUGIN_ABI_MAJOR;
  host->services.abi_minor = PG_PLUGIN_ABI_MINOR;
  host->services.host_context = host.get();
  host->services.log = &service_log;
  host->services.get_option = &service_get_option;
  host->services.plugin_path = host->plugin_path.c_str();
  std::lock_guard lock(mutex);
  contexts->push_back(std::move(host));
  return contexts->back().get();
}

}  // namespace polygrad::detail
