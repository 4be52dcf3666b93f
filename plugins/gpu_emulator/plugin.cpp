// gpu_emu plugin entry: one device, emu:0, that runs kernel programs with GPU semantics on the
// host's CPU (groups whose threads meet at barriers, local memory with a race detector, 32-wide
// warps with tensor cores, memory reached only through copies). It is the reference the host's
// group codegen runs on where there is no GPU. See README.md beside this file.
#include <polygrad/plugin.hpp>

#include <algorithm>
#include <memory>
#include <mutex>
#include <thread>

#include "device.hpp"
#include "target.hpp"

namespace polygrad::gpu_emu {

class Plugin {
 public:
  using Device = gpu_emu::Device;
  static constexpr const char* name = "gpu_emu";
  static constexpr const char* version = "0.1.0";
  static constexpr const char* device_prefix = "emu";
  static constexpr pg_artifact_format artifact_format = PG_ARTIFACT_OTHER;
  static constexpr uint32_t alignment = kAlignment;
  static constexpr bool has_copy_device = true, has_host_pointer = false, has_launch_timed = true;
  // Streams and events: the SDK runs the blocking calls on a thread per stream.
  static constexpr bool has_async = true;

  static std::vector<pg_option_desc> options() {
    static const std::string threads = std::to_string(default_threads());
    return {
        {"threads", PG_OPTION_INT, threads.c_str(), "host threads that run a launch's groups", 1,
         256},
        {"check_alignment", PG_OPTION_BOOL, "true",
         "fail a vector load or store that is not aligned to its size, as a GPU does", 1, 0},
        {"trace", PG_OPTION_BOOL, "false",
         "log every program loaded (as a listing) and every launch at debug level", 1, 0},
    };
  }

  explicit Plugin(const sdk::Host& host) : host_(host) {}

  uint32_t device_count(std::string&) { return 1; }

  Device& device(uint32_t) {
    std::call_once(once_, [this] {
      Settings settings;
      settings.threads = threads();
      settings.check_alignment = option("check_alignment").value_or("true") == "true";
      settings.trace = option("trace").value_or("false") == "true";
      device_ = std::make_unique<Device>(host_, settings);
    });
    return *device_;
  }

  // Compile-only: the one target, with no device opened.
  void describe_target(const std::string& arch, pg_target& out) {
    check_arch(arch);
    std::snprintf(out.arch, sizeof(out.arch), "%s", kArch);
    fill_capabilities(out.caps, threads());
  }
  std::string render(const pg_target& target, const pg_kernel_program& program) {
    check_arch(target.arch);
    return render_program(program);
  }
  bool op_support(const pg_target&, uint32_t op, uint32_t dtype, uint32_t vcount) {
    return op_supported(op, dtype, vcount);
  }

 private:
  static uint32_t default_threads() {
    return std::clamp(std::thread::hardware_concurrency(), 1u, 2u);
  }
  static void check_arch(const std::string& arch) {
    if (!arch.empty() && arch != kArch)
      sdk::fail(PG_ERR_UNSUPPORTED,
                "gpu_emu compiles for '" + std::string(kArch) + "' only, not '" + arch + "'");
  }
  /// The option for device 0, else for the plugin as a whole.
  std::optional<std::string> option(const char* key) const {
    if (auto v = host_.option(0, key)) return v;
    return host_.option(-1, key);
  }
  uint32_t threads() const {
    if (auto v = option("threads"))
      return static_cast<uint32_t>(std::clamp(std::stol(*v), 1l, 256l));
    return default_threads();
  }

  sdk::Host host_;
  std::once_flag once_;
  std::unique_ptr<Device> device_;
};

}  // namespace polygrad::gpu_emu

PG_DEFINE_PLUGIN(polygrad::gpu_emu::Plugin)
