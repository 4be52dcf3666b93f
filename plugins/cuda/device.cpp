#include "device.hpp"

#include <polygrad/program_check.hpp>

#include <algorithm>
#include <cstring>

namespace polygrad::cuda {

namespace {

constexpr uint64_t kStageBytes = uint64_t{4} << 20;  // per pinned staging buffer
constexpr uint64_t kSmallRound = 512;                // pool rounding below kLargeFrom
constexpr uint64_t kLargeFrom = uint64_t{1} << 20;
constexpr uint64_t kLargeRound = uint64_t{2} << 20;
constexpr size_t kNamedInFlight = 4;  // kernels a fault report names

uint64_t round_up(uint64_t n, uint64_t to) {
  return (n + to - 1) / to * to;
}

std::string mib(uint64_t bytes) {
  char text[48];
  std::snprintf(text, sizeof(text), "%.1f MiB", static_cast<double>(bytes) / (1 << 20));
  return text;
}

Program* prog(pg_program_t p) {
  return reinterpret_cast<Program*>(p);
}

int attribute(CUdevice d, CUdevice_attribute a) {
  int v = 0;
  driver().cuDeviceGetAttribute(&v, a, d);
  return v;
}

}  // namespace

void check_range(pg_buffer_t buffer, uint64_t offset, uint64_t n, const char* what) {
  const uint64_t size = buffer_of(buffer)->size;
  if (offset > size || n > size - offset)
    sdk::fail(PG_ERR_INVALID_ARGUMENT, std::string(what) + ": bytes [" + std::to_string(offset) +
                                           ", " + std::to_string(offset + n) +
                                           ") outside a buffer of " + std::to_string(size));
}

Device::Device(const sdk::Host& host, int index, const Settings& settings)
    : host_(host),
      name_("cuda:" + std::to_string(index)),
      settings_(settings),
      compiler_(host, settings.cache_dir, driver().version) {
  const Driver& d = driver();
  check(d.cuDeviceGet(&device_, index), "cuDeviceGet");
  char name[128] = {};
  check(d.cuDeviceGetName(name, sizeof(name) - 1, device_), "cuDeviceGetName");
  gpu_name_ = name;
  size_t total = 0;
  check(d.cuDeviceTotalMem_v2(&total, device_), "cuDeviceTotalMem");
  facts_.memory_bytes = total;
  facts_.sm_count = attribute(device_, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
  facts_.l2_bytes = attribute(device_, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE);
  if (settings_.arch.empty()) {
    arch_.major = attribute(device_, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
    arch_.minor = attribute(device_, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
  } else {
    arch_ = parse_arch(settings_.arch);
  }
  check(d.cuDevicePrimaryCtxRetain(&context_, device_), "cuDevicePrimaryCtxRetain");
  make_current();
  check(d.cuStreamCreate(&queue_.stream, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
  for (int s = 0; s < kStages; ++s) {
    check(d.cuMemHostAlloc(&staging_[s], kStageBytes, 0), "cuMemHostAlloc (staging)");
    check(d.cuEventCreate(&staged_[s], CU_EVENT_DISABLE_TIMING), "cuEventCreate");
  }
}

Device::~Device() {
  const Driver& d = driver();
  if (context_ == nullptr) return;
  d.cuCtxSetCurrent(context_);
  if (queue_.stream != nullptr) d.cuStreamSynchronize(queue_.stream);
  pool_release_all();
  for (int s = 0; s < kStages; ++s) {
    if (staging_[s] != nullptr) d.cuMemFreeHost(staging_[s]);
    if (staged_[s] != nullptr) d.cuEventDestroy_v2(staged_[s]);
  }
  if (queue_.stream != nullptr) d.cuStreamDestroy_v2(queue_.stream);
  d.cuDevicePrimaryCtxRelease_v2(device_);
}

void Device::make_current() const {
  check(driver().cuCtxSetCurrent(context_), "cuCtxSetCurrent");
}

void Device::check(CUresult r, const std::string& what) const {
  cuda::check(r, name_ + ": " + what);
}

void Device::properties(pg_device_properties& p) {
  std::snprintf(p.name, sizeof(p.name), "%s", gpu_name_.c_str());
  std::snprintf(p.target, sizeof(p.target), "%s", arch_.name().c_str());
  p.memory_bytes = facts_.memory_bytes;
  fill_capabilities(p.caps, arch_, facts_);
  p.caps.flags |= PG_CAP_ASYNC;  // async.cpp
}

// --- memory ------------------------------------------------------------------------------------

CUdeviceptr Device::pool_take(uint64_t capacity) {
  auto it = pool_.find(capacity);
  if (it == pool_.end()) return 0;
  const CUdeviceptr p = it->second;
  pool_.erase(it);
  pooled_bytes_ -= capacity;
  return p;
}

void Device::pool_release_all() {
  for (const auto& [capacity, p] : pool_) driver().cuMemFree_v2(p);
  pool_.clear();
  pooled_bytes_ = 0;
}

pg_buffer_t Device::alloc(uint64_t nbytes) {
  const uint64_t capacity = nbytes < kLargeFrom
                                ? round_up(std::max<uint64_t>(nbytes, 1), kSmallRound)
                                : round_up(nbytes, kLargeRound);
  std::lock_guard lock(mutex_);
  make_current();
  CUdeviceptr p = pool_take(capacity);
  if (p == 0) {
    CUresult r = driver().cuMemAlloc_v2(&p, capacity);
    if (r == CUDA_ERROR_OUT_OF_MEMORY && !pool_.empty()) {
      pool_release_all();  // idle memory of other sizes goes back, then once more
      r = driver().cuMemAlloc_v2(&p, capacity);
    }
    if (r == CUDA_ERROR_OUT_OF_MEMORY) {
      size_t free_bytes = 0, total = 0;
      driver().cuMemGetInfo_v2(&free_bytes, &total);
      sdk::fail(PG_ERR_OUT_OF_MEMORY, name_ + ": out of memory allocating " +
                                          std::to_string(nbytes) + " bytes (" + mib(nbytes) +
                                          "); " + mib(free_bytes) + " free of " + mib(total));
    }
    check(r, "cuMemAlloc of " + std::to_string(nbytes) + " bytes");
  }
  return reinterpret_cast<pg_buffer_t>(new Buffer{p, nbytes, capacity});
}

void Device::free(pg_buffer_t buffer) {
  std::unique_ptr<Buffer> b(buffer_of(buffer));
  std::lock_guard lock(mutex_);
  make_current();
  // The stream orders the memory's next user after every kernel already enqueued on it.
  if (settings_.pool_limit == 0 || pooled_bytes_ + b->capacity <= settings_.pool_limit) {
    pool_.emplace(b->capacity, b->ptr);
    pooled_bytes_ += b->capacity;
  } else {
    driver().cuMemFree_v2(b->ptr);
  }
}

// Host memory goes through two pinned buffers in turn: while the GPU copies one, the host
// fills (or drains) the other.
void Device::copy_in(pg_buffer_t dst, uint64_t offset, const void* src, uint64_t n) {
  const Buffer& b = *buffer_of(dst);
  check_range(dst, offset, n, "copy_in");
  std::lock_guard lock(mutex_);
  make_current();
  const Driver& d = driver();
  const char* from = static_cast<const char*>(src);
  int s = 0;
  for (uint64_t done = 0; done < n; done += kStageBytes, s ^= 1) {
    const uint64_t c = std::min(kStageBytes, n - done);
    check(d.cuEventSynchronize(staged_[s]), "copy_in");
    std::memcpy(staging_[s], from + done, c);
    check(d.cuMemcpyHtoDAsync_v2(b.ptr + offset + done, staging_[s], c, queue_.stream), "copy_in");
    check(d.cuEventRecord(staged_[s], queue_.stream), "copy_in");
  }
  wait(queue_, "copy_in");
}

void Device::copy_out(void* dst, pg_buffer_t src, uint64_t offset, uint64_t n) {
  const Buffer& b = *buffer_of(src);
  check_range(src, offset, n, "copy_out");
  std::lock_guard lock(mutex_);
  make_current();
  const Driver& d = driver();
  char* to = static_cast<char*>(dst);
  auto issue = [&](uint64_t done, int s) {
    const uint64_t c = std::min(kStageBytes, n - done);
    check(d.cuMemcpyDtoHAsync_v2(staging_[s], b.ptr + offset + done, c, queue_.stream), "copy_out");
    check(d.cuEventRecord(staged_[s], queue_.stream), "copy_out");
  };
  if (n > 0) issue(0, 0);
  int s = 0;
  for (uint64_t done = 0; done < n; done += kStageBytes, s ^= 1) {
    if (done + kStageBytes < n) issue(done + kStageBytes, s ^ 1);
    // A fault of an earlier kernel surfaces here first: report it with the kernels' names.
    if (CUresult r = d.cuEventSynchronize(staged_[s]); r != CUDA_SUCCESS) wait(queue_, "copy_out");
    std::memcpy(to + done, staging_[s], std::min(kStageBytes, n - done));
  }
  wait(queue_, "copy_out");
}

void Device::copy_device(pg_buffer_t dst, uint64_t dst_offset, pg_buffer_t src, uint64_t src_offset,
                         uint64_t n) {
  check_range(dst, dst_offset, n, "copy_device");
  check_range(src, src_offset, n, "copy_device");
  std::lock_guard lock(mutex_);
  make_current();
  check(driver().cuMemcpyDtoDAsync_v2(buffer_of(dst)->ptr + dst_offset,
                                      buffer_of(src)->ptr + src_offset, n, queue_.stream),
        "copy_device");
}

// --- programs ----------------------------------------------------------------------------------

pg_program_t Device::load_binary(const Binary& binary, const std::string& entry, uint32_t buffers,
                                 uint32_t scalars) {
  std::lock_guard lock(mutex_);
  make_current();
  const Driver& d = driver();
  auto p = std::make_unique<Program>();
  p->entry = entry;
  p->buffers = buffers;
  p->scalars = scalars;
  CUresult r = d.cuModuleLoadDataEx(&p->module, binary.cubin.data(), 0, nullptr, nullptr);
  if ((r == CUDA_ERROR_NO_BINARY_FOR_GPU || r == CUDA_ERROR_INVALID_IMAGE) && !binary.ptx.empty())
    r = d.cuModuleLoadDataEx(&p->module, binary.ptx.c_str(), 0, nullptr, nullptr);
  if (r != CUDA_SUCCESS)
    sdk::fail(PG_ERR_COMPILE, name_ + ": cannot load kernel '" + entry + "' compiled for " +
                                  arch_.name() + ": " + d.describe(r));
  r = d.cuModuleGetFunction(&p->function, p->module, entry.c_str());
  if (r != CUDA_SUCCESS) {
    d.cuModuleUnload(p->module);
    sdk::fail(PG_ERR_COMPILE,
              name_ + ": the module has no kernel '" + entry + "': " + d.describe(r));
  }
  return reinterpret_cast<pg_program_t>(p.release());
}

pg_program_t Device::load(const void* artifact, uint64_t size, const char* entry) {
  const std::string source(static_cast<const char*>(artifact), size);
  return load_binary(compiler_.compile(source, entry, arch_), entry, ~0u, ~0u);
}

pg_program_t Device::load(const void* artifact, uint64_t size, const pg_program_info& info) {
  // The slots the kernel reads: a launch passes at least these (the kernel's signature has a
  // parameter for every slot up to the program's count, used or not).
  uint32_t buffers = 0, scalars = 0;
  for (uint32_t i = 0; i < info.param_count; ++i) {
    uint32_t& n = info.params[i].kind == PG_PARAM_BUFFER ? buffers : scalars;
    n = std::max(n, info.params[i].slot + 1);
  }
  const std::string bytes(static_cast<const char*>(artifact), size);
  if (info.artifact_format == PG_ARTIFACT_OBJECT)
    return load_binary(Binary{bytes, ""}, info.entry, buffers, scalars);
  if (info.artifact_format != PG_ARTIFACT_CUDA_SOURCE)
    sdk::fail(PG_ERR_UNSUPPORTED, name_ +
                                      ": load takes CUDA source or a cubin, not artifact format " +
                                      std::to_string(info.artifact_format));
  return load_binary(compiler_.compile(bytes, info.entry, arch_), info.entry, buffers, scalars);
}

void Device::unload(pg_program_t program) {
  std::unique_ptr<Program> p(prog(program));
  std::lock_guard lock(mutex_);
  make_current();
  driver().cuModuleUnload(p->module);  // waits for the module's kernels in flight
}

void Device::enqueue(Queue& q, Program& p, const pg_launch_args& a) {
  sdk::check_launch(&a);
  if ((p.buffers != ~0u && a.buffer_count < p.buffers) ||
      (p.scalars != ~0u && a.scalar_count < p.scalars))
    sdk::fail(PG_ERR_INVALID_ARGUMENT,
              name_ + ": launch of '" + p.entry + "' with " + std::to_string(a.buffer_count) +
                  " buffers and " + std::to_string(a.scalar_count) + " scalars; it takes " +
                  std::to_string(p.buffers) + " and " + std::to_string(p.scalars) + " at least");
  std::vector<CUdeviceptr> pointers(a.buffer_count);
  std::vector<void*> params;
  params.reserve(a.buffer_count + a.scalar_count);
  for (uint32_t i = 0; i < a.buffer_count; ++i) {
    pointers[i] = a.buffers[i] != nullptr ? buffer_of(a.buffers[i])->ptr : 0;
    params.push_back(&pointers[i]);
  }
  for (uint32_t i = 0; i < a.scalar_count; ++i)
    params.push_back(const_cast<int64_t*>(&a.scalars[i]));
  const uint32_t* g = a.global_size;
  const uint32_t* l = a.local_size;
  if (uint64_t{g[0]} * g[1] * g[2] == 0) return;  // nothing to run
  check(driver().cuLaunchKernel(p.function, g[0], g[1], g[2], l[0], l[1], l[2],
                                a.shared_memory_bytes, q.stream, params.data(), nullptr),
        "launch of '" + p.entry + "'");
  std::lock_guard lock(q.mutex);
  q.in_flight.push_back(p.entry);
  if (q.in_flight.size() > kNamedInFlight) q.in_flight.pop_front();
}

void Device::launch(pg_program_t program, const pg_launch_args& args) {
  std::lock_guard lock(mutex_);
  make_current();
  enqueue(queue_, *prog(program), args);
  if (settings_.debug_sync) wait(queue_, "launch of '" + prog(program)->entry + "' (debug_sync)");
}

void Device::wait(Queue& q, const std::string& what) {
  const CUresult r = driver().cuStreamSynchronize(q.stream);
  std::lock_guard lock(q.mutex);
  if (r == CUDA_SUCCESS) {
    q.in_flight.clear();
    return;
  }
  std::string kernels;
  for (const std::string& k : q.in_flight) kernels += (kernels.empty() ? "'" : ", '") + k + "'";
  q.in_flight.clear();
  const std::string culprit = kernels.empty() ? std::string("")
                              : settings_.debug_sync
                                  ? " in kernel " + kernels
                                  : " in one of the kernels launched since the last synchronize (" +
                                        kernels +
                                        ", newest last; option debug_sync: true names the one)";
  sdk::fail(PG_ERR_LAUNCH, name_ + ": " + what + ": the GPU reported a fault" + culprit + ": " +
                               driver().describe(r));
}

void Device::synchronize() {
  std::lock_guard lock(mutex_);
  make_current();
  wait(queue_, "synchronize");
}

double Device::launch_timed(pg_program_t program, const pg_launch_args& args) {
  std::lock_guard lock(mutex_);
  make_current();
  const Driver& d = driver();
  CUevent start = nullptr, stop = nullptr;
  check(d.cuEventCreate(&start, CU_EVENT_DEFAULT), "cuEventCreate");
  check(d.cuEventCreate(&stop, CU_EVENT_DEFAULT), "cuEventCreate");
  float ms = 0;
  try {
    check(d.cuEventRecord(start, queue_.stream), "launch_timed");
    enqueue(queue_, *prog(program), args);
    check(d.cuEventRecord(stop, queue_.stream), "launch_timed");
    wait(queue_, "launch_timed of '" + prog(program)->entry + "'");
    check(d.cuEventElapsedTime(&ms, start, stop), "cuEventElapsedTime");
  } catch (...) {
    d.cuEventDestroy_v2(start);
    d.cuEventDestroy_v2(stop);
    throw;
  }
  d.cuEventDestroy_v2(start);
  d.cuEventDestroy_v2(stop);
  return ms / 1e3;
}

}  // namespace polygrad::cuda
