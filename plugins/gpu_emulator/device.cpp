#include "device.hpp"

#include <polygrad/program_serial.hpp>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <new>

#include "target.hpp"

namespace polygrad::gpu_emu {

using sdk::fail;

namespace {

/// The artifact's first 8 bytes; the digits change when its layout does.
constexpr const char* kMagic = "PGEMU001";

/// Device memory: host memory the host never sees (no host_pointer), 256-byte aligned.
struct Buffer {
  unsigned char* data = nullptr;
  uint64_t size = 0;
};

Buffer* buffer(pg_buffer_t b) {
  return reinterpret_cast<Buffer*>(b);
}

/// The bytes [offset, offset + n) of buffer `b`; an error naming `what` when out of bounds.
unsigned char* span(pg_buffer_t handle, uint64_t offset, uint64_t n, const char* what) {
  const Buffer* b = buffer(handle);
  if (offset > b->size || n > b->size - offset)
    fail(PG_ERR_INVALID_ARGUMENT, std::string("gpu_emu: ") + what + " of " + std::to_string(n) +
                                      " bytes at offset " + std::to_string(offset) +
                                      " is outside a buffer of " + std::to_string(b->size) +
                                      " bytes");
  return b->data + offset;
}

}  // namespace

std::string render_program(const pg_kernel_program& program) {
  decode(program);  // refuse here what the loader would refuse later
  return sdk::serialise_program(program, kMagic);
}

void Device::properties(pg_device_properties& p) {
  std::snprintf(p.name, sizeof p.name, "GPU-semantics emulator (%u host threads)",
                processor_.workers());
  std::snprintf(p.target, sizeof p.target, "%s", kArch);
  p.memory_bytes = 0;  // host memory: as much as the machine has
  fill_capabilities(p.caps, processor_.workers());
}

pg_buffer_t Device::alloc(uint64_t nbytes) {
  if (nbytes > kMaxAllocationBytes)
    fail(PG_ERR_OUT_OF_MEMORY, "gpu_emu: an allocation of " + std::to_string(nbytes) +
                                   " bytes exceeds the device's largest, " +
                                   std::to_string(kMaxAllocationBytes));
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

void Device::free(pg_buffer_t handle) {
  Buffer* b = buffer(handle);
  if (b->data) ::operator delete(b->data, std::align_val_t(kAlignment));
  delete b;
}

void Device::copy_in(pg_buffer_t dst, uint64_t offset, const void* src, uint64_t n) {
  unsigned char* to = span(dst, offset, n, "copy_in");
  if (n) std::memcpy(to, src, n);
}

void Device::copy_out(void* dst, pg_buffer_t src, uint64_t offset, uint64_t n) {
  const unsigned char* from = span(src, offset, n, "copy_out");
  if (n) std::memcpy(dst, from, n);
}

void Device::copy_device(pg_buffer_t dst, uint64_t dst_offset, pg_buffer_t src, uint64_t src_offset,
                         uint64_t n) {
  unsigned char* to = span(dst, dst_offset, n, "copy_device");
  const unsigned char* from = span(src, src_offset, n, "copy_device");
  if (n) std::memmove(to, from, n);
}

pg_program_t Device::load(const void* artifact, uint64_t size, const char* entry) {
  const sdk::ProgramCopy copy = sdk::deserialise_program(artifact, size, kMagic, "gpu_emu");
  if (entry != nullptr && copy.name() != entry)
    fail(PG_ERR_COMPILE, "gpu_emu: artifact holds '" + copy.name() + "', not '" + entry + "'");
  if (trace_) host_.log(PG_LOG_DEBUG, "gpu_emu: loading " + listing(copy.view()));
  try {
    return reinterpret_cast<pg_program_t>(new Program(decode(copy.view())));
  } catch (const sdk::Error& e) {
    fail(PG_ERR_COMPILE, std::string("gpu_emu: invalid artifact: ") + e.what());
  }
}

void Device::unload(pg_program_t program) {
  delete reinterpret_cast<Program*>(program);
}

void Device::launch(pg_program_t handle, const pg_launch_args& args) {
  const Program& p = *reinterpret_cast<const Program*>(handle);
  if (args.buffer_count < p.buffer_count || args.scalar_count < p.scalar_count)
    fail(PG_ERR_INVALID_ARGUMENT,
         "gpu_emu: '" + p.name + "' takes " + std::to_string(p.buffer_count) + " buffers and " +
             std::to_string(p.scalar_count) + " scalars, launched with " +
             std::to_string(args.buffer_count) + " and " + std::to_string(args.scalar_count));
  std::vector<GlobalBuffer> buffers(p.buffer_count);
  for (uint32_t k = 0; k < p.buffer_count; ++k) {
    if (args.buffers[k] == nullptr)
      fail(PG_ERR_INVALID_ARGUMENT,
           "gpu_emu: '" + p.name + "': buffer " + std::to_string(k) + " is NULL");
    const Buffer* b = buffer(args.buffers[k]);
    buffers[k] = {b->data, b->size};
  }
  if (trace_)
    host_.log(PG_LOG_DEBUG,
              "gpu_emu: launching '" + p.name + "' over (" + std::to_string(args.global_size[0]) +
                  "," + std::to_string(args.global_size[1]) + "," +
                  std::to_string(args.global_size[2]) + ") groups of (" +
                  std::to_string(args.local_size[0]) + "," + std::to_string(args.local_size[1]) +
                  "," + std::to_string(args.local_size[2]) + ") threads");
  processor_.run(p, args, buffers);
}

double Device::launch_timed(pg_program_t program, const pg_launch_args& args) {
  const auto start = std::chrono::steady_clock::now();
  launch(program, args);
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace polygrad::gpu_emu
