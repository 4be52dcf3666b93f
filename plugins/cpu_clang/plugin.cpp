// cpu_clang plugin entry: the plugin class, its option schema and the one exported symbol.
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "device.hpp"

namespace polygrad::cpu_clang {

class CpuClangPlugin {
 public:
  using Device = CpuDevice;
  static constexpr const char* name = "cpu_clang";
  static constexpr const char* version = kVersion;
  static constexpr const char* device_prefix = "cpu";
  static constexpr pg_artifact_format artifact_format = PG_ARTIFACT_C_SOURCE;
  static constexpr uint32_t alignment = kAlignment;
  static constexpr bool has_copy_device = true, has_host_pointer = true, has_launch_timed = true;
  static constexpr bool has_wrap_host = true;
  static constexpr bool has_async = true;
  /// Each load compiles with its own clang instance (and LLVM context); the object cache
  /// writes through unique temporary files; the JIT links under its lock.
  static constexpr bool concurrent_load = true;
  static constexpr pg_artifact_format binary_format = PG_ARTIFACT_OBJECT;

  static std::vector<pg_option_desc> options() {
    static const std::string threads =
        std::to_string(std::max(1u, std::thread::hardware_concurrency()));
    static const std::string cache_dir = default_cache_dir();
    return {
        {"threads", PG_OPTION_INT, threads.c_str(), "worker threads for kernel launches", 1, 1024},
        {"cache_dir", PG_OPTION_STRING, cache_dir.c_str(),
         "directory of the compiled-kernel cache (must be private to this user)", 1, 0},
        {"cache", PG_OPTION_BOOL, "true", "keep compiled kernels in cache_dir", 1, 0},
        {"opt_level", PG_OPTION_INT, "2", "clang optimisation level (-O0..-O3)", 0, 3},
        {"count", PG_OPTION_INT, "1",
         "devices offered (cpu, cpu:1, ...), each with its own memory and worker threads", 1,
         kMaxDevices},
    };
  }

  // Cheap: no LLVM work happens until the first load.
  explicit CpuClangPlugin(const sdk::Host& host) : host_(host) {}

  /// The `count` option (1 when unset or out of range): several cpu devices in one process,
  /// e.g. to run collectives across devices (polygrad.distributed.all_reduce_devices).
  uint32_t device_count(std::string&) {
    auto text = host_.option(-1, "count");
    if (!text) return 1;
    char* end = nullptr;
    long v = std::strtol(text->c_str(), &end, 10);
    if (end == text->c_str() || *end != '\0' || v < 1 || v > kMaxDevices) {
      host_.log(PG_LOG_WARNING, "cpu_clang: option 'count' = '" + *text +
                                    "' is not an integer in 1.." + std::to_string(kMaxDevices) +
                                    "; using 1");
      return 1;
    }
    return static_cast<uint32_t>(v);
  }

  CpuDevice& device(uint32_t index) {
    std::lock_guard lock(devices_mutex_);
    if (devices_.size() <= index) devices_.resize(index + 1);
    if (!devices_[index])
      devices_[index] = std::make_unique<CpuDevice>(host_, static_cast<int32_t>(index));
    return *devices_[index];
  }

  // Compile-only (no device opened): the code is for the host CPU, whose target string is the
  // only architecture this plugin compiles for.
  void describe_target(const std::string& arch, pg_target& out) {
    check_arch(arch);
    std::snprintf(out.arch, sizeof(out.arch), "%s", host_cpu().target().c_str());
    fill_capabilities(out.caps,
                      static_cast<uint32_t>(DeviceSettings::from_host(host_, -1).threads));
  }
  std::string render(const pg_target& target, const pg_kernel_program& program) {
    check_arch(target.arch);
    return render_c(program);
  }
  // What the C dialect renders: every op of its ISA but WMMA (no tensor cores), on the
  // dtypes it declares, in up to 16 lanes; ATOMIC_ADD on 32- and 64-bit ints and floats.
  bool op_support(const pg_target&, uint32_t op, uint32_t dtype, uint32_t vcount) {
    if (op == PG_OP_WMMA) return false;
    if (op == PG_OP_ATOMIC_ADD)
      return vcount == 1 &&
             (dtype == PG_DTYPE_INT32 || dtype == PG_DTYPE_INT64 || dtype == PG_DTYPE_UINT32 ||
              dtype == PG_DTYPE_UINT64 || dtype == PG_DTYPE_FLOAT32 || dtype == PG_DTYPE_FLOAT64);
    return vcount <= 16 && (dtype == PG_DTYPE_VOID || ((c_dtype_mask() >> dtype) & 1u));
  }
  std::string compile(const pg_target& target, const void* artifact, uint64_t size,
                      const pg_program_info& info) {
    check_arch(target.arch);
    if (info.artifact_format != PG_ARTIFACT_C_SOURCE)
      sdk::fail(PG_ERR_UNSUPPORTED, "cpu: compile takes C source, not artifact format " +
                                        std::to_string(info.artifact_format));
    CompileOptions options;
    options.opt_level = DeviceSettings::from_host(host_, -1).opt_level;
    options.cpu = &host_cpu();
    std::vector<char> object =
        compile_c(std::string(static_cast<const char*>(artifact), size), info.entry, options);
    return std::string(object.begin(), object.end());
  }

 private:
  static void check_arch(const std::string& arch) {
    if (!arch.empty() && arch != host_cpu().target())
      sdk::fail(PG_ERR_UNSUPPORTED, "cpu_clang compiles for this machine's CPU (" +
                                        host_cpu().target() + ") only, not '" + arch + "'");
  }

  static constexpr int kMaxDevices = 64;

  sdk::Host host_;
  std::mutex devices_mutex_;
  std::vector<std::unique_ptr<CpuDevice>> devices_;  ///< by index, opened on first use
};

}  // namespace polygrad::cpu_clang

PG_DEFINE_PLUGIN(polygrad::cpu_clang::CpuClangPlugin)
