// test_host: the core tests' plugin, written with the SDK helper. Host-memory devices, the
// template plugin's interpreter (sdk/template) as "compiler", and device names that echo the
// options the host passed in, so tests can see get_option at work.
//
// Variants of it are built with these definitions (tests/core/CMakeLists.txt):
//   PG_TEST_NAME, PG_TEST_PREFIX  plugin name and device prefix (test_host, testdev)
//   PG_TEST_ISA                   the kernel ISA it declares (default: the SDK's newest)
//   PG_TEST_DEVICES               default of its "devices" option ("2")
//   PG_TEST_COMPILER              adds the compiler role (describe_target, render): compile-only
//   PG_TEST_NO_ASYNC              leaves out the async table (streams run each item at once)
//   PG_TEST_ABI_1_2               hands its tables over as a plugin built against SDK 1.2
//
// Faults on demand: while POLYGRAD_TEST_HOST_FAULT lists `<call>` or `<call>:<text>` (call one
// of render, load, launch, alloc; entries separated by commas), those calls fail (with <text>,
// only for programs whose name contains it, or allocations of "<n> bytes" that do), so tests
// can show what a failure inside a schedule leaves behind. It is read at every call: a test
// turns a fault on and off again. POLYGRAD_TEST_HOST_SLOW=<text>:<ms> makes launches of programs
// whose name contains <text> wait that long before they run, so tests of stream ordering do
// not pass by timing.
#include <polygrad/plugin.hpp>
#include <polygrad/program_info.hpp>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <memory>
#include <thread>

#include "program.hpp"  // sdk/template

#ifndef PG_TEST_NAME
#define PG_TEST_NAME "test_host"
#endif
#ifndef PG_TEST_PREFIX
#define PG_TEST_PREFIX "testdev"
#endif
#ifndef PG_TEST_ISA
#define PG_TEST_ISA PG_KERNEL_ISA_VERSION
#endif
#ifndef PG_TEST_DEVICES
#define PG_TEST_DEVICES "2"
#endif

namespace polygrad_test {

using polygrad::sdk::fail;

namespace {

/// Fails `call` (of program `name`, or allocation `name`) with `status` when
/// POLYGRAD_TEST_HOST_FAULT asks for it: a comma-separated list of `<call>` or `<call>:<text>`,
/// the latter only where `name` contains <text>.
void inject_fault(const char* call, const std::string& name, pg_status status) {
  const char* env = std::getenv("POLYGRAD_TEST_HOST_FAULT");
  if (env == nullptr) return;
  const std::string list = env;
  for (size_t at = 0; at <= list.size();) {
    size_t end = list.find(',', at);
    if (end == std::string::npos) end = list.size();
    const std::string spec = list.substr(at, end - at);
    at = end + 1;
    const size_t colon = spec.find(':');
    if (spec.substr(0, colon) != call) continue;
    if (colon != std::string::npos && name.find(spec.substr(colon + 1)) == std::string::npos)
      continue;
    fail(status, std::string("test_host: ") + call + " of '" + name +
                     "' failed on purpose (POLYGRAD_TEST_HOST_FAULT=" + list + ")");
  }
}

/// Sleeps as POLYGRAD_TEST_HOST_SLOW (<text>:<ms>) asks before a launch of program `name`.
void delay_launch(const std::string& name) {
  const char* env = std::getenv("POLYGRAD_TEST_HOST_SLOW");
  if (env == nullptr) return;
  const std::string spec = env;
  const size_t colon = spec.rfind(':');
  if (colon == std::string::npos || name.find(spec.substr(0, colon)) == std::string::npos) return;
  std::this_thread::sleep_for(std::chrono::milliseconds(std::atoi(spec.c_str() + colon + 1)));
}

}  // namespace

/// Host memory behind one buffer handle.
struct HostBuffer {
  std::vector<unsigned char> bytes;
};

class TestDevice {
 public:
  TestDevice(const polygrad::sdk::Host& host, uint32_t index) : index_(index) {
    int32_t i = static_cast<int32_t>(index);
    label_ = host.option(i, "label").value_or("none");
    level_ = host.option(i, "level").value_or("1");
    fast_ = host.option(i, "fast").value_or("false");
  }

