// Compile latency of the cpu_clang plugin, through its C API only:
//   cold      in-process compile of a small elementwise kernel (cache off)
//   cache_hit the same kernel served from the on-disk cache (cache on, warm)
//   fork      `clang-14 -O2 -c` on the same source, for comparison
// Each benchmark reports the median of its iterations as the counter median_ms.
//
//   build/<dir>/bin/bench_compile_latency [--benchmark_filter=...]
#include <benchmark/benchmark.h>
#include <polygrad/plugin.h>
#include <polygrad/program_builder.hpp>

#include <dlfcn.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

extern char** environ;

namespace {

using Clock = std::chrono::steady_clock;
using Options = std::map<std::string, std::string>;

const pg_plugin& plugin_table() {
  static const pg_plugin* table = [] {
    void* lib = dlopen(POLYGRAD_CPU_CLANG_PATH, RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) throw std::runtime_error(dlerror());
    auto entry = reinterpret_cast<pg_plugin_entry_fn>(dlsym(lib, PG_PLUGIN_ENTRY_NAME));
    if (entry == nullptr) throw std::runtime_error("no entry symbol");
    return entry();
  }();
  return *table;
}

/// A plugin instance whose options come from a map; logs go to stderr.
struct Device {
  std::map<std::string, std::string> options;
  pg_host_services services{};
  pg_plugin_state_t state = nullptr;
  pg_device_t device = nullptr;

  explicit Device(std::map<std::string, std::string> opts) : options(std::move(opts)) {
    services.struct_size = sizeof(services);
    services.abi_major = PG_PLUGIN_ABI_MAJOR;
    services.abi_minor = PG_PLUGIN_ABI_MINOR;
    services.host_context = this;
    services.log = [](void*, pg_log_level level, const char* m) {
      if (level >= PG_LOG_INFO) std::fprintf(stderr, "%s\n", m);  // not the per-kernel timings
    };
    services.get_option = [](void* ctx, int32_t, const char* key) -> const char* {
      auto& o = static_cast<Device*>(ctx)->options;
      auto it = o.find(key);
      return it == o.end() ? nullptr : it->second.c_str();
    };
    services.plugin_path = POLYGRAD_CPU_CLANG_PATH;
    pg_error err{};
    if (plugin_table().init(&services, &state, &err) != PG_OK ||
        plugin_table().device_open(state, 0, &device, &err) != PG_OK)
      throw std::runtime_error(err.message);
  }
  ~Device() { plugin_table().shutdown(state); }

  std::string render(polygrad::sdk::ProgramBuilder& b) {
    std::string out;
    pg_byte_sink sink{&out, [](void* ctx, const void* d, uint64_t n) {
                        static_cast<std::string*>(ctx)->append(static_cast<const char*>(d), n);
                        return 0;
                      }};
    pg_error err{};
    if (plugin_table().renderer->render(device, &b.program(), &sink, &err) != PG_OK)
      throw std::runtime_error(err.message);
    return out;
  }

