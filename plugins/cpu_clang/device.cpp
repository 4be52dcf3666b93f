// The cpu device: buffers in host memory, programs compiled in-process, launches spread over a
// TBB arena along global dim 0.
#include "device.hpp"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>

namespace polygrad::cpu_clang {

namespace {

/// A loaded program as handed to the host.
struct Program {
  KernelFn fn = nullptr;
  void* jit_handle = nullptr;
  std::string entry;
  std::optional<std::pair<uint32_t, uint32_t>> counts;  ///< buffers, scalars
  /// What one step of global dim 0 costs on one thread, in ns, as the last launch run on one
  /// thread measured it; negative before one has.
  std::atomic<double> step_ns{-1.0};
  /// Launches spread over the threads, and a bound on a step's time from a fast one of them
  /// (its time over the steps of its busiest thread): a launch that bound says is cheap runs on
  /// one thread to measure `step_ns` (again). Negative when none is pending.
  std::atomic<uint32_t> spread_runs{0};
  std::atomic<double> measure_bound{-1.0};
};

/// What spreading a launch over the arena costs beyond its steps' own time when the workers
/// are awake: splitting the range and joining. On the Sapphire Rapids host, 2 threads, an LSTM
/// cell's (16, 64) elementwise kernel took 1-3 us on one thread and 2-5 us spread over two.
constexpr double kSpreadNs = 5000;
/// A spread launch faster than this may lose to the calling thread alone (a sleeping worker
/// takes tens of us to wake in a VM: a (2 x 12 steps) weight-gradient slice took 25 us spread
/// and 5 us on one thread), so a later launch no slower than this on one thread measures a
/// step there; again after every 64th such launch.
constexpr double kMeasureBelowNs = 100000;
constexpr uint32_t kMeasureEvery = 64;

using Clock = std::chrono::steady_clock;

double ns_since(Clock::time_point start) {
  return std::chrono::duration<double, std::nano>(Clock::now() - start).count();
}

std::string ms_since(Clock::time_point start) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.3f ms", ns_since(start) * 1e-6);
  return text;
}

Buffer& buffer_of(pg_buffer_t b) {
  if (b == nullptr) sdk::fail(PG_ERR_INVALID_ARGUMENT, "cpu: NULL buffer");
  return *reinterpret_cast<Buffer*>(b);
}

std::optional<long> parse_int(const std::optional<std::string>& text) {
  if (!text) return std::nullopt;
  char* end = nullptr;
  long v = std::strtol(text->c_str(), &end, 10);
  if (end == text->c_str() || *end != '\0') return std::nullopt;
  return v;
}

}  // namespace

DeviceSettings DeviceSettings::from_host(const sdk::Host& host, int32_t device_index) {
  auto option = [&](const char* key) {
    auto v = host.option(device_index, key);
    return v ? v : host.option(-1, key);
  };
  auto checked_int = [&](const char* key, long lo, long hi, int fallback) {
    auto text = option(key);
    auto v = parse_int(text);
    if (text && (!v || *v < lo || *v > hi)) {
      host.log(PG_LOG_WARNING, "cpu_clang: option '" + std::string(key) + "' = '" + *text +
                                   "' is not an integer in " + std::to_string(lo) + ".." +
                                   std::to_string(hi) + "; using " + std::to_string(fallback));
      return fallback;
    }
    return v ? static_cast<int>(*v) : fallback;
  };
  DeviceSettings s;
  const int hardware = static_cast<int>(host_cpu().hardware_threads);
  s.threads = checked_int("threads", 1, 1024, hardware);
  if (s.threads > hardware) {
    // More workers than hardware threads only oversubscribes (and TBB refuses them anyway).
    host.log(PG_LOG_INFO, "cpu_clang: threads = " + std::to_string(s.threads) + " capped at the " +
                              std::to_string(hardware) + " hardware threads");
    s.threads = hardware;
  }
  s.opt_level = checked_int("opt_level", 0, 3, 2);
  auto cache = option("cache");
  s.cache = !cache || !(*cache == "false" || *cache == "0" || *cache == "off" || *cache == "no");
  auto dir = option("cache_dir");
  s.cache_dir = dir && !dir->empty() ? *dir : default_cache_dir();
  return s;
}

CpuDevice::CpuDevice(const sdk::Host& host, int32_t index)
    : host_(host), settings_(DeviceSettings::from_host(host, index)), arena_(settings_.threads) {
  if (settings_.cache) cache_ = make_object_cache(settings_.cache_dir, host_);
  // The workers start now, in the background, rather than inside the first spread launch
  // (which then took 1.6-2.1 ms longer: a 512² panel copy's 0.1 ms became 2 ms).
  if (settings_.threads > 1) arena_.enqueue([] {});
  jit_.create_in_background();
}

CpuDevice::~CpuDevice() = default;

