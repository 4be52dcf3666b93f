// A plugin as the conformance kit drives it: the loaded library, host-services tables, the
// initialised state and device 0, and guarded calls that turn every status, message and
// escaped exception into a CallResult.
#ifndef POLYGRAD_CONFORMANCE_SESSION_HPP
#define POLYGRAD_CONFORMANCE_SESSION_HPP

#include <polygrad/plugin.h>

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "values.hpp"

namespace polygrad::conformance::detail {

/// "PG_ERR_COMPILE" for a status, "unknown status 42" for garbage.
std::string status_name(int status);

/// What a plugin call returned.
struct CallResult {
  int status = PG_OK;
  std::string message;
  bool threw = false;  ///< a C++ exception crossed the boundary (itself a failure)

  bool ok() const { return status == PG_OK && !threw; }
  /// "PG_ERR_LAUNCH: program 'x' ..." or "PG_OK".
  std::string describe() const;
};

/// Runs `fn(pg_error*) -> pg_status` with a fresh error buffer and catches anything thrown.
template <class Fn>
CallResult guarded(Fn&& fn) {
  CallResult r;
  pg_error err;
  err.message[0] = '\0';
  try {
    r.status = static_cast<int>(fn(&err));
  } catch (...) {
    r.status = PG_ERR_INTERNAL;
    r.threw = true;
    r.message = "a C++ exception escaped the plugin boundary";
    return r;
  }
  err.message[PG_ERROR_MESSAGE_MAX - 1] = '\0';
  r.message = err.message;
  return r;
}

/// Plugin options the kit hands out through get_option (--option key=value): key -> text, the
/// same for every device and for the plugin as a whole.
using OptionValues = std::map<std::string, std::string>;

/// How a host-services table handed to init should look.
struct HostShape {
  uint32_t abi_major = PG_PLUGIN_ABI_MAJOR;
  uint32_t abi_minor = PG_PLUGIN_ABI_MINOR;
  uint32_t struct_size = sizeof(pg_host_services);  ///< may exceed sizeof: garbage tail
  bool optional_services = true;                    ///< log and get_option set (else NULL)
  const OptionValues* options = nullptr;  ///< what get_option answers; must outlive the plugin
};

/// A host-services table of that shape. Lives until the process ends, as plugin.h promises.
const pg_host_services* make_host_services(const HostShape& shape, const std::string& path);

/// Launch geometry and scalar arguments of one kernel.
struct LaunchShape {
  std::array<uint32_t, 3> global{1, 1, 1};
  std::array<uint32_t, 3> local{1, 1, 1};
  std::vector<int64_t> scalars;
};

/// Where running a kernel stopped.
enum class Stage { done, render, load, alloc, copy_in, launch, copy_out };

struct RunResult {
  Stage stage = Stage::done;
  CallResult call;
};

/// The loaded plugin. Never dlclose'd (plugin.h: the library is never unloaded).
class Session {
 public:
  Session() = default;
  /// Releases the state through shutdown (when present); the library stays loaded.
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  /// dlopen RTLD_NOW|RTLD_LOCAL and call the entry symbol; false with `why` on failure.
  bool open_library(const std::string& path, std::string& why);
  /// init with a current host, count devices, open device 0 and read its properties.
  bool open_device(std::string& why);
  /// The options every host table of this session hands out (set before open_device). They
  /// must live until the process ends, as plugin.h promises for get_option's strings.
  void set_options(const OptionValues* options) { options_ = options; }
  const OptionValues* options() const { return options_; }

  const pg_plugin& plugin() const { return *plugin_; }
  const std::string& path() const { return path_; }
  pg_plugin_state_t state() const { return state_; }
  pg_device_t device() const { return device_; }
  uint32_t device_count() const { return device_count_; }
  const pg_device_properties& properties() const { return props_; }

  /// Role tables and their optional slots, NULL where absent or past struct_size.
  const pg_allocator_api* allocator() const;
  const pg_renderer_api* renderer() const;
  const pg_loader_api* loader() const;
  bool has_copy_device() const;
  bool has_host_pointer() const;
  bool has_wrap_host() const;
  bool has_launch_timed() const;
  /// pg_plugin.async with every required slot (ABI 1.3).
  bool has_async() const;
  bool has_shutdown() const;

  CallResult alloc(uint64_t nbytes, pg_buffer_t* out) const;
  void free(pg_buffer_t buffer) const;
  CallResult copy_in(pg_buffer_t dst, uint64_t offset, const void* src, uint64_t n) const;
  CallResult copy_out(void* dst, pg_buffer_t src, uint64_t offset, uint64_t n) const;
  CallResult render(const pg_kernel_program* program, std::string& artifact) const;
  /// Load through load_program with `program`'s metadata where the plugin has it (ABI 1.3) and
  /// `program` is given, as the host does; through load otherwise.
  CallResult load(const std::string& artifact, const char* entry, pg_program_t* out,
                  const pg_kernel_program* program = nullptr) const;
  void unload(pg_program_t program) const;
  CallResult launch(pg_program_t program, const pg_launch_args* args) const;
  CallResult synchronize() const;

  /// Render, load, copy `buffers` in, launch, synchronise and copy every buffer back.
  RunResult run(const pg_kernel_program& program, std::vector<HostArray>& buffers,
                const LaunchShape& shape) const;

 private:
  std::string path_;
  void* library_ = nullptr;
  const pg_plugin* plugin_ = nullptr;
  pg_plugin_state_t state_ = nullptr;
  pg_device_t device_ = nullptr;
  uint32_t device_count_ = 0;
  pg_device_properties props_{};
  const OptionValues* options_ = nullptr;
};

}  // namespace polygrad::conformance::detail

#endif  // POLYGRAD_CONFORMANCE_SESSION_HPP
