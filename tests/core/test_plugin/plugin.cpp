// test_host: the core tests' plugin, written with the SDK helper. Host-memory devices, the
// template plugin's interpreter (sdk/template) as "compiler", and device names that echo the
// options the host passed in, so tests can see get_option at work.
//
// Faults on demand: while POLYGRAD_TEST_HOST_FAULT lists `<call>` or `<call>:<text>` (call one
// of render, load, launch, alloc; entries separated by commas), those calls fail (with <text>,
// only for programs whose name contains it, or allocations of "<n> bytes" that do), so tests
// can show what a failure inside a schedule leaves behind. It is read at every call: a test
// turns a fault on and off again.
#include <polygrad/plugin.hpp>

#include <cstdlib>
#include <cstring>
#include <deque>
#include <memory>

#include "program.hpp"  // sdk/template

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
  void unload(pg_program_t p) { delete reinterpret_cast<template_plugin::Program*>(p); }
  void launch(pg_program_t handle, const pg_launch_args& args) {
    const auto& p = *reinterpret_cast<const template_plugin::Program*>(handle);
    inject_fault("launch", p.name, PG_ERR_LAUNCH);
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
  uint32_t index_;
  std::string label_, level_, fast_;
};

class TestPlugin {
 public:
  using Device = TestDevice;
  static constexpr const char* name = "test_host";
  static constexpr const char* version = "1.2.3";
  static constexpr const char* device_prefix = "testdev";
  static constexpr pg_artifact_format artifact_format = PG_ARTIFACT_OTHER;
  static constexpr uint32_t alignment = 16;
  static constexpr bool has_copy_device = false, has_host_pointer = true, has_launch_timed = false;

  static std::vector<pg_option_desc> options() {
    return {
        {"devices", PG_OPTION_INT, "2", "number of devices (plugin-wide)", 0, 4},
        {"level", PG_OPTION_INT, "1", "a bounded integer", 0, 3},
        {"fast", PG_OPTION_BOOL, "false", "a boolean", 0, -1},
        {"ratio", PG_OPTION_FLOAT, "0.5", "a bounded number", 0, 1},
        {"label", PG_OPTION_STRING, nullptr, "free text", 0, -1},
    };
  }

  explicit TestPlugin(const polygrad::sdk::Host& host) : host_(host) {
    count_ = static_cast<uint32_t>(std::stoi(host.option(-1, "devices").value_or("2")));
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

 private:
  polygrad::sdk::Host host_;
  uint32_t count_ = 2;
  std::deque<TestDevice> devices_;
};

}  // namespace polygrad_test

PG_DEFINE_PLUGIN(polygrad_test::TestPlugin)
