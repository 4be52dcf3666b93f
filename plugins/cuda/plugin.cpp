// cuda plugin entry: one device per GPU the driver sees (none, with the driver's reason, where
// there is no driver or GPU), and the compiler role, which renders and compiles for any
// sm_XY without a GPU (compile-only). See README.md beside this file.
#include <polygrad/plugin.hpp>

#include <memory>
#include <mutex>

#include "device.hpp"

namespace polygrad::cuda {

class Plugin {
 public:
  using Device = cuda::Device;
  static constexpr const char* name = "cuda";
  static constexpr const char* version = kVersion;
  static constexpr const char* device_prefix = "cuda";
  static constexpr pg_artifact_format artifact_format = PG_ARTIFACT_CUDA_SOURCE;
  static constexpr pg_artifact_format binary_format = PG_ARTIFACT_OBJECT;  // a cubin
  static constexpr uint32_t alignment = kAlignment;
  static constexpr bool has_copy_device = true, has_host_pointer = false, has_launch_timed = true;
  static constexpr bool has_device_address = true;  // a CUdeviceptr, for NCCL
  /// A load compiles outside the device's lock (NVRTC and nvJitLink per call, the disk cache
  /// through unique temporary files) and loads the module under it, with the context made
  /// current on the calling thread: the host may build several kernels at once.
  static constexpr bool concurrent_load = true;

  static std::vector<pg_option_desc> options() {
    static const std::string cache_dir = sdk::default_cache_dir("cuda");
    return {
        {"arch", PG_OPTION_STRING, "",
         "compile for this sm_XY instead of the GPU's own (e.g. sm_90a)", 1, 0},
        {"cache", PG_OPTION_BOOL, "true", "keep compiled kernels in cache_dir", 1, 0},
        {"cache_dir", PG_OPTION_STRING, cache_dir.c_str(),
         "directory of the compiled-kernel cache (must be private to this user)", 1, 0},
        {"debug_sync", PG_OPTION_BOOL, "false",
         "wait after every launch, so that a fault names its kernel", 1, 0},
        {"memory_pool_limit", PG_OPTION_INT, "0",
         "most bytes of freed device memory kept for reuse (0: no limit)", 0, 9.0e18},
    };
  }

  // Cheap: the driver is opened when the host first asks for devices.
  explicit Plugin(const sdk::Host& host) : host_(host) {}

  uint32_t device_count(std::string& why) {
    const Driver& d = driver();
    why = d.unusable;
    return d.unusable.empty() ? static_cast<uint32_t>(d.devices) : 0;
  }

  Device& device(uint32_t index) {
    std::lock_guard lock(mutex_);
    if (devices_.size() <= index) devices_.resize(index + 1);
    if (!devices_[index])
      devices_[index] = std::make_unique<Device>(host_, static_cast<int>(index), settings(index));
    return *devices_[index];
  }

  // Compile-only: any sm_XY, with no driver or GPU.
  void describe_target(const std::string& arch, pg_target& out) {
    const Arch a = parse_arch(arch);
    std::snprintf(out.arch, sizeof(out.arch), "%s", a.name().c_str());
    fill_capabilities(out.caps, a, DeviceFacts{});
  }
  std::string render(const pg_target& target, const pg_kernel_program& program) {
    parse_arch(target.arch);
    return render_cuda(program);
  }
  std::string compile(const pg_target& target, const void* artifact, uint64_t size,
                      const pg_program_info& info) {
    const Arch a = parse_arch(target.arch);
    if (info.artifact_format != PG_ARTIFACT_CUDA_SOURCE)
      sdk::fail(PG_ERR_UNSUPPORTED, "cuda: compile takes CUDA source, not artifact format " +
                                        std::to_string(info.artifact_format));
    std::call_once(compiler_once_, [this] {
      compiler_ = std::make_unique<Compiler>(host_, settings(-1).cache_dir, 0);
    });
    return compiler_->compile(std::string(static_cast<const char*>(artifact), size), info.entry, a)
        .cubin;
  }
  bool op_support(const pg_target& target, uint32_t op, uint32_t dtype, uint32_t vcount) {
    return op_supported(parse_arch(target.arch), op, dtype, vcount);
  }

 private:
  /// Option `key` for device `index`, else for the plugin as a whole.
  std::optional<std::string> option(int index, const char* key) const {
    if (index >= 0)
      if (auto v = host_.option(index, key)) return v;
    return host_.option(-1, key);
  }
  static bool truthy(const std::optional<std::string>& v, bool fallback) {
    if (!v) return fallback;
    return !(*v == "false" || *v == "0" || *v == "off" || *v == "no");
  }
  Settings settings(int index) const {
    Settings s;
    s.arch = option(index, "arch").value_or("");
    if (truthy(option(index, "cache"), true)) {
      auto dir = option(index, "cache_dir");
      s.cache_dir = dir && !dir->empty() ? *dir : sdk::default_cache_dir("cuda");
    }
    s.debug_sync = truthy(option(index, "debug_sync"), false);
    if (auto v = option(index, "memory_pool_limit")) s.pool_limit = std::stoull(*v);
    return s;
  }

  sdk::Host host_;
  std::mutex mutex_;
  std::vector<std::unique_ptr<Device>> devices_;
  std::once_flag compiler_once_;
  std::unique_ptr<Compiler> compiler_;
};

}  // namespace polygrad::cuda

// PG_DEFINE_PLUGIN's table with the driver's own streams and events (async.cpp) in place of
// the SDK's thread-per-stream ones.
extern "C" PG_PLUGIN_EXPORT const pg_plugin* PG_PLUGIN_ENTRY(void) {
  try {
    static const pg_plugin table = [] {
      pg_plugin t = *::polygrad::sdk::detail::Tables<polygrad::cuda::Plugin>::table();
      t.async = polygrad::cuda::async_table();
      return t;
    }();
    return &table;
  } catch (...) {
    return nullptr;
  }
}
