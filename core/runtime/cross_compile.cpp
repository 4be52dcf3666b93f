// POLYGRAD_CROSS_COMPILE: every kernel the runtime compiles, lowered, rendered and compiled again
// for a plugin's compile target (see cross_compile.hpp).
#include "runtime/cross_compile.hpp"

#include "codegen/lower.hpp"

#include <polygrad/registry.hpp>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <set>

#include <unistd.h>

namespace polygrad::runtime {

namespace {

const char* env(const char* name) {
  const char* v = std::getenv(name);
  return v && *v ? v : nullptr;
}

/// FNV-1a over the rendered bytes, folded to 32 bits: the file names' 8 hex digits.
std::string short_hash(const std::vector<uint8_t>& bytes) {
  uint64_t h = 1469598103934665603ull;
  for (uint8_t b : bytes) h = (h ^ b) * 1099511628211ull;
  char text[9];
  std::snprintf(text, sizeof text, "%08x", static_cast<uint32_t>(h ^ (h >> 32)));
  return text;
}

std::string extension(pg_artifact_format format) {
  switch (format) {
    case PG_ARTIFACT_C_SOURCE:
      return ".c";
    case PG_ARTIFACT_CUDA_SOURCE:
      return ".cu";
    case PG_ARTIFACT_PTX:
      return ".ptx";
    case PG_ARTIFACT_WASM:
      return ".wasm";
    case PG_ARTIFACT_OBJECT:
      return ".o";
    default:
      return ".bin";
  }
}

/// A binary's extension: native code built from CUDA source or PTX is a cubin; one in the
/// rendered artifact's own format is told apart from it by ".out".
std::string binary_extension(pg_artifact_format binary, pg_artifact_format rendered) {
  if (binary == PG_ARTIFACT_OBJECT &&
      (rendered == PG_ARTIFACT_CUDA_SOURCE || rendered == PG_ARTIFACT_PTX))
    return ".cubin";
  if (binary == rendered) return ".out" + extension(binary);
  return extension(binary);
}

void write_file(const std::filesystem::path& path, const std::vector<uint8_t>& bytes) {
  // Written beside and renamed: processes that cross-compile the same kernel into one folder
  // never see each other's half-written files.
  std::filesystem::path tmp = path;
  tmp += ".tmp" + std::to_string(static_cast<long>(::getpid()));
  {
    std::ofstream out(tmp, std::ios::binary);
    out.write(reinterpret_cast<const char*>(bytes.data()),
              static_cast<std::streamsize>(bytes.size()));
    if (!out) user_error("cannot write " + tmp.string());
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec)
    user_error("cannot rename " + tmp.string() + " to " + path.string() + ": " + ec.message());
}

struct State {
  std::mutex mu;
  std::map<std::string, CompileTarget> targets;  // by POLYGRAD_CROSS_COMPILE's value
  std::set<std::string> done;                    // "<spec>/<name>-<hash>" cross-compiled
};

State& state() {
  static State* s = new State;  // never destroyed: kernels may compile during static destruction
  return *s;
}

}  // namespace

void cross_compile(const UOpRef& ast, const std::string& kernel) {
  const char* spec_env = env("POLYGRAD_CROSS_COMPILE");
  if (!spec_env) return;
  const std::string spec = spec_env;
  const size_t colon = spec.find(':');
  const std::string plugin = spec.substr(0, colon);
  std::string arch = colon == std::string::npos ? "" : spec.substr(colon + 1);
  std::string name = kernel;
  auto fail = [&](const Error& e) {
    throw CrossCompileError(e.kind(),
                            "[cross-compile] kernel " + name + " for plugin " + plugin + ", arch " +
                                (arch.empty() ? std::string("(default)") : arch) +
                                " (POLYGRAD_CROSS_COMPILE=" + spec + "): " + e.what(),
                            e.status());
  };
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  try {
    auto it = s.targets.find(spec);
    if (it == s.targets.end())
      it = s.targets.emplace(spec, Registry::global().compile_target(plugin, arch)).first;
    const CompileTarget& target = it->second;
    arch = target.arch();
    codegen::Target t;
    t.caps = target.caps();
    t.isa_version = target.isa_version();
    t.device = target.plugin_name() + ":" + arch;
    std::optional<codegen::LoweredKernel> lowering;
    try {
      lowering = codegen::lower(ast, t);
    } catch (const Error& e) {
      // A kernel on a dtype the target does not declare (float16 on wasm) is not the target's:
      // its device would refuse it for that reason (check_target_dtypes), so nothing to check.
      if (e.kind() == ErrorKind::user && e.status() == PG_ERR_UNSUPPORTED) return;
      throw;
    }
    const codegen::LoweredKernel& lowered = *lowering;
    name = lowered.name;
    const pg_kernel_program program = lowered.program();
    const Artifact rendered = target.render(program);
    const std::string stem = name + "-" + short_hash(rendered.bytes);
    const std::string key = spec + "/" + stem;
    if (s.done.count(key)) return;
    std::optional<Artifact> binary;
    if (target.can_compile()) binary = target.compile(rendered, program);
    if (const char* dir = env("POLYGRAD_CROSS_COMPILE_DIR")) {
      std::error_code ec;
      std::filesystem::create_directories(dir, ec);
      if (ec)
        user_error("cannot create POLYGRAD_CROSS_COMPILE_DIR " + std::string(dir) + ": " +
                   ec.message());
      const std::filesystem::path base = std::filesystem::path(dir) / stem;
      write_file(base.string() + extension(rendered.format), rendered.bytes);
      if (binary)
        write_file(base.string() + binary_extension(binary->format, rendered.format),
                   binary->bytes);
    }
    s.done.insert(key);
  } catch (const CrossCompileError&) {
    throw;
  } catch (const Error& e) {
    fail(e);
  } catch (const std::exception& e) {
    fail(Error(ErrorKind::internal, e.what()));
  }
}

}  // namespace polygrad::runtime
