// The wasm device: buffers in one linear memory (allocator.hpp), modules rendered by
// renderer.hpp and run by an engine (engine.hpp). The host reaches memory only through copies.
#ifndef POLYGRAD_WASM_DEVICE_HPP
#define POLYGRAD_WASM_DEVICE_HPP

#include <polygrad/plugin.hpp>

#include <memory>
#include <mutex>
#include <string>

#include "allocator.hpp"
#include "engine.hpp"

namespace polygrad::wasm {

/// The capabilities of every wasm target: no groups, 16-byte vectors, int32 indices,
/// transcendentals decomposed by the host, memory only through copies.
void fill_capabilities(pg_capabilities& caps);

class Device {
 public:
  Device(const sdk::Host& host, std::unique_ptr<Engine> engine, bool trace);

  void properties(pg_device_properties& p);
  pg_buffer_t alloc(uint64_t nbytes);
  void free(pg_buffer_t buffer);
  void copy_in(pg_buffer_t dst, uint64_t off, const void* src, uint64_t n);
  void copy_out(void* dst, pg_buffer_t src, uint64_t off, uint64_t n);
  void copy_device(pg_buffer_t dst, uint64_t doff, pg_buffer_t src, uint64_t soff, uint64_t n);
  std::string render(const pg_kernel_program& program);
  pg_program_t load(const void* artifact, uint64_t size, const char* entry);
  void unload(pg_program_t program);
  void launch(pg_program_t program, const pg_launch_args& args);
  void synchronize() {}
  double launch_timed(pg_program_t program, const pg_launch_args& args);

 private:
  struct Buffer {
    uint64_t offset = 0, size = 0;
  };
  struct Program {
    std::unique_ptr<LoadedModule> module;
    uint64_t scratch = 0;  ///< offset of its scratch range
  };
  static Buffer& buffer(pg_buffer_t b) { return *reinterpret_cast<Buffer*>(b); }
  /// The host address of [off, off + n) of `b`; an error naming `what` when out of bounds.
  uint8_t* span(pg_buffer_t b, uint64_t off, uint64_t n, const char* what);

  sdk::Host host_;
  std::unique_ptr<Engine> engine_;
  Allocator allocator_;
  bool trace_;
  std::mutex mutex_;  ///< one engine, one thread at a time
};

}  // namespace polygrad::wasm

#endif
