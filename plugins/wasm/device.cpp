#include "device.hpp"

#include <chrono>
#include <cstring>

#include "renderer.hpp"

namespace polygrad::wasm {

using sdk::fail;

void fill_capabilities(pg_capabilities& c) {
  // No auto-vectoriser runs after the renderer: the host vectorises what it can, and
  // decomposes exp2/log2/sin so that they run on vectors too.
  c.flags = PG_CAP_DECOMPOSE_TRANSCENDENTAL | PG_CAP_EXPLICIT_SIMD;
  for (pg_dtype dt : {PG_DTYPE_BOOL, PG_DTYPE_INT8, PG_DTYPE_INT16, PG_DTYPE_INT32, PG_DTYPE_INT64,
                      PG_DTYPE_UINT8, PG_DTYPE_UINT16, PG_DTYPE_UINT32, PG_DTYPE_UINT64,
                      PG_DTYPE_FLOAT32, PG_DTYPE_FLOAT64})
    c.dtype_mask |= uint64_t{1} << dt;
  c.vector_width_bytes = 16;  // SIMD128
  c.max_vector_lanes = 16;    // 16 x int8 in 16 bytes
  c.max_threads_per_group = 1;
  for (int d = 0; d < 3; ++d) {
    c.max_local_dims[d] = 1;
    c.max_global_dims[d] = 0x7FFFFFFF;  // SPECIAL is an int32
  }
  c.compute_units = 1;
  c.index_bits = 32;
  c.max_allocation_bytes = kMaxMemoryBytes;
}

Device::Device(const sdk::Host& host, std::unique_ptr<Engine> engine, bool trace)
    : host_(host), engine_(std::move(engine)), allocator_(engine_->memory()), trace_(trace) {
  host_.log(PG_LOG_INFO,
            std::string("wasm: engine ") + engine_->name() + ": " + engine_->describe());
}

void Device::properties(pg_device_properties& p) {
  std::snprintf(p.name, sizeof p.name, "WebAssembly (%s engine)", engine_->name());
  std::snprintf(p.target, sizeof p.target, "wasm32");
  p.memory_bytes = kMaxMemoryBytes;
  fill_capabilities(p.caps);
}

pg_buffer_t Device::alloc(uint64_t nbytes) {
  std::lock_guard lock(mutex_);
  auto b = std::make_unique<Buffer>();
  b->offset = allocator_.allocate(nbytes);
  b->size = nbytes;
  return reinterpret_cast<pg_buffer_t>(b.release());
}

void Device::free(pg_buffer_t handle) {
  std::lock_guard lock(mutex_);
  allocator_.release(buffer(handle).offset);
  delete &buffer(handle);
}

uint8_t* Device::span(pg_buffer_t handle, uint64_t off, uint64_t n, const char* what) {
  const Buffer& b = buffer(handle);
  if (off > b.size || n > b.size - off)
    fail(PG_ERR_INVALID_ARGUMENT,
         std::string("wasm: ") + what + " of " + std::to_string(n) + " bytes at offset " +
             std::to_string(off) + " is outside a buffer of " + std::to_string(b.size) + " bytes");
  return engine_->memory().data() + b.offset + off;
}

void Device::copy_in(pg_buffer_t dst, uint64_t off, const void* src, uint64_t n) {
  std::lock_guard lock(mutex_);
  if (n) std::memcpy(span(dst, off, n, "copy_in"), src, n);
}
void Device::copy_out(void* dst, pg_buffer_t src, uint64_t off, uint64_t n) {
  std::lock_guard lock(mutex_);
  if (n) std::memcpy(dst, span(src, off, n, "copy_out"), n);
}
void Device::copy_device(pg_buffer_t dst, uint64_t doff, pg_buffer_t src, uint64_t soff,
                         uint64_t n) {
  std::lock_guard lock(mutex_);
  if (n) std::memmove(span(dst, doff, n, "copy_device"), span(src, soff, n, "copy_device"), n);
}

std::string Device::render(const pg_kernel_program& program) {
  return render_module(program);
}

pg_program_t Device::load(const void* artifact, uint64_t size, const char* entry) {
  std::lock_guard lock(mutex_);
  auto p = std::make_unique<Program>();
  p->module = engine_->load(artifact, size, entry);
  p->scratch = allocator_.allocate(p->module->scratch_bytes);
  if (trace_) host_.log(PG_LOG_DEBUG, std::string("wasm: loaded '") + entry + "'");
  return reinterpret_cast<pg_program_t>(p.release());
}

void Device::unload(pg_program_t handle) {
  std::lock_guard lock(mutex_);
  auto* p = reinterpret_cast<Program*>(handle);
  allocator_.release(p->scratch);
  delete p;
}

void Device::launch(pg_program_t handle, const pg_launch_args& args) {
  std::lock_guard lock(mutex_);
  const Program& p = *reinterpret_cast<const Program*>(handle);
  const LoadedModule& m = *p.module;
  if (args.buffer_count < m.buffers || args.scalar_count < m.scalars)
    fail(PG_ERR_INVALID_ARGUMENT, "wasm: kernel '" + m.entry + "' needs " +
                                      std::to_string(m.buffers) + " buffers and " +
                                      std::to_string(m.scalars) + " scalars");
  KernelCall call;
  uint64_t threads = 1;
  for (int d = 0; d < 3; ++d) {
    uint64_t n = uint64_t{args.global_size[d]} * args.local_size[d];
    if (n > 0x7FFFFFFF)
      fail(PG_ERR_INVALID_ARGUMENT, "wasm: kernel '" + m.entry + "': " + std::to_string(n) +
                                        " launch indices along dim " + std::to_string(d) +
                                        " exceed int32");
    call.count[d] = static_cast<uint32_t>(n);
    call.local_size[d] = args.local_size[d];
    threads *= args.local_size[d];
  }
  if (m.group_memory && threads > 1)
    fail(PG_ERR_UNSUPPORTED,
         "wasm: kernel '" + m.entry + "' has a BARRIER or DEFINE_LOCAL; groups must be 1 thread");
  for (uint32_t k = 0; k < m.buffers; ++k) {
    if (args.buffers[k] == nullptr) fail(PG_ERR_INVALID_ARGUMENT, "wasm: buffer is NULL");
    call.buffers.push_back(static_cast<uint32_t>(buffer(args.buffers[k]).offset));
  }
  call.scalars.assign(args.scalars, args.scalars + m.scalars);
  call.scratch = static_cast<uint32_t>(p.scratch);
  if (trace_) host_.log(PG_LOG_DEBUG, "wasm: launching '" + m.entry + "'");
  p.module->call(call);
}

double Device::launch_timed(pg_program_t program, const pg_launch_args& args) {
  auto start = std::chrono::steady_clock::now();
  launch(program, args);
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace polygrad::wasm
