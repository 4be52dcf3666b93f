// The template plugin: one host-memory device whose "compiler" serialises the kernel program
// and whose "processor" is an interpreter. Copy this folder to start a new plugin; replace
// serialise.cpp with a real renderer and interpreter.cpp with a real compiler and launcher.
//
// Everything crossing the ABI goes through polygrad/plugin.hpp: the two classes below and
// PG_DEFINE_PLUGIN are the whole plugin; the helper generates the C tables, checks arguments
// and turns exceptions into status codes.
#include <polygrad/plugin.hpp>

#include <chrono>
#include <cstring>
#include <new>

#include "program.hpp"

namespace template_plugin {

using polygrad::sdk::fail;

/// A buffer in host memory, 64-byte aligned.
struct Buffer {
  unsigned char* data = nullptr;
  uint64_t size = 0;
};

constexpr uint32_t kAlignment = 64;

class Device {
 public:
  explicit Device(const polygrad::sdk::Host& host, bool trace) : host_(host), trace_(trace) {}

  void properties(pg_device_properties& p) {
    std::snprintf(p.name, sizeof p.name, "template interpreter");
    std::snprintf(p.target, sizeof p.target, "interpreter");
    p.memory_bytes = 0;  // unknown: host memory
    pg_capabilities& c = p.caps;
    c.flags = PG_CAP_HOST_MEMORY | PG_CAP_ATOMIC_ADD;
    for (pg_dtype dt : {PG_DTYPE_BOOL, PG_DTYPE_INT8, PG_DTYPE_INT16, PG_DTYPE_INT32,
                        PG_DTYPE_INT64, PG_DTYPE_UINT8, PG_DTYPE_UINT16, PG_DTYPE_UINT32,
                        PG_DTYPE_UINT64, PG_DTYPE_FLOAT32, PG_DTYPE_FLOAT64})
      c.dtype_mask |= uint64_t{1} << dt;
    c.vector_width_bytes = 16;
    c.max_vector_lanes = kMaxLanes;
    c.max_threads_per_group = 1;
    for (int d = 0; d < 3; ++d) {
      c.max_local_dims[d] = 1;
      c.max_global_dims[d] = 1u << 30;
    }
    c.compute_units = 1;
    c.tensor_core_count = 1;
    c.tensor_cores[0] = kTensorCore;
    // l1_cache_bytes / l2_cache_bytes stay 0 (unknown): the host plans for 32 KiB and 512 KiB.
  }

  // --- allocator -----------------------------------------------------------------------
  pg_buffer_t alloc(uint64_t nbytes) {
    auto* b = new Buffer;
    if (nbytes > 0) {
      try {
        b->data = static_cast<unsigned char*>(::operator new(nbytes, std::align_val_t(kAlignment)));
      } catch (...) {
        delete b;
        throw;
      }
    }
    b->size = nbytes;
    return reinterpret_cast<pg_buffer_t>(b);
  }
  void free(pg_buffer_t handle) {
    Buffer* b = buffer(handle);
    if (b->data) ::operator delete(b->data, std::align_val_t(kAlignment));
    delete b;
  }
  void copy_in(pg_buffer_t dst, uint64_t off, const void* src, uint64_t n) {
    if (n) std::memcpy(span(dst, off, n, "copy_in"), src, n);
  }
  void copy_out(void* dst, pg_buffer_t src, uint64_t off, uint64_t n) {
    if (n) std::memcpy(dst, span(src, off, n, "copy_out"), n);
  }
  void copy_device(pg_buffer_t dst, uint64_t doff, pg_buffer_t src, uint64_t soff, uint64_t n) {
    if (n) std::memmove(span(dst, doff, n, "copy_device"), span(src, soff, n, "copy_device"), n);
  }
  void* host_pointer(pg_buffer_t b) { return buffer(b)->data; }

  // --- renderer and loader ---------------------------------------------------------------
  std::string render(const pg_kernel_program& program) { return serialise(program); }

  pg_program_t load(const void* artifact, uint64_t size, const char* entry) {
    return reinterpret_cast<pg_program_t>(new Program(deserialise(artifact, size, entry)));
  }
  void unload(pg_program_t p) { delete reinterpret_cast<Program*>(p); }

  void launch(pg_program_t handle, const pg_launch_args& args) {
    const Program& p = *reinterpret_cast<const Program*>(handle);
    if (args.buffer_count < p.buffer_count || args.scalar_count < p.scalar_count)
      fail(PG_ERR_INVALID_ARGUMENT, "template: '" + p.name + "' needs " +
                                        std::to_string(p.buffer_count) + " buffers and " +
                                        std::to_string(p.scalar_count) + " scalars");
    uint64_t threads = uint64_t{args.local_size[0]} * args.local_size[1] * args.local_size[2];
    if (p.has_barrier && threads > 1)
      fail(PG_ERR_UNSUPPORTED, "template: '" + p.name + "' has a BARRIER; groups must be 1 thread");
    std::vector<Memory> memory;
    for (uint32_t k = 0; k < p.buffer_count; ++k) {
      if (args.buffers[k] == nullptr) fail(PG_ERR_INVALID_ARGUMENT, "template: buffer is NULL");
      Buffer* b = buffer(args.buffers[k]);
      memory.push_back({b->data, b->size});
    }
    if (trace_) host_.log(PG_LOG_DEBUG, "template: launching '" + p.name + "'");
    execute(p, memory, args);  // synchronous: synchronize() has nothing to wait for
  }
  void synchronize() {}
  double launch_timed(pg_program_t p, const pg_launch_args& args) {
    auto start = std::chrono::steady_clock::now();
    launch(p, args);
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }

 private:
  static Buffer* buffer(pg_buffer_t b) { return reinterpret_cast<Buffer*>(b); }
  /// The bytes [off, off + n) of buffer `b`; an error naming `what` when out of bounds.
  static unsigned char* span(pg_buffer_t handle, uint64_t off, uint64_t n, const char* what) {
    Buffer* b = buffer(handle);
    if (off > b->size || n > b->size - off)
      fail(PG_ERR_INVALID_ARGUMENT, std::string("template: ") + what + " of " + std::to_string(n) +
                                        " bytes at offset " + std::to_string(off) +
                                        " is outside a buffer of " + std::to_string(b->size) +
                                        " bytes");
    return b->data + off;
  }

  polygrad::sdk::Host host_;
  bool trace_;
};

class Plugin {
 public:
  using Device = template_plugin::Device;
  static constexpr const char* name = "template";
  static constexpr const char* version = "0.1.0";
  static constexpr const char* device_prefix = "template";
  static constexpr pg_artifact_format artifact_format = PG_ARTIFACT_OTHER;
  static constexpr uint32_t alignment = kAlignment;
  static constexpr bool has_copy_device = true, has_host_pointer = true, has_launch_timed = true;
  // Streams and events: the SDK runs the blocking calls above on a thread per stream.
  static constexpr bool has_async = true;

  static std::vector<pg_option_desc> options() {
    return {{"trace", PG_OPTION_BOOL, "false", "log every launch at debug level", 1, 0}};
  }

  explicit Plugin(const polygrad::sdk::Host& host)
      : device_(host, host.option(-1, "trace").value_or("false") == "true") {}

  uint32_t device_count(std::string& /*why_none*/) { return 1; }
  Device& device(uint32_t /*index*/) { return device_; }

 private:
  Device device_;
};

}  // namespace template_plugin

PG_DEFINE_PLUGIN(template_plugin::Plugin)
