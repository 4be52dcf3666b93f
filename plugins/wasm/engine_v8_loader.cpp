// Loads the v8 engine's library (engine.hpp: kV8EngineFile, built from engine_v8.cpp and linked
// with libnode) from the plugin's own folder when the first v8 engine is made. The plugin itself
// does not link libnode: opening libnode costs tens of milliseconds, which every process that
// discovers plugins would otherwise pay.
#include <polygrad/plugin_error.hpp>
#include <polygrad/sibling_library.hpp>

#include <mutex>
#include <string>

#include "engine.hpp"

namespace polygrad::wasm {
namespace {

using sdk::fail;

// Any function of the plugin: dladdr on it names the plugin's file.
void plugin_anchor() {}

struct Library {
  V8EngineEntry entry = nullptr;
  std::string error;  ///< why it could not be loaded, when entry is NULL
};

/// The library, loaded on the first call; never closed (V8 cannot be initialised twice in a
/// process, and its trap handler stays installed).
const Library& library() {
  static Library lib;
  static std::once_flag once;
  std::call_once(once, [] {
    const std::string path = v8_engine_path();
    lib.entry = reinterpret_cast<V8EngineEntry>(
        sdk::open_sibling_entry(path, kV8EngineEntry, "the v8 engine's library", lib.error));
  });
  return lib;
}

}  // namespace

std::string v8_engine_path() {
  return sdk::sibling_path(reinterpret_cast<const void*>(&plugin_anchor), kV8EngineFile);
}

std::unique_ptr<Engine> make_v8_engine(V8Compile compile) {
  const Library& lib = library();
  if (lib.entry == nullptr) fail(PG_ERR_UNSUPPORTED, "wasm: engine v8: " + lib.error);
  int status = PG_ERR_INTERNAL;
  char error[512] = "";
  Engine* engine =
      lib.entry(kEngineInterface, static_cast<uint32_t>(compile), &status, error, sizeof error);
  if (engine == nullptr)
    fail(static_cast<pg_status>(status), error[0] ? error : "wasm: engine v8: no engine");
  return std::unique_ptr<Engine>(engine);
}

}  // namespace polygrad::wasm
