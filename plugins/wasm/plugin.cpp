// wasm plugin entry: one device, wasm:0, that runs kernels rendered to WebAssembly modules in
// an engine chosen by the option `engine`. See README.md beside this file.
#include <polygrad/plugin.hpp>

#include <unistd.h>

#include <memory>
#include <mutex>

#include "device.hpp"
#include "renderer.hpp"

namespace polygrad::wasm {

#if POLYGRAD_WASM_HAVE_V8
inline constexpr const char* kDefaultEngine = "v8";
inline constexpr const char* kEngineHelp =
    "the WebAssembly runtime: v8 (V8 embedded) or interp (wabt's interpreter, the reference)";
#else
inline constexpr const char* kDefaultEngine = "interp";
inline constexpr const char* kEngineHelp =
    "the WebAssembly runtime: interp (wabt's interpreter); v8 is not "
    "built: " POLYGRAD_WASM_V8_MISSING;
#endif

class Plugin {
 public:
  using Device = wasm::Device;
  static constexpr const char* name = "wasm";
  static constexpr const char* version = "0.1.0";
  static constexpr const char* device_prefix = "wasm";
  static constexpr pg_artifact_format artifact_format = PG_ARTIFACT_WASM;
  static constexpr uint32_t alignment = kAlignment;
  static constexpr bool has_copy_device = true, has_host_pointer = false, has_launch_timed = true;

  static std::vector<pg_option_desc> options() {
    return {
        {"engine", PG_OPTION_STRING, kDefaultEngine, kEngineHelp, 1, 0},
        {"compile", PG_OPTION_STRING, "tiered",
         "how the v8 engine compiles a module: tiered (Liftoff at load, then TurboFan in a "
         "background task) or optimized (TurboFan at load); one way per process",
         1, 0},
        {"trace", PG_OPTION_BOOL, "false", "log every program loaded and every launch", 1, 0},
    };
  }

  explicit Plugin(const sdk::Host& host) : host_(host) {
    std::optional<std::string> asked = option("engine");
    asked_ = asked.has_value();
    engine_ = asked.value_or(kDefaultEngine);
    compile_ = option("compile").value_or("tiered");
    if (compile_ != "tiered" && compile_ != "optimized")
      sdk::fail(PG_ERR_INVALID_ARGUMENT, "wasm: option compile: '" + compile_ +
                                             "' is not a way of compiling (tiered, "
                                             "optimized)");
#if POLYGRAD_WASM_HAVE_V8
    if (engine_ != "v8" && engine_ != "interp")
      sdk::fail(PG_ERR_INVALID_ARGUMENT,
                "wasm: option engine: '" + engine_ + "' is not an engine (v8, interp)");
    // Init does not load the v8 engine's library (nor libnode): it only looks for the file.
    if (engine_ == "v8" && access(v8_engine_path().c_str(), R_OK) != 0) {
      const std::string why = "no " + v8_engine_path();
      if (asked_)
        sdk::fail(PG_ERR_UNSUPPORTED,
                  "wasm: option engine: 'v8' cannot be used (" + why + "); interp can");
      host_.log(PG_LOG_WARNING,
                "wasm: engine v8 cannot be used (" + why + "); using engine interp");
      engine_ = "interp";
    }
#else
    if (engine_ == "v8")
      sdk::fail(PG_ERR_INVALID_ARGUMENT, std::string("wasm: option engine: 'v8' is not built (") +
                                             POLYGRAD_WASM_V8_MISSING + "); this build has interp");
    if (engine_ != "interp")
      sdk::fail(PG_ERR_INVALID_ARGUMENT,
                "wasm: option engine: '" + engine_ + "' is not an engine of this build (interp)");
    if (!asked)
      host_.log(PG_LOG_WARNING, std::string("wasm: engine v8 is not built (") +
                                    POLYGRAD_WASM_V8_MISSING + "); using engine interp");
#endif
  }

  uint32_t device_count(std::string&) {
    return 1;
  }

  Device& device(uint32_t) {
    std::call_once(once_, [this] {
      bool trace = option("trace").value_or("false") == "true";
      std::unique_ptr<Engine> engine;
#if POLYGRAD_WASM_HAVE_V8
      if (engine_ == "v8") {
        try {
          // the first one loads the engine's library and libnode
          engine =
              make_v8_engine(compile_ == "optimized" ? V8Compile::kOptimized : V8Compile::kTiered);
        } catch (const sdk::Error& e) {
          // The library is there but does not load (libnode or one of its libraries missing):
          // an engine asked for fails the device; the default falls back, as without v8.
          if (asked_ || e.status() != PG_ERR_UNSUPPORTED) throw;
          host_.log(PG_LOG_WARNING, std::string(e.what()) + "; using engine interp");
          engine_ = "interp";
        }
      }
#endif
      if (!engine) engine = make_interp_engine();
      device_ = std::make_unique<Device>(host_, std::move(engine), trace);
    });
    return *device_;
  }

  // Compile-only: rendering needs no engine.
  void describe_target(const std::string& arch, pg_target& out) {
    check_arch(arch);
    std::snprintf(out.arch, sizeof(out.arch), "wasm32");
    fill_capabilities(out.caps);
  }
  std::string render(const pg_target& target, const pg_kernel_program& program) {
    check_arch(target.arch);
    return render_module(program);
  }
  bool op_support(const pg_target&, uint32_t op, uint32_t dtype, uint32_t vcount) {
    return op_supported(op, dtype, vcount);
  }

 private:
  static void check_arch(const std::string& arch) {
    if (!arch.empty() && arch != "wasm32")
      sdk::fail(PG_ERR_UNSUPPORTED, "wasm compiles for 'wasm32' only, not '" + arch + "'");
  }
  std::optional<std::string> option(const char* key) const {
    if (auto v = host_.option(0, key)) return v;
    return host_.option(-1, key);
  }

  sdk::Host host_;
  std::string engine_;
  std::string compile_;  ///< the v8 engine's way of compiling (tiered, optimized)
  bool asked_ = false;   ///< the engine was set by the option, not the default
  std::once_flag once_;
  std::unique_ptr<Device> device_;
};

}  // namespace polygrad::wasm

PG_DEFINE_PLUGIN(polygrad::wasm::Plugin)
