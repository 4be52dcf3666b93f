// polygrad::Device, Buffer and Program: thin RAII wrappers over a plugin's role tables.
#include <polygrad/compile_target.hpp>
#include <polygrad/device.hpp>
#include <polygrad/error.hpp>
#include <polygrad/plugin.hpp>
#include <polygrad/program_info.hpp>
#include <polygrad/stream.hpp>

#include "../plugin/loaded_plugin.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>

namespace polygrad {

using detail::call_plugin;

std::vector<std::string> DeviceProperties::dtype_names() const {
  std::vector<std::string> names;
  for (uint32_t d = 0; d < PG_DTYPE_COUNT; ++d)
    if (supports(static_cast<pg_dtype>(d))) names.emplace_back(sdk::dtype_name(d));
  return names;
}

// ---------------------------------------------------------------------------------------------
// Buffer and Program

Buffer::Buffer(Buffer&& other) noexcept {
  *this = std::move(other);
}

Buffer& Buffer::operator=(Buffer&& other) noexcept {
  if (this != &other) {
    reset();
    plugin_ = std::move(other.plugin_);
    device_ = std::exchange(other.device_, nullptr);
    buffer_ = std::exchange(other.buffer_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

Buffer::~Buffer() {
  reset();
}

void Buffer::reset() noexcept {
  if (buffer_ != nullptr && plugin_)
    detail::release_in_plugin(plugin_->name, "free",
                              [&] { plugin_->table->allocator->free(device_, buffer_); });
  plugin_.reset();
  buffer_ = nullptr;
  device_ = nullptr;
  size_ = 0;
}

void* Buffer::host_pointer() const {
  if (buffer_ == nullptr) return nullptr;
  const pg_allocator_api* a = plugin_->table->allocator;
  if (!PG_HAS_FIELD(a, pg_allocator_api, host_pointer) || a->host_pointer == nullptr)
    return nullptr;
  try {
    return a->host_pointer(device_, buffer_);
  } catch (...) {
    return nullptr;
  }
}

Program::Program(Program&& other) noexcept {
  *this = std::move(other);
}

Program& Program::operator=(Program&& other) noexcept {
  if (this != &other) {
    reset();
    plugin_ = std::move(other.plugin_);
    device_ = std::exchange(other.device_, nullptr);
    program_ = std::exchange(other.program_, nullptr);
    entry_ = std::move(other.entry_);
  }
  return *this;
}

Program::~Program() {
  reset();
}

void Program::reset() noexcept {
  if (program_ != nullptr && plugin_)
    detail::release_in_plugin(plugin_->name, "unload",
                              [&] { plugin_->table->loader->unload(device_, program_); });
  plugin_.reset();
  program_ = nullptr;
  device_ = nullptr;
}

// ---------------------------------------------------------------------------------------------
// Device

Device::Device(std::shared_ptr<detail::LoadedPlugin> plugin, pg_device_t device, uint32_t index,
               std::string name)
    : plugin_(std::move(plugin)), device_(device), index_(index), name_(std::move(name)) {}

const std::string& Device::plugin_name() const {
  return plugin_->name;
}

const pg_plugin* Device::plugin_table() const {
  return plugin_->table;
}

DeviceProperties Device::properties() const {
  pg_device_properties raw{};
  raw.struct_size = sizeof(raw);
  raw.caps.struct_size = sizeof(raw.caps);
  call_plugin(*plugin_, "properties", name_,
              [&](pg_error* err) { return plugin_->table->device_properties(device_, &raw, err); });
  raw.name[sizeof(raw.name) - 1] = '\0';
  raw.target[sizeof(raw.target) - 1] = '\0';
  DeviceProperties p;
  p.name = raw.name;
  p.target = raw.target;
  p.memory_bytes = raw.memory_bytes;
  p.caps = raw.caps;
  return p;
}

Buffer Device::alloc(uint64_t nbytes) const {
  pg_buffer_t handle = nullptr;
  call_plugin(*plugin_, "alloc", name_, [&](pg_error* err) {
    return plugin_->table->allocator->alloc(device_, nbytes, &handle, err);
  });
  return adopt("alloc", handle, nbytes);
}

Buffer Device::adopt(const char* op, pg_buffer_t handle, uint64_t nbytes) const {
  if (handle == nullptr)
    internal_error(std::string("[") + op + "] " + name_ + " (plugin " + plugin_->name +
                   "): returned PG_OK but no buffer");
  Buffer b;
  b.plugin_ = plugin_;
  b.device_ = device_;
  b.buffer_ = handle;
  b.size_ = nbytes;
  return b;
}

Buffer Device::wrap_host(void* host, uint64_t nbytes) const {
  const pg_allocator_api* a = plugin_->table->allocator;
  if (!PG_HAS_FIELD(a, pg_allocator_api, wrap_host) || a->wrap_host == nullptr) return {};
  pg_buffer_t handle = nullptr;
  try {
    call_plugin(*plugin_, "wrap_host", name_,
                [&](pg_error* err) { return a->wrap_host(device_, host, nbytes, &handle, err); });
  } catch (const Error& e) {
    if (e.status() == PG_ERR_UNSUPPORTED) return {};
    throw;
  }
  return adopt("wrap_host", handle, nbytes);
}

void Device::check_buffer(const char* op, const Buffer& buffer, uint64_t offset,
                          uint64_t nbytes) const {
  auto where = [&] { return std::string("[") + op + "] " + name_ + ": "; };
  if (!buffer.valid()) user_error(where() + "the buffer is empty (moved from or default)");
  if (buffer.device_ != device_ || buffer.plugin_ != plugin_)
    user_error(where() + "the buffer belongs to another device");
  if (offset > buffer.size() || nbytes > buffer.size() - offset)
    user_error(where() + std::to_string(nbytes) + " bytes at offset " + std::to_string(offset) +
               " exceed the buffer's " + std::to_string(buffer.size()) + " bytes");
}

void Device::copy_in(Buffer& dst, const void* src, uint64_t nbytes, uint64_t dst_offset) const {
  check_buffer("copy_in", dst, dst_offset, nbytes);
  call_plugin(*plugin_, "copy_in", name_, [&](pg_error* err) {
    return plugin_->table->allocator->copy_in(device_, dst.handle(), dst_offset, src, nbytes, err);
  });
}

void Device::copy_out(void* dst, const Buffer& src, uint64_t nbytes, uint64_t src_offset) const {
  check_buffer("copy_out", src, src_offset, nbytes);
  call_plugin(*plugin_, "copy_out", name_, [&](pg_error* err) {
    return plugin_->table->allocator->copy_out(device_, dst, src.handle(), src_offset, nbytes, err);
  });
}

bool Device::has_copy_device() const {
  const pg_allocator_api* a = plugin_->table->allocator;
  return PG_HAS_FIELD(a, pg_allocator_api, copy_device) && a->copy_device != nullptr;
}

void Device::copy_device(Buffer& dst, const Buffer& src, uint64_t nbytes, uint64_t dst_offset,
                         uint64_t src_offset) const {
  check_buffer("copy_device", dst, dst_offset, nbytes);
  if (!src.valid()) user_error("[copy_device] " + name_ + ": the source buffer is empty");
  if (src_offset > src.size() || nbytes > src.size() - src_offset)
    user_error("[copy_device] " + name_ + ": " + std::to_string(nbytes) + " bytes at offset " +
               std::to_string(src_offset) + " exceed the source buffer's " +
               std::to_string(src.size()) + " bytes");
  if (src.device_ == device_ && src.plugin_ == plugin_ && has_copy_device()) {
    call_plugin(*plugin_, "copy_device", name_, [&](pg_error* err) {
      return plugin_->table->allocator->copy_device(device_, dst.handle(), dst_offset, src.handle(),
                                                    src_offset, nbytes, err);
    });
    return;
  }
  // Through host memory, pinned by the source's plugin where it offers that: out of the
  // source's plugin, into ours.
  const Device from(src.plugin_, src.device_, 0, "the source device");
  PinnedMemory staging = from.alloc_pinned(nbytes);
  call_plugin(*src.plugin_, "copy_device (staging copy_out)", name_, [&](pg_error* err) {
    return src.plugin_->table->allocator->copy_out(src.device_, staging.data(), src.handle(),
                                                   src_offset, nbytes, err);
  });
  copy_in(dst, staging.data(), nbytes, dst_offset);
}

pg_artifact_format Device::artifact_format() const {
  return static_cast<pg_artifact_format>(plugin_->table->renderer->format);
}

namespace {
int append_bytes(void* context, const void* data, uint64_t n) {
  try {
    auto* bytes = static_cast<std::vector<uint8_t>*>(context);
    const auto* p = static_cast<const uint8_t*>(data);
    bytes->insert(bytes->end(), p, p + n);
    return 0;
  } catch (...) {
    return 1;
  }
}
}  // namespace

uint32_t Device::isa_version() const {
  return plugin_->isa();
}

bool Device::supports(pg_op op, pg_dtype dtype, uint32_t vcount) const {
  std::optional<DeviceProperties> props;
  return supports(op, dtype, vcount, props);
}

bool Device::supports(pg_op op, pg_dtype dtype, uint32_t vcount,
                      std::optional<DeviceProperties>& props) const {
  const uint64_t key =
      static_cast<uint64_t>(op) | static_cast<uint64_t>(dtype) << 16 | uint64_t{vcount} << 32;
  {
    std::lock_guard lock(plugin_->support_mutex);
    auto it = plugin_->support.find({device_, key});
    if (it != plugin_->support.end()) return it->second;
  }
  if (!props) props = properties();
  const DeviceProperties& p = *props;
  bool ok = sdk::op_isa(op) != 0 && sdk::op_isa(op) <= isa_version() &&
            (dtype == PG_DTYPE_VOID || p.supports(dtype)) &&
            vcount <= std::max<uint32_t>(1, p.caps.max_vector_lanes);
  if (op == PG_OP_ATOMIC_ADD)
    ok = ok && (p.caps.flags & PG_CAP_ATOMIC_ADD) != 0 && dtype != PG_DTYPE_BOOL && vcount == 1;
  if (op == PG_OP_WMMA)
    ok = ok && PG_HAS_FIELD(&p.caps, pg_capabilities, tensor_core_count) &&
         p.caps.tensor_core_count > 0;
  if (const pg_compiler_api* c = plugin_->compiler();
      ok && c != nullptr && PG_HAS_FIELD(c, pg_compiler_api, op_support) && c->op_support) {
    pg_target target{};
    target.struct_size = sizeof(target);
    std::snprintf(target.arch, sizeof(target.arch), "%s", p.target.c_str());
    target.caps = p.caps;
    try {
      ok = c->op_support(plugin_->state, &target, op, dtype, vcount) != 0;
    } catch (...) {
      ok = false;  // a plugin that throws across the boundary supports nothing it threw for
    }
  }
  std::lock_guard lock(plugin_->support_mutex);
  plugin_->support[{device_, key}] = ok;
  return ok;
}

void Device::check_renderable(const pg_kernel_program& program) const {
  auto where = [&] {
    return std::string("[render '") + (program.name ? program.name : "?") + "'] " + name_ +
           " (plugin " + plugin_->name + "): ";
  };
  if (program.isa_version > isa_version())
    user_error(where() + "the program is kernel ISA " + std::to_string(program.isa_version) +
               "; the device takes ISA " + std::to_string(isa_version()) + " at most");
  std::optional<DeviceProperties> props;
  for (uint32_t i = 0; i < program.instruction_count; ++i) {
    const pg_instruction& in = program.instructions[i];
    if (in.op >= PG_OP_COUNT || in.dtype >= PG_DTYPE_COUNT) continue;  // the plugin rejects it
    const auto op = static_cast<pg_op>(in.op);
    const auto dtype = static_cast<pg_dtype>(in.dtype);
    if (supports(op, dtype, in.vcount, props)) continue;
    std::string what = std::string(sdk::op_name(op)) + " on " + sdk::dtype_name(dtype);
    if (in.vcount > 1) what += " x" + std::to_string(in.vcount);
    std::string why;
    if (!props) props = properties();
    const DeviceProperties& p = *props;
    if (dtype != PG_DTYPE_VOID && !p.supports(dtype))
      why = " (the device lacks " + std::string(sdk::dtype_name(dtype)) + ")";
    else if (sdk::op_isa(op) > isa_version())
      why = " (" + std::string(sdk::op_name(op)) + " is kernel ISA " +
            std::to_string(sdk::op_isa(op)) + "; the plugin renders ISA " +
            std::to_string(plugin_->table->isa_version) + ")";
    else if (in.vcount > std::max<uint32_t>(1, p.caps.max_vector_lanes))
      why = " (the device takes " + std::to_string(p.caps.max_vector_lanes) + " lanes at most)";
    user_error(where() + "instruction " + std::to_string(i) + ": the device does not support " +
               what + why);
  }
}

Artifact Device::render(const pg_kernel_program& program) const {
  check_renderable(program);
  Artifact artifact;
  artifact.format = artifact_format();
  pg_byte_sink sink{&artifact.bytes, &append_bytes};
  std::string op = std::string("render '") + (program.name ? program.name : "?") + "'";
  call_plugin(*plugin_, op.c_str(), name_, [&](pg_error* err) {
    return plugin_->table->renderer->render(device_, &program, &sink, err);
  });
  return artifact;
}

Program Device::load(const Artifact& artifact, const std::string& entry) const {
  pg_program_t handle = nullptr;
  std::string op = "load '" + entry + "'";
  call_plugin(*plugin_, op.c_str(), name_, [&](pg_error* err) {
    return plugin_->table->loader->load(device_, artifact.bytes.data(), artifact.bytes.size(),
                                        entry.c_str(), &handle, err);
  });
  return adopt_program(op, handle, entry);
}

Program Device::load(const Artifact& artifact, const pg_kernel_program& program) const {
  const std::string entry = program.name ? program.name : "";
  const pg_loader_api* l = plugin_->table->loader;
  if (!PG_HAS_FIELD(l, pg_loader_api, load_program) || l->load_program == nullptr)
    return load(artifact, entry);
  const sdk::ProgramInfo info(program, artifact.format);
  pg_program_t handle = nullptr;
  std::string op = "load '" + entry + "'";
  call_plugin(*plugin_, op.c_str(), name_, [&](pg_error* err) {
    return l->load_program(device_, artifact.bytes.data(), artifact.bytes.size(), &info.view(),
                           &handle, err);
  });
  return adopt_program(op, handle, entry);
}

Program Device::adopt_program(const std::string& op, pg_program_t handle,
                              const std::string& entry) const {
  if (handle == nullptr)
    internal_error("[" + op + "] " + name_ + " (plugin " + plugin_->name +
                   "): returned PG_OK but no program");
  Program p;
  p.plugin_ = plugin_;
  p.device_ = device_;
  p.program_ = handle;
  p.entry_ = entry;
  return p;
}

pg_launch_args Device::raw_args(const char* op, const LaunchArgs& args,
                                std::vector<pg_buffer_t>& handles) const {
  handles.clear();
  for (size_t i = 0; i < args.buffers.size(); ++i) {
    const Buffer* b = args.buffers[i];
    if (b == nullptr || !b->valid())
      user_error(std::string("[") + op + "] " + name_ + ": buffer slot " + std::to_string(i) +
                 " is empty");
    if (b->device_ != device_ || b->plugin_ != plugin_)
      user_error(std::string("[") + op + "] " + name_ + ": buffer slot " + std::to_string(i) +
                 " belongs to another device");
    handles.push_back(b->handle());
  }
  pg_launch_args raw{};
  raw.struct_size = sizeof(raw);
  raw.buffer_count = static_cast<uint32_t>(handles.size());
  raw.buffers = handles.data();
  raw.scalar_count = static_cast<uint32_t>(args.scalars.size());
  raw.scalars = args.scalars.data();
  raw.shared_memory_bytes = args.shared_memory_bytes;
  for (int d = 0; d < 3; ++d) {
    raw.global_size[d] = args.global_size[d];
    raw.local_size[d] = args.local_size[d];
  }
  return raw;
}

void Device::launch(const Program& program, const LaunchArgs& args) const {
  if (!program.valid()) user_error("[launch] " + name_ + ": the program is empty");
  std::vector<pg_buffer_t> handles;
  pg_launch_args raw = raw_args("launch", args, handles);
  auto op = [&] { return "launch '" + program.entry() + "'"; };
  call_plugin(*plugin_, op, name_, [&](pg_error* err) {
    return plugin_->table->loader->launch(device_, program.handle(), &raw, err);
  });
}

void Device::synchronize() const {
  call_plugin(*plugin_, "synchronize", name_,
              [&](pg_error* err) { return plugin_->table->loader->synchronize(device_, err); });
}

bool Device::concurrent_load() const {
  const pg_loader_api* l = plugin_->table->loader;
  return PG_HAS_FIELD(l, pg_loader_api, flags) && (l->flags & PG_LOADER_CONCURRENT_LOAD) != 0;
}

bool Device::has_launch_timed() const {
  const pg_loader_api* l = plugin_->table->loader;
  return PG_HAS_FIELD(l, pg_loader_api, launch_timed) && l->launch_timed != nullptr;
}

double Device::launch_timed(const Program& program, const LaunchArgs& args) const {
  if (!has_launch_timed())
    user_error("[launch_timed] " + name_ + " (plugin " + plugin_->name +
               "): the plugin cannot time launches (no launch_timed)");
  if (!program.valid()) user_error("[launch_timed] " + name_ + ": the program is empty");
  std::vector<pg_buffer_t> handles;
  pg_launch_args raw = raw_args("launch_timed", args, handles);
  double seconds = 0;
  auto op = [&] { return "launch_timed '" + program.entry() + "'"; };
  call_plugin(*plugin_, op, name_, [&](pg_error* err) {
    return plugin_->table->loader->launch_timed(device_, program.handle(), &raw, &seconds, err);
  });
  return seconds;
}

// ---------------------------------------------------------------------------------------------
// CompileTarget

CompileTarget::CompileTarget(std::shared_ptr<detail::LoadedPlugin> plugin, const pg_target& target)
    : plugin_(std::move(plugin)), target_(target) {}

const std::string& CompileTarget::plugin_name() const {
  return plugin_->name;
}

uint32_t CompileTarget::isa_version() const {
  return plugin_->isa();
}

Artifact CompileTarget::render(const pg_kernel_program& program) const {
  const std::string entry = program.name ? program.name : "?";
  const std::string where = "render '" + entry + "' for " + arch();
  if (program.isa_version > isa_version())
    user_error("[" + where + "] (plugin " + plugin_->name + "): the program is kernel ISA " +
               std::to_string(program.isa_version) + "; the plugin takes ISA " +
               std::to_string(isa_version()) + " at most");
  Artifact artifact;
  artifact.format = static_cast<pg_artifact_format>(plugin_->table->renderer->format);
  pg_byte_sink sink{&artifact.bytes, &append_bytes};
  call_plugin(*plugin_, where, plugin_->name, [&](pg_error* err) {
    return plugin_->compiler()->render(plugin_->state, &target_, &program, &sink, err);
  });
  return artifact;
}

bool CompileTarget::can_compile() const {
  const pg_compiler_api* c = plugin_->compiler();
  return c != nullptr && PG_HAS_FIELD(c, pg_compiler_api, compile) && c->compile != nullptr &&
         c->binary_format != 0;
}

Artifact CompileTarget::compile(const Artifact& rendered, const pg_kernel_program& program) const {
  const std::string entry = program.name ? program.name : "?";
  const std::string where = "compile '" + entry + "' for " + arch();
  if (!can_compile())
    user_error("[" + where + "] (plugin " + plugin_->name +
               "): the plugin does not compile without a device (no compiler->compile)");
  const sdk::ProgramInfo info(program, rendered.format);
  Artifact binary;
  binary.format = static_cast<pg_artifact_format>(plugin_->compiler()->binary_format);
  pg_byte_sink sink{&binary.bytes, &append_bytes};
  call_plugin(*plugin_, where, plugin_->name, [&](pg_error* err) {
    return plugin_->compiler()->compile(plugin_->state, &target_, rendered.bytes.data(),
                                        rendered.bytes.size(), &info.view(), &sink, err);
  });
  return binary;
}

}  // namespace polygrad
