// The cuda plugin's compiler library (compiler_library.hpp), libpolygrad_cuda_compiler.so:
// NVRTC compiles the rendered source to PTX for the architecture's virtual target; nvJitLink
// assembles that PTX into a cubin for the exact sm_XY. Only this library links them.
#include <nvJitLink.h>
#include <nvrtc.h>

#include <polygrad/plugin.h>
#include <polygrad/plugin_error.hpp>

#include <cctype>
#include <cstdio>
#include <cstring>
#include <vector>

#include "compiler_library.hpp"

namespace polygrad::cuda {

namespace {

// --fmad=false: a MUL followed by an ADD rounds twice, as the kernel program says (and as the
// CPU and the emulator compute it); MULACC renders as fmaf. -minimal: no builtin headers
// pre-included (the rendered source includes none and uses none of them; 18 -> 13 ms for a
// small kernel here, the same PTX).
constexpr const char* kNvrtcOptions[] = {"--std=c++17", "--fmad=false", "-minimal"};
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

std::string to_ptx(const std::string& source, const std::string& entry,
                   const std::string& arch_name, const std::string& arch_ptx) {
  nvrtcProgram prog = nullptr;
  nvrtcResult r =
      nvrtcCreateProgram(&prog, source.c_str(), (entry + ".cu").c_str(), 0, nullptr, nullptr);
  if (r != NVRTC_SUCCESS)
    sdk::fail(PG_ERR_COMPILE,
              "cuda: NVRTC cannot create '" + entry + "': " + nvrtcGetErrorString(r));
  const std::string arch_option = "--gpu-architecture=" + arch_ptx;
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
    sdk::fail(PG_ERR_COMPILE, "cuda: NVRTC cannot compile '" + entry + "' for " + arch_name + " (" +
                                  nvrtcGetErrorString(r) + "):\n" + log.substr(0, 800));
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

std::string to_cubin(const std::string& ptx, const std::string& entry, const std::string& arch_name,
                     uint64_t& spills) {
  const std::string arch_option = "-arch=" + arch_name;
  std::vector<const char*> options = {arch_option.c_str()};
  for (const char* o : kLinkOptions) options.push_back(o);
  nvJitLinkHandle h = nullptr;
  nvJitLinkResult r = nvJitLinkCreate(&h, static_cast<uint32_t>(options.size()), options.data());
  if (r != NVJITLINK_SUCCESS)
    sdk::fail(PG_ERR_COMPILE, "cuda: nvJitLink cannot start for " + arch_name + " (error " +
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
    sdk::fail(PG_ERR_COMPILE, "cuda: nvJitLink cannot assemble '" + entry + "' for " + arch_name +
                                  " (error " + std::to_string(static_cast<int>(r)) + "):\n" +
                                  log.substr(0, 800));
  return cubin;
}

void versions(std::string& out) {
  int major = 0, minor = 0;
  nvrtcVersion(&major, &minor);
  unsigned link_major = 0, link_minor = 0;
  nvJitLinkVersion(&link_major, &link_minor);
  out = "NVRTC " + std::to_string(major) + "." + std::to_string(minor) + ", nvJitLink " +
        std::to_string(link_major) + "." + std::to_string(link_minor);
}

void options(std::string& out) {
  out.clear();
  for (const char* o : kNvrtcOptions) out += std::string(o) + ' ';
  for (const char* o : kLinkOptions) out += std::string(o) + ' ';
}

void compile(const std::string& source, const std::string& entry, const std::string& arch_name,
             const std::string& arch_ptx, CompileResult& out) {
  out = CompileResult{};
  try {
    out.ptx = to_ptx(source, entry, arch_name, arch_ptx);
    out.cubin = to_cubin(out.ptx, entry, arch_name, out.spills);
  } catch (const sdk::Error& e) {
    out.status = e.status();
    out.error = e.what();
  } catch (const std::exception& e) {
    out.status = PG_ERR_INTERNAL;
    out.error = std::string("cuda: compiler: ") + e.what();
  }
}

constexpr CompilerApi kApi = {kCompilerInterface, &versions, &options, &compile};

}  // namespace
}  // namespace polygrad::cuda

/// The library's entry (compiler_library.hpp's CompilerEntry).
extern "C" __attribute__((visibility("default"))) const polygrad::cuda::CompilerApi*
polygrad_cuda_compiler(uint32_t interface, char* error, size_t error_size) {
  using namespace polygrad::cuda;
  if (interface != kCompilerInterface) {
    if (error_size > 0)
      std::snprintf(error, error_size,
                    "cuda: %s has compiler interface %u, the plugin %u (a library of another "
                    "build)",
                    kCompilerFile, kCompilerInterface, interface);
    return nullptr;
  }
  return &kApi;
}
