// What the host CPU is: LLVM's view (triple, CPU name, features) plus /proc/cpuinfo.
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>

#include <llvm/ADT/StringMap.h>
#include <llvm/ADT/Triple.h>
#include <llvm/Support/Host.h>

#include "cpu_clang.hpp"

namespace polygrad::cpu_clang {

namespace {

std::string cpuinfo_model_name() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) != 0) continue;
    size_t colon = line.find(':');
    if (colon == std::string::npos) break;
    size_t start = line.find_first_not_of(" \t", colon + 1);
    return start == std::string::npos ? "" : line.substr(start);
  }
  return "";
}

/// The size of cpu0's cache of `level` holding data (type Data or Unified) from sysfs, 0 if
/// none is listed ("48K", "1024K", "2M").
uint64_t sysfs_cache_bytes(int level) {
  for (int i = 0; i < 8; ++i) {
    const std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(i) + "/";
    std::ifstream lv(dir + "level"), ty(dir + "type"), sz(dir + "size");
    int l = 0;
    std::string type, size;
    if (!(lv >> l) || !(ty >> type) || !(sz >> size)) continue;
    if (l != level || type == "Instruction" || size.empty()) continue;
    uint64_t n = std::strtoull(size.c_str(), nullptr, 10);
    if (size.back() == 'K') n <<= 10;
    if (size.back() == 'M') n <<= 20;
    return n;
  }
  return 0;
}

/// sysconf's answer (glibc asks cpuid on x86), else sysfs'.
uint64_t cache_bytes(int name, int level) {
  const long v = sysconf(name);
  return v > 0 ? static_cast<uint64_t>(v) : sysfs_cache_bytes(level);
}

HostCpu detect() {
  HostCpu h;
  h.triple = llvm::sys::getProcessTriple();
  h.cpu = llvm::sys::getHostCPUName().str();
  llvm::StringMap<bool> features;
  bool have_features = llvm::sys::getHostCPUFeatures(features);
  if (have_features) {
    for (const auto& f : features) h.features.push_back((f.second ? "+" : "-") + f.first().str());
    std::sort(h.features.begin(), h.features.end());
  }
  auto has = [&](const char* name) {
    auto it = features.find(name);
    return it != features.end() && it->second;
  };
  if (has("avx512f"))
    h.vector_width_bytes = 64;
  else if (has("avx2") || has("avx"))
    h.vector_width_bytes = 32;
  h.model_name = cpuinfo_model_name();
  if (h.model_name.empty()) h.model_name = h.cpu;
  h.hardware_threads = std::max(1u, std::thread::hardware_concurrency());
  h.l1d_bytes = cache_bytes(_SC_LEVEL1_DCACHE_SIZE, 1);
  h.l2_bytes = cache_bytes(_SC_LEVEL2_CACHE_SIZE, 2);
  long pages = sysconf(_SC_PHYS_PAGES), page_size = sysconf(_SC_PAGESIZE);
  if (pages > 0 && page_size > 0)
    h.memory_bytes = static_cast<uint64_t>(pages) * static_cast<uint64_t>(page_size);
  return h;
}

}  // namespace

std::string HostCpu::target() const {
  return llvm::Triple(triple).getArchName().str() + "-" + cpu;
}

const HostCpu& host_cpu() {
  static const HostCpu cpu = detect();
  return cpu;
}

}  // namespace polygrad::cpu_clang