  void properties(pg_device_properties& p) {
    std::snprintf(p.name, sizeof(p.name), "test device %u label=%s level=%s fast=%s", index_,
                  label_.c_str(), level_.c_str(), fast_.c_str());
    std::snprintf(p.target, sizeof(p.target), "interpreter");
    p.memory_bytes = 1ull << 30;
    p.caps.flags = PG_CAP_HOST_MEMORY;
    p.caps.dtype_mask = (1ull << PG_DTYPE_BOOL) | (1ull << PG_DTYPE_INT32) |
                        (1ull << PG_DTYPE_INT64) | (1ull << PG_DTYPE_FLOAT32) |
                        (1ull << PG_DTYPE_FLOAT64);
    p.caps.vector_width_bytes = 4;
    p.caps.max_vector_lanes = 1;
    p.caps.max_threads_per_group = 1;
    for (int d = 0; d < 3; ++d) {
      p.caps.max_local_dims[d] = 1;
      p.caps.max_global_dims[d] = 1u << 30;
    }
    p.caps.compute_units = 1;
  }
  pg_buffer_t alloc(uint64_t nbytes) {
    inject_fault("alloc", std::to_string(nbytes) + " bytes", PG_ERR_OUT_OF_MEMORY);
    auto* b = new HostBuffer;
    b->bytes.resize(nbytes);
    return reinterpret_cast<pg_buffer_t>(b);
  }
  void free(pg_buffer_t b) { delete reinterpret_cast<HostBuffer*>(b); }
  void copy_in(pg_buffer_t dst, uint64_t off, const void* src, uint64_t n) {
    auto* b = reinterpret_cast<HostBuffer*>(dst);
    if (off + n > b->bytes.size()) fail(PG_ERR_INVALID_ARGUMENT, "copy_in out of bounds");
    if (n) std::memcpy(b->bytes.data() + off, src, n);
  }
  void copy_out(void* dst, pg_buffer_t src, uint64_t off, uint64_t n) {
    auto* b = reinterpret_cast<HostBuffer*>(src);
    if (off + n > b->bytes.size()) fail(PG_ERR_INVALID_ARGUMENT, "copy_out out of bounds");
    if (n) std::memcpy(dst, b->bytes.data() + off, n);
  }
  void* host_pointer(pg_buffer_t b) { return reinterpret_cast<HostBuffer*>(b)->bytes.data(); }
  std::string render(const pg_kernel_program& program) {
    inject_fault("render", program.name ? program.name : "", PG_ERR_UNSUPPORTED);
    return template_plugin::serialise(program);
  }
  pg_program_t load(const void* artifact, uint64_t size, const char* entry) {
    inject_fault("load", entry ? entry : "", PG_ERR_COMPILE);
    return reinterpret_cast<pg_program_t>(
        new template_plugin::Program(template_plugin::deserialise(artifact, size, entry)));
  }
  /// Loads as above, and refuses metadata that disagrees with the program it describes: the
  /// host's pg_program_info is checked on every tensor-level test that runs here.
  pg_program_t load(const void* artifact, uint64_t size, const pg_program_info& info) {
    inject_fault("load", info.entry, PG_ERR_COMPILE);
    auto program = std::make_unique<template_plugin::Program>(
        template_plugin::deserialise(artifact, size, info.entry));
    check_info(*program, info);
    return reinterpret_cast<pg_program_t>(program.release());
  }
  void unload(pg_program_t p) { delete reinterpret_cast<template_plugin::Program*>(p); }
  void launch(pg_program_t handle, const pg_launch_args& args) {
    const auto& p = *reinterpret_cast<const template_plugin::Program*>(handle);
    inject_fault("launch", p.name, PG_ERR_LAUNCH);
    delay_launch(p.name);
    if (args.buffer_count < p.buffer_count || args.scalar_count < p.scalar_count)
      fail(PG_ERR_INVALID_ARGUMENT, "test_host: '" + p.name + "' needs more arguments");
    std::vector<template_plugin::Memory> memory;
    for (uint32_t k = 0; k < p.buffer_count; ++k) {
      auto* b = reinterpret_cast<HostBuffer*>(args.buffers[k]);
      if (b == nullptr) fail(PG_ERR_INVALID_ARGUMENT, "test_host: buffer is NULL");
      memory.push_back({b->bytes.data(), b->bytes.size()});
    }
    template_plugin::execute(p, memory, args);
  }
  void synchronize() {}

 private:
  static void check_info(const template_plugin::Program& p, const pg_program_info& info) {
    pg_kernel_program view{};
    view.struct_size = sizeof(view);
    view.isa_version = info.isa_version;
    view.name = p.name.c_str();
    view.instructions = p.instructions.data();
    view.instruction_count = static_cast<uint32_t>(p.instructions.size());
    view.operands = p.operands.data();
    view.operand_count = static_cast<uint32_t>(p.operands.size());
    view.buffer_count = p.buffer_count;
    view.scalar_count = p.scalar_count;
    for (int d = 0; d < 3; ++d) view.local_size[d] = info.required_local_size[d];
    const polygrad::sdk::ProgramInfo expected(view, PG_ARTIFACT_OTHER);
    auto describe = [](const pg_param_info& q) {
      return std::to_string(q.kind) + "/" + std::to_string(q.slot) + "/" +
             polygrad::sdk::dtype_name(q.dtype) + "/" + std::to_string(q.access);
    };
    const auto& want = expected.params();
    bool same = info.param_count == want.size() && info.artifact_format == PG_ARTIFACT_OTHER &&
                info.static_local_bytes == expected.view().static_local_bytes &&
                info.isa_version >= 1 && info.isa_version <= PG_TEST_ISA;
    for (uint32_t i = 0; same && i < info.param_count; ++i)
      same = describe(info.params[i]) == describe(want[i]);
    if (!same) {
      std::string got, exp;
      for (uint32_t i = 0; i < info.param_count; ++i)
        got.append(" ").append(describe(info.params[i]));
      for (const auto& q : want) exp.append(" ").append(describe(q));
      fail(PG_ERR_INVALID_ARGUMENT, std::string(PG_TEST_NAME) + ": metadata of '" + p.name +
                                        "' (ISA " + std::to_string(info.isa_version) + ", params" +
                                        got + ") does not match the program (" + exp + ")");
    }
  }