  /// load + unload; returns the seconds load took.
  double load_once(const std::string& source, const char* entry) {
    pg_error err{};
    pg_program_t prog = nullptr;
    auto t0 = Clock::now();
    if (plugin_table().loader->load(device, source.data(), source.size(), entry, &prog, &err) !=
        PG_OK)
      throw std::runtime_error(err.message);
    auto t1 = Clock::now();
    plugin_table().loader->unload(device, prog);
    return std::chrono::duration<double>(t1 - t0).count();
  }
};

/// out[i] = a[i] * b[i] + c[i] in float32.
polygrad::sdk::ProgramBuilder fma_kernel() {
  polygrad::sdk::ProgramBuilder b("fma_f32");
  auto out = b.param_buffer(0, PG_DTYPE_FLOAT32);
  auto x = b.param_buffer(1, PG_DTYPE_FLOAT32);
  auto y = b.param_buffer(2, PG_DTYPE_FLOAT32);
  auto z = b.param_buffer(3, PG_DTYPE_FLOAT32);
  auto i = b.special(PG_SPECIAL_GLOBAL, 0);
  auto prod = b.binary(PG_OP_MUL, b.load(b.index(x, i)), b.load(b.index(y, i)));
  b.store(b.index(out, i), b.binary(PG_OP_ADD, prod, b.load(b.index(z, i))));
  return b;
}

std::string kernel_source() {
  Device d(Options{{"cache", "false"}});
  auto b = fma_kernel();
  return d.render(b);
}

void report_median(benchmark::State& state, std::vector<double>& seconds) {
  if (seconds.empty()) return;
  std::sort(seconds.begin(), seconds.end());
  state.counters["median_ms"] = seconds[seconds.size() / 2] * 1e3;
  state.counters["min_ms"] = seconds.front() * 1e3;
}

std::string temp_dir() {
  std::string pattern = (std::filesystem::temp_directory_path() / "pg_bench_XXXXXX").string();
  if (mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
  return pattern;
}

void BM_ColdInProcessCompile(benchmark::State& state) {
  const std::string source = kernel_source();
  Device d(Options{{"cache", "false"}, {"opt_level", std::to_string(state.range(0))}});
  d.load_once(source, "fma_f32");  // first use initialises LLVM and the JIT: not timed
  std::vector<double> seconds;
  for (auto _ : state) {
    double s = d.load_once(source, "fma_f32");
    seconds.push_back(s);
    state.SetIterationTime(s);
  }
  report_median(state, seconds);
}
BENCHMARK(BM_ColdInProcessCompile)
    ->Arg(2)
    ->Arg(0)
    ->UseManualTime()
    ->Iterations(40)
    ->Unit(benchmark::kMillisecond);

void BM_DiskCacheHit(benchmark::State& state) {
  const std::string source = kernel_source();
  const std::string dir = temp_dir();
  {
    Device d(Options{{"cache_dir", dir}});
    d.load_once(source, "fma_f32");  // the miss that fills the cache
  }
  Device d(Options{{"cache_dir", dir}});
  d.load_once(source, "fma_f32");  // JIT start-up: not timed
  std::vector<double> seconds;
  for (auto _ : state) {
    double s = d.load_once(source, "fma_f32");
    seconds.push_back(s);
    state.SetIterationTime(s);
  }
  report_median(state, seconds);
  std::filesystem::remove_all(dir);
}
BENCHMARK(BM_DiskCacheHit)->UseManualTime()->Iterations(200)->Unit(benchmark::kMillisecond);

void BM_ForkClang14(benchmark::State& state) {
  const std::string clang = POLYGRAD_CLANG14;
  if (clang.empty()) {
    state.SkipWithError("clang-14 not found at configure time");
    return;
  }
  const std::string dir = temp_dir();
  const std::string src = dir + "/kernel.c", obj = dir + "/kernel.o";
  std::ofstream(src) << kernel_source();
  std::vector<std::string> args = {clang, "-O2", "-march=native", "-fPIC", "-w", "-c", src,
                                   "-o",  obj};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<double> seconds;
  for (auto _ : state) {
    auto t0 = Clock::now();
    pid_t pid = 0;
    if (posix_spawn(&pid, clang.c_str(), nullptr, nullptr, argv.data(), environ) != 0) {
      state.SkipWithError("posix_spawn failed");
      break;
    }
    int status = 0;
    waitpid(pid, &status, 0);
    double s = std::chrono::duration<double>(Clock::now() - t0).count();
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      state.SkipWithError("clang-14 failed");
      break;
    }
    seconds.push_back(s);
    state.SetIterationTime(s);
  }
  report_median(state, seconds);
  std::filesystem::remove_all(dir);
}
BENCHMARK(BM_ForkClang14)->UseManualTime()->Iterations(20)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