void fill_capabilities(pg_capabilities& c, uint32_t threads) {
  const HostCpu& cpu = host_cpu();
  c.flags = PG_CAP_HOST_MEMORY | PG_CAP_ATOMIC_ADD;
  c.dtype_mask = c_dtype_mask();
  c.vector_width_bytes = cpu.vector_width_bytes;
  c.max_vector_lanes = 16;
  c.max_threads_per_group = 1;
  for (int d = 0; d < 3; ++d) {
    c.max_local_dims[d] = 1;
    c.max_global_dims[d] = 0x7fffffffu;  // SPECIAL indices are int32
  }
  c.compute_units = threads;
  c.local_memory_bytes = 0;
  c.l1_cache_bytes = cpu.l1d_bytes;
  c.l2_cache_bytes = cpu.l2_bytes;
  c.subgroup_size = 1;
  c.index_bits = 64;
  c.max_allocation_bytes = cpu.memory_bytes;
}

void CpuDevice::properties(pg_device_properties& p) {
  const HostCpu& cpu = host_cpu();
  std::snprintf(p.name, sizeof(p.name), "%s", cpu.model_name.c_str());
  std::snprintf(p.target, sizeof(p.target), "%s", cpu.target().c_str());
  p.memory_bytes = cpu.memory_bytes;
  fill_capabilities(p.caps, static_cast<uint32_t>(settings_.threads));
}

pg_buffer_t CpuDevice::alloc(uint64_t nbytes) {
  return reinterpret_cast<pg_buffer_t>(buffer_alloc(nbytes));
}

void CpuDevice::free(pg_buffer_t buffer) {
  buffer_free(reinterpret_cast<Buffer*>(buffer));
}

void CpuDevice::copy_in(pg_buffer_t dst, uint64_t offset, const void* src, uint64_t n) {
  Buffer& b = buffer_of(dst);
  check_range(b, offset, n, "copy_in");
  if (n) std::memcpy(static_cast<char*>(b.data) + offset, src, n);
}

void CpuDevice::copy_out(void* dst, pg_buffer_t src, uint64_t offset, uint64_t n) {
  Buffer& b = buffer_of(src);
  check_range(b, offset, n, "copy_out");
  if (n) std::memcpy(dst, static_cast<const char*>(b.data) + offset, n);
}

void CpuDevice::copy_device(pg_buffer_t dst, uint64_t dst_offset, pg_buffer_t src,
                            uint64_t src_offset, uint64_t n) {
  Buffer& d = buffer_of(dst);
  Buffer& s = buffer_of(src);
  check_range(d, dst_offset, n, "copy_device destination");
  check_range(s, src_offset, n, "copy_device source");
  if (n)
    std::memmove(static_cast<char*>(d.data) + dst_offset,
                 static_cast<const char*>(s.data) + src_offset, n);
}

void* CpuDevice::host_pointer(pg_buffer_t buffer) {
  return buffer_of(buffer).data;
}

pg_buffer_t CpuDevice::wrap_host(void* host, uint64_t nbytes) {
  return reinterpret_cast<pg_buffer_t>(buffer_wrap(host, nbytes));
}

std::string CpuDevice::render(const pg_kernel_program& program) {
  return render_c(program);
}

std::vector<char> CpuDevice::object_for(const std::string& source, const std::string& entry) {
  CompileOptions options;
  options.opt_level = settings_.opt_level;
  options.cpu = &host_cpu();
  // Each step's time goes to the debug log (POLYGRAD_LOG=debug; bench/first_call.py reads it).
  const std::string kernel = "cpu_clang: kernel '" + entry + "': ";
  auto start = Clock::now();
  if (!cache_ || !cache_->usable()) {
    std::vector<char> object = compile_c(source, entry, options);
    host_.log(PG_LOG_DEBUG, kernel + "compiled in " + ms_since(start) + " (no cache)");
    return object;
  }
  const sdk::DiskCache::Key key = cache_key(source, entry, options);
  if (auto hit = cache_->read(key)) {
    host_.log(PG_LOG_DEBUG, kernel + "cache hit in " + ms_since(start));
    return std::move(*hit);
  }
  host_.log(PG_LOG_DEBUG, kernel + "cache miss in " + ms_since(start));
  start = Clock::now();
  std::vector<char> object = compile_c(source, entry, options);
  host_.log(PG_LOG_DEBUG, kernel + "compiled in " + ms_since(start));
  start = Clock::now();
  cache_->write(key, object);
  host_.log(PG_LOG_DEBUG, kernel + "cache write in " + ms_since(start));
  return object;
}

pg_program_t CpuDevice::load(const void* artifact, uint64_t size, const char* entry) {
  const std::string source(static_cast<const char*>(artifact), size);
  return link(object_for(source, entry), entry, std::nullopt);
}

pg_program_t CpuDevice::link(const std::vector<char>& object, const std::string& entry,
                             std::optional<std::pair<uint32_t, uint32_t>> counts) {
  auto program = std::make_unique<Program>();
  program->entry = entry;
  program->counts = counts;
  const auto start = Clock::now();
  program->fn = jit_.load(object, program->entry, &program->jit_handle);
  host_.log(PG_LOG_DEBUG, "cpu_clang: kernel '" + entry + "': linked in " + ms_since(start));
  return reinterpret_cast<pg_program_t>(program.release());
}