  uint32_t index_;
  std::string label_, level_, fast_;
};

class TestPlugin {
 public:
  using Device = TestDevice;
  static constexpr const char* name = PG_TEST_NAME;
  static constexpr const char* version = "1.2.3";
  static constexpr const char* device_prefix = PG_TEST_PREFIX;
  static constexpr uint32_t isa_version = PG_TEST_ISA;
  static constexpr pg_artifact_format artifact_format = PG_ARTIFACT_OTHER;
  static constexpr uint32_t alignment = 16;
  static constexpr bool has_copy_device = false, has_host_pointer = true, has_launch_timed = false;
#ifdef PG_TEST_NO_ASYNC
  static constexpr bool has_async = false;
#else
  static constexpr bool has_async = true;
#endif
  /// Each load deserialises its own program (the host builds a schedule's side by side).
  static constexpr bool concurrent_load = true;

  static std::vector<pg_option_desc> options() {
    return {
        {"devices", PG_OPTION_INT, PG_TEST_DEVICES, "number of devices (plugin-wide)", 0, 4},
        {"level", PG_OPTION_INT, "1", "a bounded integer", 0, 3},
        {"fast", PG_OPTION_BOOL, "false", "a boolean", 0, -1},
        {"ratio", PG_OPTION_FLOAT, "0.5", "a bounded number", 0, 1},
        {"label", PG_OPTION_STRING, nullptr, "free text", 0, -1},
    };
  }

  explicit TestPlugin(const polygrad::sdk::Host& host) : host_(host) {
    count_ = static_cast<uint32_t>(std::stoi(host.option(-1, "devices").value_or(PG_TEST_DEVICES)));
    host.log(PG_LOG_DEBUG, "test_host initialised with " + std::to_string(count_) +
                               " devices from " + host.plugin_path());
  }
  uint32_t device_count(std::string& why_none) {
    if (count_ == 0) why_none = "configured with devices: 0";
    return count_;
  }
  TestDevice& device(uint32_t index) {
    while (devices_.size() <= index) devices_.emplace_back(host_, devices_.size());
    return devices_[index];
  }

#ifdef PG_TEST_COMPILER
  // Compile-only: the interpreter's one target, with or without devices.
  void describe_target(const std::string& arch, pg_target& out) {
    if (!arch.empty() && arch != "interpreter")
      fail(PG_ERR_UNSUPPORTED,
           std::string(PG_TEST_NAME) + " compiles for 'interpreter' only, not '" + arch + "'");
    std::snprintf(out.arch, sizeof(out.arch), "interpreter");
    pg_device_properties p{};
    p.caps.struct_size = sizeof(p.caps);
    TestDevice(host_, 0).properties(p);
    out.caps = p.caps;
  }
  std::string render(const pg_target&, const pg_kernel_program& program) {
    return template_plugin::serialise(program);
  }
#endif

 private:
  polygrad::sdk::Host host_;
  uint32_t count_ = 2;
  std::deque<TestDevice> devices_;
};

}  // namespace polygrad_test

#ifdef PG_TEST_ABI_1_2
// The tables as a plugin built against SDK 1.2 hands them over: minor 2, pg_plugin and the
// loader cut at their 1.2 sizes. The 1.3 slots past them hold pointers that crash when called
// or read, so a host that looks past struct_size does not pass by luck.
extern "C" PG_PLUGIN_EXPORT const pg_plugin* PG_PLUGIN_ENTRY(void) {
  static pg_plugin plugin;
  static pg_loader_api loader;
  static const bool ready = [] {
    const pg_plugin* full = polygrad::sdk::detail::Tables<polygrad_test::TestPlugin>::table();
    plugin = *full;
    plugin.abi_minor = 2;
    plugin.struct_size = offsetof(pg_plugin, compiler);
    plugin.compiler = reinterpret_cast<const pg_compiler_api*>(uintptr_t{1});
    plugin.async = reinterpret_cast<const pg_async_api*>(uintptr_t{1});
    loader = *full->loader;
    loader.struct_size = offsetof(pg_loader_api, load_program);
    loader.load_program = reinterpret_cast<decltype(loader.load_program)>(uintptr_t{1});
    plugin.loader = &loader;
    return true;
  }();
  return ready ? &plugin : nullptr;
}
#else
PG_DEFINE_PLUGIN(polygrad_test::TestPlugin)
#endif
