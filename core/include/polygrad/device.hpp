// polygrad::Device: the host-side handle of one device served by a plugin, with RAII buffers
// and programs. Every call that a plugin fails throws polygrad::Error carrying the plugin's
// message, naming the plugin, the device and the call.
#ifndef POLYGRAD_DEVICE_HPP
#define POLYGRAD_DEVICE_HPP

#include <polygrad/plugin.h>
#include <polygrad/error.hpp>
#include <polygrad/export.hpp>

#include <array>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace polygrad {

namespace detail {
struct LoadedPlugin;
}
class Stream;
class Event;
class PinnedMemory;

/// What a device says about itself.
struct DeviceProperties {
  std::string name;           ///< human-readable, e.g. the CPU model
  std::string target;         ///< compiler target, e.g. "x86_64-znver3"
  uint64_t memory_bytes = 0;  ///< 0 when unknown
  pg_capabilities caps{};     ///< as declared by the plugin

  bool supports(pg_dtype dtype) const { return (caps.dtype_mask >> dtype) & 1u; }
  /// Names of the supported dtypes, in enum order ("float32", ...).
  POLYGRAD_API std::vector<std::string> dtype_names() const;
};

/// Device memory. Move-only; frees itself through its plugin's allocator.
class POLYGRAD_API Buffer {
 public:
  Buffer() = default;
  Buffer(Buffer&& other) noexcept;
  Buffer& operator=(Buffer&& other) noexcept;
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  ~Buffer();

  uint64_t size() const { return size_; }
  pg_buffer_t handle() const { return buffer_; }
  bool valid() const { return buffer_ != nullptr; }
  /// Host-visible address (host-memory devices whose plugin offers it), else nullptr.
  void* host_pointer() const;

 private:
  friend class Device;
  friend class Stream;
  void reset() noexcept;
  std::shared_ptr<detail::LoadedPlugin> plugin_;
  pg_device_t device_ = nullptr;
  pg_buffer_t buffer_ = nullptr;
  uint64_t size_ = 0;
};

/// A rendered program: what the plugin's renderer produced.
struct Artifact {
  pg_artifact_format format = PG_ARTIFACT_OTHER;
  std::vector<uint8_t> bytes;

  /// The bytes as text (for source formats).
  std::string text() const { return std::string(bytes.begin(), bytes.end()); }
};

/// A loaded program. Move-only; unloads itself through its plugin's loader.
class POLYGRAD_API Program {
 public:
  Program() = default;
  Program(Program&& other) noexcept;
  Program& operator=(Program&& other) noexcept;
  Program(const Program&) = delete;
  Program& operator=(const Program&) = delete;
  ~Program();

  pg_program_t handle() const { return program_; }
  const std::string& entry() const { return entry_; }
  bool valid() const { return program_ != nullptr; }

 private:
  friend class Device;
  void reset() noexcept;
  std::shared_ptr<detail::LoadedPlugin> plugin_;
  pg_device_t device_ = nullptr;
  pg_program_t program_ = nullptr;
  std::string entry_;
};

/// Arguments of one launch. Buffers are borrowed for the call.
struct LaunchArgs {
  std::vector<const Buffer*> buffers;            ///< one per PARAM_BUFFER slot
  std::vector<int64_t> scalars;                  ///< one per PARAM_SCALAR slot (see float_scalar)
  std::array<uint32_t, 3> global_size{1, 1, 1};  ///< groups per dim
  std::array<uint32_t, 3> local_size{1, 1, 1};   ///< threads per group per dim
  uint32_t shared_memory_bytes = 0;

  /// A float scalar as the ABI passes it: the bit pattern of a double.
  static int64_t float_scalar(double value) {
    int64_t bits;
    std::memcpy(&bits, &value, sizeof(bits));
    return bits;
  }
};

/// One device of a loaded plugin. Cheap to copy; keeps its plugin alive.
class POLYGRAD_API Device {
 public:
  /// Canonical name, e.g. "cpu:0".
  const std::string& name() const { return name_; }
  uint32_t index() const { return index_; }
  /// The plugin serving it, e.g. "cpu_clang".
  const std::string& plugin_name() const;
  pg_device_t handle() const { return device_; }
  /// The serving plugin's table: what a ccl plugin needs to stage this device's buffers.
  const pg_plugin* plugin_table() const;

  DeviceProperties properties() const;

