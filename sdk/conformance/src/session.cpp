#include "session.hpp"

#include <polygrad/program_info.hpp>

#include <polygrad/plugin.hpp>

#include <dlfcn.h>

#include <cstring>
#include <deque>
#include <memory>

namespace polygrad::conformance::detail {

std::string status_name(int status) {
  if (status < PG_OK || status > PG_ERR_INTERNAL) return "unknown status " + std::to_string(status);
  return sdk::status_name(status);
}

std::string CallResult::describe() const {
  std::string s = threw ? std::string("exception") : status_name(status);
  if (!message.empty()) s += ": " + message;
  return s;
}

namespace {

void host_log(void*, pg_log_level, const char*) {}
const char* host_get_option(void* context, int32_t, const char* key) {
  const auto* options = static_cast<const OptionValues*>(context);
  if (options == nullptr || key == nullptr) return nullptr;
  auto it = options->find(key);
  return it == options->end() ? nullptr : it->second.c_str();
}

}  // namespace

const pg_host_services* make_host_services(const HostShape& shape, const std::string& path) {
  // Tables and strings handed to a plugin must outlive it: keep them for the process.
  static std::deque<std::unique_ptr<unsigned char[]>> tables;
  static std::deque<std::string> paths;
  size_t bytes = std::max<size_t>(shape.struct_size, sizeof(pg_host_services)) + 64;
  auto storage = std::make_unique<unsigned char[]>(bytes);
  std::memset(storage.get(), 0x5a, bytes);  // garbage past struct_size, harmless as data
  pg_host_services host{};
  host.struct_size = shape.struct_size;
  host.abi_major = shape.abi_major;
  host.abi_minor = shape.abi_minor;
  host.host_context = const_cast<OptionValues*>(shape.options);
  host.log = shape.optional_services ? &host_log : nullptr;
  host.get_option = shape.optional_services ? &host_get_option : nullptr;
  host.plugin_path = paths.emplace_back(path).c_str();
  std::memcpy(storage.get(), &host, std::min<size_t>(shape.struct_size, sizeof host));
  return reinterpret_cast<const pg_host_services*>(tables.emplace_back(std::move(storage)).get());
}

Session::~Session() {
  if (plugin_ == nullptr || state_ == nullptr || plugin_->shutdown == nullptr) return;
  try {
    plugin_->shutdown(state_);
  } catch (...) {
  }
}

bool Session::open_library(const std::string& path, std::string& why) {
  path_ = path;
  library_ = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (library_ == nullptr) {
    const char* e = dlerror();
    why = std::string("dlopen failed: ") + (e ? e : "unknown reason");
    return false;
  }
  auto entry = reinterpret_cast<pg_plugin_entry_fn>(dlsym(library_, PG_PLUGIN_ENTRY_NAME));
  if (entry == nullptr) {
    why = "the library does not export " PG_PLUGIN_ENTRY_NAME;
    return false;
  }
  try {
    plugin_ = entry();
  } catch (...) {
    why = PG_PLUGIN_ENTRY_NAME " threw a C++ exception";
    return false;
  }
  if (plugin_ == nullptr) {
    why = PG_PLUGIN_ENTRY_NAME " returned NULL";
    return false;
  }
  return true;
}

bool Session::open_device(std::string& why) {
  const pg_plugin& p = *plugin_;
  HostShape shape;
  shape.options = options_;
  CallResult r =
      guarded([&](pg_error* e) { return p.init(make_host_services(shape, path_), &state_, e); });
  if (!r.ok()) {
    why = "init failed: " + r.describe();
    return false;
  }
  r = guarded([&](pg_error* e) { return p.device_count(state_, &device_count_, e); });
  if (!r.ok()) {
    why = "device_count failed: " + r.describe();
    return false;
  }
  if (device_count_ == 0) {
    why = "no devices" + (r.message.empty() ? std::string() : ": " + r.message);
    return false;
  }
  r = guarded([&](pg_error* e) { return p.device_open(state_, 0, &device_, e); });
  if (!r.ok() || device_ == nullptr) {
    why = "device_open(0) failed: " + r.describe();
    return false;
  }
  props_ = pg_device_properties{};
  props_.struct_size = sizeof props_;
  props_.caps.struct_size = sizeof props_.caps;
  r = guarded([&](pg_error* e) { return p.device_properties(device_, &props_, e); });
  if (!r.ok()) {
    why = "device_properties failed: " + r.describe();
    return false;
  }
  props_.name[sizeof props_.name - 1] = '\0';
  props_.target[sizeof props_.target - 1] = '\0';
  return true;
}

const pg_allocator_api* Session::allocator() const {
  return PG_HAS_FIELD(plugin_, pg_plugin, allocator) ? plugin_->allocator : nullptr;
}
const pg_renderer_api* Session::renderer() const {
  return PG_HAS_FIELD(plugin_, pg_plugin, renderer) ? plugin_->renderer : nullptr;
}
const pg_loader_api* Session::loader() const {
  return PG_HAS_FIELD(plugin_, pg_plugin, loader) ? plugin_->loader : nullptr;
}
bool Session::has_copy_device() const {
  const pg_allocator_api* a = allocator();
  return PG_HAS_FIELD(a, pg_allocator_api, copy_device) && a->copy_device != nullptr;
}
bool Session::has_host_pointer() const {
  const pg_allocator_api* a = allocator();
  return PG_HAS_FIELD(a, pg_allocator_api, host_pointer) && a->host_pointer != nullptr;
}
bool Session::has_wrap_host() const {
  const pg_allocator_api* a = allocator();
  return PG_HAS_FIELD(a, pg_allocator_api, wrap_host) && a->wrap_host != nullptr;
}
bool Session::has_launch_timed() const {
  const pg_loader_api* l = loader();
  return PG_HAS_FIELD(l, pg_loader_api, launch_timed) && l->launch_timed != nullptr;
}
bool Session::has_async() const {
  if (!PG_HAS_FIELD(plugin_, pg_plugin, async) || plugin_->async == nullptr) return false;
  const pg_async_api* a = plugin_->async;
  return PG_HAS_FIELD(a, pg_async_api, event_synchronize) && a->stream_create &&
         a->stream_destroy && a->stream_synchronize && a->copy_in_async && a->copy_out_async &&
         a->launch_async && a->event_create && a->event_destroy && a->event_record &&
         a->stream_wait_event && a->event_synchronize;
}
bool Session::has_shutdown() const {
  return plugin_->shutdown != nullptr;
}

CallResult Session::alloc(uint64_t nbytes, pg_buffer_t* out) const {
  *out = nullptr;
  return guarded([&](pg_error* e) { return allocator()->alloc(device_, nbytes, out, e); });
}

void Session::free(pg_buffer_t buffer) const {
  try {
    allocator()->free(device_, buffer);
  } catch (...) {
  }
}

CallResult Session::copy_in(pg_buffer_t dst, uint64_t offset, const void* src, uint64_t n) const {
  return guarded(
      [&](pg_error* e) { return allocator()->copy_in(device_, dst, offset, src, n, e); });
}

CallResult Session::copy_out(void* dst, pg_buffer_t src, uint64_t offset, uint64_t n) const {
  return guarded(
      [&](pg_error* e) { return allocator()->copy_out(device_, dst, src, offset, n, e); });
}

namespace {
int append_to_string(void* context, const void* data, uint64_t n) {
  try {
    static_cast<std::string*>(context)->append(static_cast<const char*>(data), n);
    return 0;
  } catch (...) {
    return 1;
  }
}
}  // namespace

CallResult Session::render(const pg_kernel_program* program, std::string& artifact) const {
  artifact.clear();
  pg_byte_sink sink{&artifact, &append_to_string};
  return guarded([&](pg_error* e) { return renderer()->render(device_, program, &sink, e); });
}

CallResult Session::load(const std::string& artifact, const char* entry, pg_program_t* out,
                         const pg_kernel_program* program) const {
  *out = nullptr;
  const pg_loader_api* l = loader();
  if (program != nullptr && PG_HAS_FIELD(l, pg_loader_api, load_program) &&
      l->load_program != nullptr) {
    const sdk::ProgramInfo info(*program, static_cast<pg_artifact_format>(renderer()->format));
    return guarded([&](pg_error* e) {
      return l->load_program(device_, artifact.data(), artifact.size(), &info.view(), out, e);
    });
  }
  return guarded([&](pg_error* e) {
    return l->load(device_, artifact.data(), artifact.size(), entry, out, e);
  });
}

void Session::unload(pg_program_t program) const {
  try {
    loader()->unload(device_, program);
  } catch (...) {
  }
}

CallResult Session::launch(pg_program_t program, const pg_launch_args* args) const {
  return guarded([&](pg_error* e) { return loader()->launch(device_, program, args, e); });
}

CallResult Session::synchronize() const {
  return guarded([&](pg_error* e) { return loader()->synchronize(device_, e); });
}

RunResult Session::run(const pg_kernel_program& program, std::vector<HostArray>& buffers,
                       const LaunchShape& shape) const {
  RunResult result;
  std::string artifact;
  result.call = render(&program, artifact);
  if (!result.call.ok()) return {Stage::render, result.call};
  pg_program_t loaded = nullptr;
  result.call = load(artifact, program.name, &loaded, &program);
  if (!result.call.ok()) return {Stage::load, result.call};

  std::vector<pg_buffer_t> handles;
  auto finish = [&](Stage stage) {
    for (pg_buffer_t b : handles) free(b);
    unload(loaded);
    result.stage = stage;
    return result;
  };
  for (HostArray& a : buffers) {
    pg_buffer_t b = nullptr;
    result.call = alloc(a.bytes.size(), &b);
    if (!result.call.ok()) return finish(Stage::alloc);
    handles.push_back(b);
    result.call = copy_in(b, 0, a.bytes.data(), a.bytes.size());
    if (!result.call.ok()) return finish(Stage::copy_in);
  }
  pg_launch_args args{};
  args.struct_size = sizeof args;
  args.buffer_count = static_cast<uint32_t>(handles.size());
  args.buffers = handles.data();
  args.scalar_count = static_cast<uint32_t>(shape.scalars.size());
  args.scalars = shape.scalars.data();
  for (int d = 0; d < 3; ++d) {
    args.global_size[d] = shape.global[d];
    args.local_size[d] = shape.local[d];
  }
  result.call = launch(loaded, &args);
  if (result.call.ok()) result.call = synchronize();
  if (!result.call.ok()) return finish(Stage::launch);
  for (size_t k = 0; k < buffers.size(); ++k) {
    result.call = copy_out(buffers[k].bytes.data(), handles[k], 0, buffers[k].bytes.size());
    if (!result.call.ok()) return finish(Stage::copy_out);
  }
  return finish(Stage::done);
}

}  // namespace polygrad::conformance::detail
