// Internal: a plugin that passed every load check, and the firewall around calls into it.
#ifndef POLYGRAD_SRC_PLUGIN_LOADED_PLUGIN_HPP
#define POLYGRAD_SRC_PLUGIN_LOADED_PLUGIN_HPP

#include <polygrad/plugin.h>
#include <polygrad/config.hpp>
#include <polygrad/error.hpp>
#include <polygrad/load_report.hpp>

#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <type_traits>

namespace polygrad::detail {

/// What the host gives one plugin instance: the services table, its path and its validated
/// options. The ABI says this table lives until the process ends, so it is never freed.
struct HostContext {
  pg_host_services services{};
  std::string plugin_name;
  std::string plugin_path;
  PluginOptions options;
};

/// A new HostContext, kept alive for the rest of the process.
HostContext* make_host_context(const std::string& plugin_name, const std::string& plugin_path,
                               PluginOptions options);

/// Log on behalf of the host ("polygrad: ...") when POLYGRAD_LOG lets `level` through.
void host_log(pg_log_level level, const std::string& message);

/// An initialised plugin. Shut down when the last Device, Buffer or Program using it is gone
/// (for registries other than the process-wide one, which is never destroyed).
struct LoadedPlugin {
  const pg_plugin* table = nullptr;
  pg_plugin_state_t state = nullptr;
  HostContext* host = nullptr;
  std::string name;
  std::string version;
  std::string prefix;
  std::string path;
  uint32_t device_count = 0;
  std::string no_device_reason;

  std::mutex open_mutex;
  std::map<uint32_t, pg_device_t> opened;  // device_open results, by index

  /// op_support answers, by (device, op, dtype, vcount).
  std::mutex support_mutex;
  std::map<std::pair<pg_device_t, uint64_t>, bool> support;

  /// The kernel ISA the host writes for this plugin: min(host ISA, plugin ISA).
  uint32_t isa() const {
    return table->isa_version < PG_KERNEL_ISA_VERSION ? table->isa_version : PG_KERNEL_ISA_VERSION;
  }
  /// The plugin's compiler role (ABI 1.3), or nullptr.
  const pg_compiler_api* compiler() const {
    if (!PG_HAS_FIELD(table, pg_plugin, compiler) || table->compiler == nullptr) return nullptr;
    const pg_compiler_api* c = table->compiler;
    return PG_HAS_FIELD(c, pg_compiler_api, render) && c->describe_target && c->render ? c
                                                                                       : nullptr;
  }

  LoadedPlugin() = default;
  LoadedPlugin(const LoadedPlugin&) = delete;
  LoadedPlugin& operator=(const LoadedPlugin&) = delete;
  ~LoadedPlugin();

  /// device_open, once per index.
  pg_device_t open_device(uint32_t index);
};

/// Marks the record refused at `stage` with `reason`; false, for `return refuse(...)`.
bool refuse(LoadRecord& record, LoadStage stage, const std::string& reason);
/// The version check every plugin table starts with (device and ccl): the same major as the
/// host's and a minor no newer; `abi` names the ABI in the reason ("ABI", "CCL ABI").
bool check_abi_version(const char* abi, uint32_t major, uint32_t minor, uint32_t host_major,
                       uint32_t host_minor, LoadRecord& record);
/// Opens `path` (RTLD_NOW | RTLD_LOCAL, never closed) and finds the entry `symbol`; NULL with
/// the record refused at stage open or entry (`how_to_export` ends that reason).
void* open_library_entry(const std::string& path, const char* symbol, const char* how_to_export,
                         LoadRecord& record);

/// Open `path`, resolve and call the entry, check the ABI version and the required slots.
/// Returns the table, or nullptr with record.stage and record.reason saying why not. The
/// library stays loaded for the rest of the process either way.
const pg_plugin* open_plugin(const std::string& path, LoadRecord& record);

/// Call `entry` (a plugin's entry, found in a library or linked in statically), check the ABI
/// version and the required slots. Returns the table, or nullptr with the record filled in.
const pg_plugin* check_entry(pg_plugin_entry_fn entry, LoadRecord& record);

/// Initialise an opened plugin and count its devices. Returns nullptr with the record filled
/// in when init or device_count fails.
std::shared_ptr<LoadedPlugin> start_plugin(const pg_plugin* table, const std::string& path,
                                           PluginOptions options, LoadRecord& record);

/// "<what>" of the exception in flight, for messages about plugins that throw.
std::string describe_current_exception();

/// Run a release call into a plugin (free, unload, shutdown) where nothing can be thrown: an
/// exception that escapes the plugin is logged as an error naming `op`, then dropped.
template <class Fn>
void release_in_plugin(const std::string& plugin, const char* op, Fn&& fn) noexcept {
  try {
    fn();
  } catch (...) {
    try {
      host_log(PG_LOG_ERROR, "plugin " + plugin + " threw a C++ exception from " + op + ": " +
                                 describe_current_exception());
    } catch (...) {
    }
  }
}

/// The text of an op name given to call_plugin: a string, or a callable that makes one (so a
/// name built from parts costs nothing unless there is an error to report).
template <class OpName>
std::string op_text(const OpName& op) {
  if constexpr (std::is_invocable_v<const OpName&>)
    return op();
  else
    return std::string(op);
}

/// Run one call into a plugin: `fn(pg_error*)` returns the plugin's status. A non-OK status
/// becomes an Error "[<op>] <device> (plugin <name>): <STATUS>: <message>"; an exception that
/// escapes the plugin becomes an internal Error saying so. The message is only built then:
/// launches go through here.
template <class OpName, class Fn>
void call_plugin(const LoadedPlugin& plugin, const OpName& op, const std::string& device, Fn&& fn) {
  pg_error err;
  err.message[0] = '\0';
  pg_status status = PG_OK;
  auto where = [&] {
    std::string w = "[";  // (appended piece by piece: GCC 12 misreads `"[" + op_text(op)`)
    w += op_text(op);
    w += "] " + device + " (plugin " + plugin.name + ")";
    return w;
  };
  try {
    status = fn(&err);
  } catch (...) {
    throw Error(ErrorKind::internal,
                where() +
                    ": the plugin threw a C++ exception across the C "
                    "boundary: " +
                    describe_current_exception(),
                PG_ERR_INTERNAL);
  }
  if (status == PG_OK) return;
  err.message[PG_ERROR_MESSAGE_MAX - 1] = '\0';
  std::string text = where() + ": " + status_name(status) + ": " +
                     (err.message[0] ? err.message : "(the plugin gave no message)");
  throw Error(status == PG_ERR_INTERNAL ? ErrorKind::internal : ErrorKind::user, text, status);
}

}  // namespace polygrad::detail

#endif  // POLYGRAD_SRC_PLUGIN_LOADED_PLUGIN_HPP
