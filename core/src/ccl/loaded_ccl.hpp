// Internal: collective-communication plugins: opening and checking one (its load record),
// the set a registry found, and the firewall around calls into one.
#ifndef POLYGRAD_SRC_CCL_LOADED_CCL_HPP
#define POLYGRAD_SRC_CCL_LOADED_CCL_HPP

#include <polygrad/ccl.h>
#include <polygrad/ccl.hpp>
#include <polygrad/error.hpp>
#include <polygrad/load_report.hpp>

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace polygrad::detail {

struct HostContext;

/// An initialised ccl plugin. Shut down (its optional `shutdown`) when the registry that loaded
/// it and its last communicator are gone; the process-wide registry never goes, and the library
/// is never unloaded (a transport such as MPI cannot start twice in one process).
struct LoadedCcl {
  const pg_ccl_plugin* table = nullptr;
  pg_plugin_state_t state = nullptr;
  HostContext* host = nullptr;
  std::string name;
  std::string version;
  std::string path;
  bool usable = false;
  std::string unusable_reason;  ///< the plugin's probe message when not usable

  LoadedCcl() = default;
  LoadedCcl(const LoadedCcl&) = delete;
  LoadedCcl& operator=(const LoadedCcl&) = delete;
  ~LoadedCcl();
};

/// Open `path` (a polygrad_ccl_*.so), check its table, initialise it and probe it. Returns the
/// plugin, or nullptr with record.stage and record.reason saying why not.
std::shared_ptr<LoadedCcl> load_ccl(const std::string& path, LoadRecord& record);

/// The ccl plugin candidates of one registry: found at discovery, loaded on first need.
class CclPlugins {
 public:
  /// Note the ccl plugin files of `dir` (or `dir` itself when it is one).
  void add_candidates(const std::string& dir_or_file, PluginSource source);
  /// Load every candidate not yet loaded; their records go to `records`.
  void load_all(std::vector<LoadRecord>& records);
  /// The loaded plugin named `name` ("mpi"), or nullptr; `names` gets the loaded names.
  std::shared_ptr<LoadedCcl> find(const std::string& name, std::string& names) const;

 private:
  std::vector<std::pair<std::string, PluginSource>> candidates_;
  size_t loaded_upto_ = 0;
  std::vector<std::shared_ptr<LoadedCcl>> plugins_;
};

/// A communicator of a loaded ccl plugin; destroyed through the plugin with the last user.
struct CommunicatorState {
  std::shared_ptr<LoadedCcl> plugin;
  pg_ccl_comm_t comm = nullptr;
  int rank = 0;
  int world_size = 1;
  double timeout_seconds = 0;
  std::string transport;
  ~CommunicatorState();
};

/// Join a group through `plugin`.
std::shared_ptr<CommunicatorState> make_communicator(std::shared_ptr<LoadedCcl> plugin,
                                                     const Bootstrap& bootstrap);

/// Run one call into a ccl plugin: a non-OK status becomes an Error "[<op>] ccl <name> rank
/// <r>: <STATUS>: <message>" carrying the status; an exception that escapes becomes an
/// internal Error.
void call_ccl(const LoadedCcl& plugin, const std::string& op, int rank,
              const std::function<pg_status(pg_error*)>& fn);

}  // namespace polygrad::detail

#endif  // POLYGRAD_SRC_CCL_LOADED_CCL_HPP
