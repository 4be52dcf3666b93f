// What the wasm device needs from a WebAssembly runtime: one linear memory, and modules
// instantiated against it whose kernel function can be called. Engines: `v8` (V8 embedded,
// engine_v8.cpp, built where libnode is unpacked into a library of its own that the plugin
// loads at the first engine it makes, engine_v8_loader.cpp) and `interp` (wabt's interpreter,
// engine_interp.cpp). The renderer and the allocator do not depend on any engine.
#ifndef POLYGRAD_WASM_ENGINE_HPP
#define POLYGRAD_WASM_ENGINE_HPP

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace polygrad::wasm {

/// The 32-bit address space of one linear memory: 65536 pages of 64 KiB.
inline constexpr uint64_t kPageBytes = 64 * 1024;
inline constexpr uint64_t kMaxMemoryBytes = uint64_t{1} << 32;

/// One linear memory, owned by an engine. Its address may change when it grows.
class LinearMemory {
 public:
  virtual ~LinearMemory() = default;
  virtual uint8_t* data() = 0;
  virtual uint64_t size() const = 0;
  /// Grow to at least `bytes` (a multiple of kPageBytes, at most kMaxMemoryBytes); false when
  /// the runtime cannot.
  virtual bool grow_to(uint64_t bytes) = 0;
};

/// The arguments of one call of a kernel function (renderer.hpp gives their order).
struct KernelCall {
  std::vector<uint32_t> buffers;  ///< byte offsets
  std::vector<int64_t> scalars;
  uint32_t scratch = 0;  ///< offset of the program's scratch bytes
  uint32_t count[3] = {1, 1, 1};
  uint32_t local_size[3] = {1, 1, 1};
};

/// A module instantiated against the engine's memory, with what its exported globals say.
class LoadedModule {
 public:
  virtual ~LoadedModule() = default;
  /// Run the kernel function; on a trap, throws sdk::Error(PG_ERR_LAUNCH) naming the kernel
  /// and the trap.
  virtual void call(const KernelCall& call) = 0;
  std::string entry;
  uint32_t buffers = 0, scalars = 0, scratch_bytes = 0;
  bool group_memory = false;
};

class Engine {
 public:
  virtual ~Engine() = default;
  virtual const char* name() const = 0;
  /// The runtime and how it catches out-of-bounds accesses, for the device's log.
  virtual std::string describe() const = 0;
  virtual LinearMemory& memory() = 0;
  /// Validate and instantiate a module exporting function `entry` and the renderer's globals;
  /// sdk::Error(PG_ERR_COMPILE) naming the entry and the reason when that fails.
  virtual std::unique_ptr<LoadedModule> load(const void* bytes, uint64_t size,
                                             const std::string& entry) = 0;
};

/// wabt's interpreter.
std::unique_ptr<Engine> make_interp_engine();

#if POLYGRAD_WASM_HAVE_V8
/// The v8 engine's library (engine_v8.cpp, linked with libnode), in the plugin's own folder.
/// The plugin loads it at the first v8 engine it makes, so that a process that only discovers
/// the plugin (every process that lists plugins) never loads libnode.
inline constexpr const char* kV8EngineFile = "libpolygrad_wasm_v8.so";
/// The one symbol that library exports, of type V8EngineEntry.
inline constexpr const char* kV8EngineEntry = "polygrad_wasm_v8_engine";
/// The version of the classes above, which cross between the plugin and the engine's library:
/// bumped whenever one of them changes, so that a stale library beside the plugin is refused.
inline constexpr uint32_t kEngineInterface = 2;
/// How V8 compiles a module (option `compile`). V8's flags are set once per process, at its
/// first engine, so every v8 engine of a process compiles the same way.
enum class V8Compile : uint32_t {
  /// Liftoff (V8's baseline compiler) at load, TurboFan for the whole module at once in a
  /// background task; launches after it finishes run TurboFan's code (V8's design in browsers).
  kTiered = 0,
  /// TurboFan on the loading thread, at load: no background work, slower loads.
  kOptimized = 1,
};
/// Makes a v8 engine (V8 with an isolate of its own; the first call initialises V8 for the
/// process, with the flags `compile` asks). `interface` is the caller's kEngineInterface,
/// `compile` a V8Compile. On failure returns NULL with a pg_status in `status` and the reason
/// in `error` (`error_size` bytes, NUL-terminated): PG_ERR_INVALID_ARGUMENT when V8 was
/// initialised in this process for the other way of compiling.
using V8EngineEntry = Engine* (*)(uint32_t interface, uint32_t compile, int* status, char* error,
                                  size_t error_size);

/// The path of the v8 engine's library: kV8EngineFile beside the plugin's file.
std::string v8_engine_path();
/// A v8 engine, from the library at v8_engine_path(), which is loaded on the first call and
/// never unloaded (V8 cannot be initialised twice). sdk::Error(PG_ERR_UNSUPPORTED) naming the
/// library and the loader's reason when it cannot be loaded; the engine's own errors otherwise.
std::unique_ptr<Engine> make_v8_engine(V8Compile compile);
#endif

}  // namespace polygrad::wasm

#endif
