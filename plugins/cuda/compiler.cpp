// NVRTC compiles the rendered source to PTX for the architecture's virtual target; nvJitLink
// assembles that PTX into a cubin for the exact sm_XY. A cached entry holds both (the PTX is
// the fallback a newer GPU's driver can still JIT).
#include <nvJitLink.h>
#include <nvrtc.h>

#include <polygrad/plugin_error.hpp>

#include <cctype>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "cuda_plugin.hpp"

namespace polygrad::cuda {

namespace {

// --fmad=false: a MUL followed by an ADD rounds twice, as the kernel program says (and as the
// CPU and the emulator compute it); MULACC renders as fmaf.
constexpr const char* kNvrtcOptions[] = {"--std=c++17", "--fmad=false"};
// -verbose: ptxas's report of each kernel (registers, stack frame, spills) in the info log.
constexpr const char* kLinkOptions[] = {"-O3", "-verbose"};

std::string nvrtc_log(nvrtcProgram prog) {
  size_t n = 0;
  if (nvrtcGetProgramLogSize(prog, &n) != NVRTC_SUCCESS || n <= 1) return "";
  std::string log(n, '\0');
  nvrtcGetProgramLog(prog, log.data());
  log.resize(std::strlen(log.c_str()));
  return log;
}

std::string to_ptx(const std::string& source, const std::string& entry, const Arch& arch) {
  nvrtcProgram prog = nullptr;
  nvrtcResult r =
      nvrtcCreateProgram(&prog, source.c_str(), (entry + ".cu").c_str(), 0, nullptr, nullptr);
  if (r != NVRTC_SUCCESS)
    sdk::fail(PG_ERR_COMPILE,
              "cuda: NVRTC cannot create '" + entry + "': " + nvrtcGetErrorString(r));
  const std::string arch_option = "--gpu-architecture=" + arch.ptx();
  std::vector<const char*> options = {arch_option.c_str()};
  for (const char* o : kNvrtcOptions) options.push_back(o);
  r = nvrtcCompileProgram(prog, static_cast<int>(options.size()), options.data());
  std::string ptx;
  if (r == NVRTC_SUCCESS) {
    size_t n = 0;
    nvrtcGetPTXSize(prog, &n);
    ptx.resize(n);
    nvrtcGetPTX(prog, ptx.data());
  }
  const std::string log = nvrtc_log(prog);
  nvrtcDestroyProgram(&prog);
  if (r != NVRTC_SUCCESS)
    sdk::fail(PG_ERR_COMPILE, "cuda: NVRTC cannot compile '" + entry + "' for " + arch.name() +
                                  " (" + nvrtcGetErrorString(r) + "):\n" + log.substr(0, 800));
  return ptx;
}

std::string link_log(nvJitLinkHandle h) {
  size_t n = 0;
  if (nvJitLinkGetErrorLogSize(h, &n) != NVJITLINK_SUCCESS || n <= 1) return "";
  std::string log(n, '\0');
  nvJitLinkGetErrorLog(h, log.data());
  log.resize(std::strlen(log.c_str()));
  return log;
}

/// Bytes of spill stores ptxas reports in nvJitLink's info log, summed over its functions.
uint64_t spill_stores(nvJitLinkHandle h) {
  size_t n = 0;
  if (nvJitLinkGetInfoLogSize(h, &n) != NVJITLINK_SUCCESS || n <= 1) return 0;
  std::string log(n, '\0');
  nvJitLinkGetInfoLog(h, log.data());
  uint64_t total = 0;
  const std::string key = " bytes spill stores";
  for (size_t at = log.find(key); at != std::string::npos; at = log.find(key, at + 1)) {
    size_t start = at;
    while (start > 0 && std::isdigit(static_cast<unsigned char>(log[start - 1]))) --start;
    if (start < at) total += std::stoull(log.substr(start, at - start));
  }
  return total;
}

std::string to_cubin(const std::string& ptx, const std::string& entry, const Arch& arch,
                     uint64_t& spills) {
  const std::string arch_option = "-arch=" + arch.name();
  std::vector<const char*> options = {arch_option.c_str()};
  for (const char* o : kLinkOptions) options.push_back(o);
  nvJitLinkHandle h = nullptr;
  nvJitLinkResult r = nvJitLinkCreate(&h, static_cast<uint32_t>(options.size()), options.data());
  if (r != NVJITLINK_SUCCESS)
    sdk::fail(PG_ERR_COMPILE, "cuda: nvJitLink cannot start for " + arch.name() + " (error " +
                                  std::to_string(static_cast<int>(r)) + ")");
  std::string cubin;
  r = nvJitLinkAddData(h, NVJITLINK_INPUT_PTX, ptx.data(), ptx.size(), entry.c_str());
  if (r == NVJITLINK_SUCCESS) r = nvJitLinkComplete(h);
  if (r == NVJITLINK_SUCCESS) spills = spill_stores(h);
  if (r == NVJITLINK_SUCCESS) {
    size_t n = 0;
    r = nvJitLinkGetLinkedCubinSize(h, &n);
    cubin.resize(n);
    if (r == NVJITLINK_SUCCESS) r = nvJitLinkGetLinkedCubin(h, cubin.data());
  }
  const std::string log = r == NVJITLINK_SUCCESS ? "" : link_log(h);
  nvJitLinkDestroy(&h);
  if (r != NVJITLINK_SUCCESS)
    sdk::fail(PG_ERR_COMPILE, "cuda: nvJitLink cannot assemble '" + entry + "' for " + arch.name() +
                                  " (error " + std::to_string(static_cast<int>(r)) + "):\n" +
                                  log.substr(0, 800));
  return cubin;
}

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
  int major = 0, minor = 0;
  nvrtcVersion(&major, &minor);
  unsigned link_major = 0, link_minor = 0;
  nvJitLinkVersion(&link_major, &link_minor);
  return "NVRTC " + std::to_string(major) + "." + std::to_string(minor) + ", nvJitLink " +
         std::to_string(link_major) + "." + std::to_string(link_minor);
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
    for (const char* o : kNvrtcOptions) material += std::string(o) + ' ';
    for (const char* o : kLinkOptions) material += std::string(o) + ' ';
    material += '\0' + entry + '\0' + source;
    key = sdk::sha256(material);
    Binary hit;
    if (auto payload = cache_->read(key); payload && unpack(*payload, hit)) return hit;
  }
  Binary b;
  b.ptx = to_ptx(source, entry, arch);
  uint64_t spills = 0;
  b.cubin = to_cubin(b.ptx, entry, arch, spills);
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
