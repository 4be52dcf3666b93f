// One GPU as the SDK helper sees it: properties, a caching memory pool, copies staged through
// pinned buffers, the renderer, the compiler (NVRTC + nvJitLink with the disk cache), modules,
// and launches on the device's stream. Every call makes the device's primary context current
// on the calling thread first.
#ifndef POLYGRAD_CUDA_DEVICE_HPP
#define POLYGRAD_CUDA_DEVICE_HPP

#include <polygrad/plugin.hpp>

#include <deque>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "cuda_plugin.hpp"
#include "driver.hpp"

namespace polygrad::cuda {

/// Buffer alignment: cuMemAlloc's.
constexpr uint32_t kAlignment = 256;

/// What the plugin's options set for a device.
struct Settings {
  std::string arch;         ///< "" = the device's own sm_XY
  std::string cache_dir;    ///< "" = no disk cache
  bool debug_sync = false;  ///< synchronise after every launch
  uint64_t pool_limit = 0;  ///< most bytes the pool keeps for reuse; 0 = no limit
};

/// Device memory as handed out: the allocation may be larger than asked (pool rounding).
struct Buffer {
  CUdeviceptr ptr = 0;
  uint64_t size = 0;
  uint64_t capacity = 0;
};

/// The Buffer behind a handle from Device::alloc.
inline Buffer* buffer_of(pg_buffer_t b) {
  return reinterpret_cast<Buffer*>(b);
}

/// Throws PG_ERR_INVALID_ARGUMENT naming `what` unless [offset, offset + n) is inside `b`.
void check_range(pg_buffer_t b, uint64_t offset, uint64_t n, const char* what);

/// A loaded kernel.
struct Program {
  CUmodule module = nullptr;
  CUfunction function = nullptr;
  std::string entry;
  uint32_t buffers = 0, scalars = 0;  ///< slots it reads; a launch passes at least these
};

/// A CUDA stream and the names of the kernels launched on it since it was last waited for
/// (a fault surfaces at the next wait and is reported with them).
struct Queue {
  CUstream stream = nullptr;
  std::mutex mutex;                   ///< guards in_flight
  std::deque<std::string> in_flight;  ///< newest last, at most a few
};

/// The plugin's pg_async_api (async.cpp) over Device's stream methods.
const pg_async_api* async_table();

class Device {
 public:
  Device(const sdk::Host& host, int index, const Settings& settings);
  ~Device();
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;

  void properties(pg_device_properties& p);

  pg_buffer_t alloc(uint64_t nbytes);
  void free(pg_buffer_t buffer);
  void copy_in(pg_buffer_t dst, uint64_t offset, const void* src, uint64_t n);
  void copy_out(void* dst, pg_buffer_t src, uint64_t offset, uint64_t n);
  void copy_device(pg_buffer_t dst, uint64_t dst_offset, pg_buffer_t src, uint64_t src_offset,
                   uint64_t n);
  /// The buffer's CUdeviceptr (pg_allocator_api.device_address).
  uint64_t device_address(pg_buffer_t b) const { return buffer_of(b)->ptr; }

  std::string render(const pg_kernel_program& program) { return render_cuda(program); }
  /// CUDA source (compiled here, through the cache) or a cubin from the compiler role.
  pg_program_t load(const void* artifact, uint64_t size, const char* entry);
  pg_program_t load(const void* artifact, uint64_t size, const pg_program_info& info);
  void unload(pg_program_t program);
  void launch(pg_program_t program, const pg_launch_args& args);
  void synchronize();
  double launch_timed(pg_program_t program, const pg_launch_args& args);

  // Asynchronous work (pg_async_api, async.cpp): streams of the caller's, ordered with none
  // of the blocking calls above, which use the device's own stream.
  Queue* stream_create();
  void stream_destroy(Queue* q);
  void stream_synchronize(Queue& q) { wait(q, "stream_synchronize"); }
  void copy_in_async(Queue& q, pg_buffer_t dst, uint64_t offset, const void* src, uint64_t n);
  void copy_out_async(Queue& q, void* dst, pg_buffer_t src, uint64_t offset, uint64_t n);
  void copy_peer_async(Queue& q, pg_buffer_t dst, uint64_t dst_offset, Device& src_device,
                       pg_buffer_t src, uint64_t src_offset, uint64_t n);
  void launch_async(Queue& q, pg_program_t program, const pg_launch_args& args);
  CUevent event_create();
  void event_destroy(CUevent e);
  void event_record(CUevent e, Queue& q);
  void stream_wait_event(Queue& q, CUevent e);
  void event_synchronize(CUevent e);
  void* host_alloc_pinned(uint64_t nbytes);
  void host_free_pinned(void* host);

 private:
  void make_current() const;
  /// Throws with the device's name unless r is CUDA_SUCCESS.
  void check(CUresult r, const std::string& what) const;
  pg_program_t load_binary(const Binary& binary, const std::string& entry, uint32_t buffers,
                           uint32_t scalars);
  void enqueue(Queue& q, Program& program, const pg_launch_args& args);
  /// Waits for the queue's stream; a fault of enqueued work is reported with the kernels'
  /// names.
  void wait(Queue& q, const std::string& what);
  CUdeviceptr pool_take(uint64_t capacity);
  void pool_release_all();

  sdk::Host host_;
  std::string name_;  ///< "cuda:0"
  Settings settings_;
  CUdevice device_ = 0;
  CUcontext context_ = nullptr;
  Queue queue_;  ///< the stream of the blocking calls
  Arch arch_;
  DeviceFacts facts_;
  std::string gpu_name_;
  Compiler compiler_;

  std::mutex mutex_;                           ///< guards everything below and the stream's order
  std::multimap<uint64_t, CUdeviceptr> pool_;  ///< capacity -> idle allocation
  uint64_t pooled_bytes_ = 0;
  static constexpr int kStages = 2;
  void* staging_[kStages] = {};
  CUevent staged_[kStages] = {};
};

}  // namespace polygrad::cuda

#endif  // POLYGRAD_CUDA_DEVICE_HPP