pg_program_t CpuDevice::load(const void* artifact, uint64_t size, const pg_program_info& info) {
  for (int d = 0; d < 3; ++d)
    if (info.required_local_size[d] > 1)
      sdk::fail(PG_ERR_UNSUPPORTED, "cpu: kernel '" + std::string(info.entry) +
                                        "' requires local_size[" + std::to_string(d) +
                                        "] = " + std::to_string(info.required_local_size[d]) +
                                        "; the cpu has no work groups (max local size 1)");
  std::vector<char> object;
  if (info.artifact_format == PG_ARTIFACT_OBJECT) {
    const auto* bytes = static_cast<const char*>(artifact);
    object.assign(bytes, bytes + size);
  } else if (info.artifact_format == PG_ARTIFACT_C_SOURCE) {
    object = object_for(std::string(static_cast<const char*>(artifact), size), info.entry);
  } else {
    sdk::fail(PG_ERR_UNSUPPORTED,
              "cpu: kernel '" + std::string(info.entry) + "': cannot load artifact format " +
                  std::to_string(info.artifact_format) + " (C source or native object code only)");
  }
  uint32_t buffers = 0, scalars = 0;
  sdk::count_params(info, buffers, scalars);
  return link(object, info.entry, std::make_pair(buffers, scalars));
}

void CpuDevice::unload(pg_program_t handle) {
  auto* program = reinterpret_cast<Program*>(handle);
  jit_.unload(program->jit_handle);
  delete program;
}

void CpuDevice::launch(pg_program_t handle, const pg_launch_args& args) {
  auto& program = *reinterpret_cast<Program*>(handle);
  if (program.counts &&
      (args.buffer_count < program.counts->first || args.scalar_count < program.counts->second))
    sdk::fail(PG_ERR_INVALID_ARGUMENT,
              "cpu: kernel '" + program.entry + "' takes " + std::to_string(program.counts->first) +
                  " buffers and " + std::to_string(program.counts->second) +
                  " scalars, launch gave " + std::to_string(args.buffer_count) + " and " +
                  std::to_string(args.scalar_count));
  for (int d = 0; d < 3; ++d)
    if (args.local_size[d] > 1)
      sdk::fail(PG_ERR_UNSUPPORTED, "cpu: kernel '" + program.entry +
                                        "' launched with local_size[" + std::to_string(d) +
                                        "] = " + std::to_string(args.local_size[d]) +
                                        "; the cpu has no work groups (max local size 1)");
  for (int d = 0; d < 3; ++d)
    if (args.global_size[d] == 0) return;
  std::vector<void*> buffers(args.buffer_count);
  for (uint32_t b = 0; b < args.buffer_count; ++b) buffers[b] = buffer_of(args.buffers[b]).data;
  const uint32_t dims[3] = {args.global_size[0], args.global_size[1], args.global_size[2]};
  const int64_t rows = dims[0];
  KernelFn fn = program.fn;
  void* const* bufs = buffers.data();
  const int64_t* scalars = args.scalars;
  if (settings_.threads == 1 || rows == 1) {
    fn(bufs, scalars, 0, rows, dims);
    return;
  }
  // Run on the calling thread when that is expected to finish first: `rows` steps against the
  // spread's cost plus the steps of the busiest thread, a step as a run on one thread measured it.
  const int64_t per_thread = (rows + settings_.threads - 1) / settings_.threads;
  const double step = program.step_ns.load(std::memory_order_relaxed);
  bool alone = step >= 0 && static_cast<double>(rows) * step <=
                                kSpreadNs + static_cast<double>(per_thread) * step;
  const double bound = program.measure_bound.load(std::memory_order_relaxed);
  if (!alone && bound >= 0 && static_cast<double>(rows) * bound <= kMeasureBelowNs) {
    alone = true;
    program.measure_bound.store(-1.0, std::memory_order_relaxed);
  }
  const auto start = Clock::now();
  if (alone) {
    fn(bufs, scalars, 0, rows, dims);
    program.step_ns.store(ns_since(start) / static_cast<double>(rows), std::memory_order_relaxed);
    return;
  }
  arena_.execute([&] {
    tbb::parallel_for(
        tbb::blocked_range<int64_t>(0, rows),
        [&](const tbb::blocked_range<int64_t>& r) { fn(bufs, scalars, r.begin(), r.end(), dims); });
  });
  const double wall = ns_since(start);
  if (wall < kMeasureBelowNs &&
      program.spread_runs.fetch_add(1, std::memory_order_relaxed) % kMeasureEvery == 0)
    program.measure_bound.store(wall / static_cast<double>(per_thread), std::memory_order_relaxed);
}

double CpuDevice::launch_timed(pg_program_t program, const pg_launch_args& args) {
  const auto start = Clock::now();
  launch(program, args);
  return ns_since(start) * 1e-9;
}

}  // namespace polygrad::cpu_clang