  /// Allocate nbytes of device memory.
  Buffer alloc(uint64_t nbytes) const;
  /// A buffer over nbytes of the caller's memory at `host`, without a copy, where the plugin
  /// can (its allocator's wrap_host: host-memory devices); an empty Buffer where it cannot.
  /// The memory must stay valid until the Buffer is gone.
  Buffer wrap_host(void* host, uint64_t nbytes) const;
  /// Host -> device. Throws when the range exceeds the buffer.
  void copy_in(Buffer& dst, const void* src, uint64_t nbytes, uint64_t dst_offset = 0) const;
  /// Device -> host.
  void copy_out(void* dst, const Buffer& src, uint64_t nbytes, uint64_t src_offset = 0) const;
  /// Copy into `dst` (a buffer of this device) from `src` (this or any other device). Uses the
  /// plugin's copy_device when both are on this device and it has one, else goes through host
  /// memory.
  void copy_device(Buffer& dst, const Buffer& src, uint64_t nbytes, uint64_t dst_offset = 0,
                   uint64_t src_offset = 0) const;
  bool has_copy_device() const;

  /// The artifact format the renderer declares.
  pg_artifact_format artifact_format() const;
  /// The kernel ISA programs for this device are written in: min(host ISA, plugin ISA).
  uint32_t isa_version() const;
  /// Whether the plugin takes `op` on `dtype` in `vcount` lanes (its compiler's op_support;
  /// without one: an op of its ISA on a declared dtype within max_vector_lanes). Memoised.
  bool supports(pg_op op, pg_dtype dtype, uint32_t vcount) const;
  /// Render a kernel program into the plugin's artifact. A program whose ISA is above the
  /// device's, or that uses an op, dtype or width the device does not support, is a user
  /// Error naming the program, the device and what it lacks, before the plugin sees it.
  Artifact render(const pg_kernel_program& program) const;
  /// Build and load an artifact; `entry` is the program's name.
  Program load(const Artifact& artifact, const std::string& entry) const;
  /// Build and load the artifact rendered from `program`, handing the plugin the program's
  /// metadata (parameter kinds, dtypes and access, local memory, local size) where its loader
  /// takes it (load_program, ABI 1.3).
  Program load(const Artifact& artifact, const pg_kernel_program& program) const;
  /// Whether `load` may run on several threads at once (the loader's
  /// PG_LOADER_CONCURRENT_LOAD, ABI 1.5).
  bool concurrent_load() const;
  /// Enqueue a launch (may return before it finishes; see synchronize).
  void launch(const Program& program, const LaunchArgs& args) const;
  /// Wait for every launch on the device.
  void synchronize() const;
  /// Whether the plugin can time a launch on the device.
  bool has_launch_timed() const;
  /// Launch, wait, and return the device time in seconds. Throws a user Error when the plugin
  /// has no launch_timed.
  double launch_timed(const Program& program, const LaunchArgs& args) const;

  /// Whether the plugin runs work asynchronously on streams (its pg_async_api, SDK 1.3).
  bool has_async() const;
  /// A new stream (stream.hpp); on a device without async work it runs each item at once.
  Stream create_stream() const;
  /// A new event, complete until recorded.
  Event create_event() const;
  /// `nbytes` of host memory for async copies: the plugin's pinned memory where it offers it.
  PinnedMemory alloc_pinned(uint64_t nbytes) const;

 private:
  friend class Stream;
  Device() = default;
  friend class Registry;
  Device(std::shared_ptr<detail::LoadedPlugin> plugin, pg_device_t device, uint32_t index,
         std::string name);
  void check_buffer(const char* op, const Buffer& buffer, uint64_t offset, uint64_t nbytes) const;
  /// A Buffer owning `handle` (nbytes), which the plugin's `op` returned with PG_OK.
  Buffer adopt(const char* op, pg_buffer_t handle, uint64_t nbytes) const;
  pg_launch_args raw_args(const char* op, const LaunchArgs& args,
                          std::vector<pg_buffer_t>& handles) const;
  /// The plugin's pg_async_api, or nullptr.
  const pg_async_api* async_api() const;

  Program adopt_program(const std::string& op, pg_program_t handle, const std::string& entry) const;
  void check_renderable(const pg_kernel_program& program) const;
  /// supports(), asking the plugin for the device's properties at most once across the calls
  /// that share `props` (a program's first render asks about dozens of new ops).
  bool supports(pg_op op, pg_dtype dtype, uint32_t vcount,
                std::optional<DeviceProperties>& props) const;

  std::shared_ptr<detail::LoadedPlugin> plugin_;
  pg_device_t device_ = nullptr;
  uint32_t index_ = 0;
  std::string name_;
};

}  // namespace polygrad

#endif  // POLYGRAD_DEVICE_HPP
