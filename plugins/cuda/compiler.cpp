// The compiler's disk cache, in front of the compiler library (compiler_library.hpp: NVRTC and
// nvJitLink, loaded at the first compile). A cached entry holds the cubin and the PTX (the
// fallback a newer GPU's driver can still JIT).

#include <polygrad/plugin_error.hpp>

#include <cstdlib>
#include <cstring>
#include <utility>
#include <vector>

#include "compiler_library.hpp"
#include "cuda_plugin.hpp"

namespace polygrad::cuda {

namespace {

// Payload of a cache entry: cubin size (u64 LE), cubin, PTX.
std::vector<char> pack(const Binary& b) {
  std::vector<char> out(8 + b.cubin.size() + b.ptx.size());
  const uint64_t n = b.cubin.size();
  std::memcpy(out.data(), &n, 8);
  std::memcpy(out.data() + 8, b.cubin.data(), b.cubin.size());
  std::memcpy(out.data() + 8 + b.cubin.size(), b.ptx.data(), b.ptx.size());
  return out;
}

bool unpack(const std::vector<char>& payload, Binary& b) {
  uint64_t n = 0;
  if (payload.size() < 8) return false;
  std::memcpy(&n, payload.data(), 8);
  if (n > payload.size() - 8) return false;
  b.cubin.assign(payload.data() + 8, n);
  b.ptx.assign(payload.data() + 8 + n, payload.size() - 8 - n);
  return true;
}

}  // namespace

std::string Compiler::versions() {
  std::string out;
  compiler_library().versions(out);
  return out;
}

Compiler::Compiler(const sdk::Host& host, const std::string& cache_dir, int driver_version)
    : host_(host), driver_version_(driver_version) {
  if (!cache_dir.empty())
    cache_ = std::make_unique<sdk::DiskCache>(cache_dir, host_, "cuda", "PGCUBIN1", ".cubin");
}

Binary Compiler::compile(const std::string& source, const std::string& entry, const Arch& arch) {
  sdk::DiskCache::Key key{};
  const bool cached = cache_ && cache_->usable();
  if (cached) {
    static const std::string tools = versions();
    std::string material = std::string("polygrad cuda ") + kVersion + '\0' + tools + '\0' +
                           "driver " + std::to_string(driver_version_) + '\0' + arch.name() + '\0';
    std::string options;
    compiler_library().options(options);
    material += options;
    material += '\0' + entry + '\0' + source;
    key = sdk::sha256(material);
    Binary hit;
    if (auto payload = cache_->read(key); payload && unpack(*payload, hit)) return hit;
  }
  CompileResult r;
  compiler_library().compile(source, entry, arch.name(), arch.ptx(), r);
  if (r.status != PG_OK) sdk::fail(static_cast<pg_status>(r.status), r.error);
  Binary b{std::move(r.cubin), std::move(r.ptx)};
  const uint64_t spills = r.spills;
  if (spills > 0) {
    // The codegen plans no spill: a kernel that has them is slow, and named. With
    // POLYGRAD_CUDA_SPILLS=error (CI's compile-only tier) it is an error; not cached either
    // way, so each compile reports it.
    const std::string what = "cuda: kernel '" + entry + "' spills " + std::to_string(spills) +
                             " bytes of registers for " + arch.name();
    const char* mode = std::getenv("POLYGRAD_CUDA_SPILLS");
    if (mode != nullptr && std::string(mode) == "error")
      sdk::fail(PG_ERR_COMPILE, what + " (POLYGRAD_CUDA_SPILLS=error)");
    host_.log(PG_LOG_WARNING, what);
    return b;
  }
  if (cached) cache_->write(key, pack(b));
  return b;
}

}  // namespace polygrad::cuda
