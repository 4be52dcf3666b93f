// ABI negotiation: the entry table's version fields, required and optional slots, init with
// older, newer, minimal and foreign hosts, device enumeration, and device_properties with a
// caller struct smaller than the plugin's (canary bytes must survive).
#include <polygrad/plugin.hpp>

#include <cstring>
#include <set>

#include "suites.hpp"

namespace polygrad::conformance::detail {

namespace {

constexpr size_t kPluginV1Size = offsetof(pg_plugin, loader) + sizeof(void*);
constexpr size_t kHostV1Size = offsetof(pg_host_services, plugin_path) + sizeof(void*);

bool non_empty(const char* s) {
  return s != nullptr && s[0] != '\0';
}

std::string version(uint32_t major, uint32_t minor) {
  return std::to_string(major) + "." + std::to_string(minor);
}

void check_identity(const pg_plugin& p, Suite& suite) {
  suite.expect(p.isa_version == PG_KERNEL_ISA_VERSION, "entry.isa_version",
               "plugin renders kernel ISA " + std::to_string(p.isa_version) + ", the kit " +
                   std::to_string(PG_KERNEL_ISA_VERSION));
  suite.expect(non_empty(p.name), "entry.name", "name is NULL or empty");
  suite.expect(non_empty(p.version), "entry.version", "version is NULL or empty");
  bool prefix_ok = non_empty(p.device_prefix);
  for (const char* c = p.device_prefix; prefix_ok && *c; ++c)
    prefix_ok = (*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') || *c == '_';
  suite.expect(prefix_ok, "entry.device_prefix",
               "device_prefix must be a non-empty lowercase name (a-z, 0-9, _)");
}

void check_options(const pg_plugin& p, Suite& suite) {
  if (p.option_count == 0) {
    suite.pass("entry.options", "no options declared");
    return;
  }
  if (!suite.expect(p.options != nullptr, "entry.options", "option_count > 0 but options NULL"))
    return;
  std::set<std::string> keys;
  std::string problems;
  for (uint32_t k = 0; k < p.option_count; ++k) {
    const pg_option_desc& o = p.options[k];
    std::string key = o.key ? o.key : "";
    if (key.empty()) problems += " option " + std::to_string(k) + " has no key;";
    if (!keys.insert(key).second) problems += " key '" + key + "' declared twice;";
    if (static_cast<uint32_t>(o.type) > PG_OPTION_STRING) problems += " '" + key + "' bad type;";
    if (o.help == nullptr) problems += " '" + key + "' has no help text;";
    if (o.type == PG_OPTION_BOOL && o.default_value && std::strcmp(o.default_value, "true") &&
        std::strcmp(o.default_value, "false"))
      problems += " '" + key + "' BOOL default is not true/false;";
  }
  suite.expect(problems.empty(), "entry.options", "option schema:" + problems);
}

bool check_slots(const Session& s, Suite& suite) {
  const pg_plugin& p = s.plugin();
  std::string missing;
  auto need = [&](bool present, const char* slot) {
    if (!present) missing += std::string(missing.empty() ? "" : ", ") + slot;
  };
  need(p.init, "init");
  need(p.device_count, "device_count");
  need(p.device_open, "device_open");
  need(p.device_properties, "device_properties");
  const pg_allocator_api* a = s.allocator();
  const pg_renderer_api* r = s.renderer();
  const pg_loader_api* l = s.loader();
  need(a, "allocator");
  need(r, "renderer");
  need(l, "loader");
  if (a) {
    need(a->struct_size >= offsetof(pg_allocator_api, copy_device), "allocator.struct_size");
    need(a->alloc, "allocator.alloc");
    need(a->free, "allocator.free");
    need(a->copy_in, "allocator.copy_in");
    need(a->copy_out, "allocator.copy_out");
  }
  if (r) need(r->render, "renderer.render");
  if (l) {
    need(l->struct_size >= offsetof(pg_loader_api, launch_timed), "loader.struct_size");
    need(l->load, "loader.load");
    need(l->unload, "loader.unload");
    need(l->launch, "loader.launch");
    need(l->synchronize, "loader.synchronize");
  }
  bool ok = suite.expect(missing.empty(), "slots.required", "missing or NULL: " + missing);
  if (!ok) return false;
  uint32_t f = r->format;
  suite.expect((f >= PG_ARTIFACT_C_SOURCE && f <= PG_ARTIFACT_OBJECT) || f == PG_ARTIFACT_OTHER,
               "renderer.format", "unknown artifact format " + std::to_string(f));
  suite.expect(a->alignment > 0 && (a->alignment & (a->alignment - 1)) == 0, "allocator.alignment",
               "alignment " + std::to_string(a->alignment) + " is not a power of two");
  auto optional = [&](bool present, const char* slot, const char* effect) {
    present ? suite.pass(std::string("slots.optional.") + slot, "present")
            : suite.skip(std::string("slots.optional.") + slot,
                         std::string("absent (NULL): ") + effect);
  };
  optional(s.has_copy_device(), "copy_device", "device-to-device copy checks skipped");
  optional(s.has_host_pointer(), "host_pointer", "alignment checks skipped");
  optional(s.has_launch_timed(), "launch_timed", "not exercised");
  optional(s.has_shutdown(), "shutdown", "states are never released");
  return true;
}

/// Initialise a fresh state with a host of `shape`, expecting `want` (PG_OK or an error).
void check_init(const Session& s, Suite& suite, const std::string& check, const HostShape& shape,
                int want) {
  const pg_plugin& p = s.plugin();
  pg_plugin_state_t state = nullptr;
  const pg_host_services* host = make_host_services(shape, s.path());
  CallResult r = guarded([&](pg_error* e) { return p.init(host, &state, e); });
  if (want != PG_OK) {
    expect_error(suite, check, r, want);
    if (r.ok() && p.shutdown) p.shutdown(state);
    return;
  }
  if (!expect_ok(suite, check, r)) return;
  uint32_t count = 0;
  CallResult c = guarded([&](pg_error* e) { return p.device_count(state, &count, e); });
  if (!c.ok()) suite.fail(check + ".device_count", c.describe());
  if (p.shutdown) p.shutdown(state);
}

void check_init_variants(const Session& s, Suite& suite) {
  HostShape current;
  current.options = s.options();
  check_init(s, suite, "init.current_host", current, PG_OK);
  if (PG_PLUGIN_ABI_MINOR == 0) {
    suite.skip("init.older_host_minor", "the SDK is at minor 0: there is no older host");
  } else {
    HostShape older;
    older.options = s.options();
    older.abi_minor = PG_PLUGIN_ABI_MINOR - 1;
    older.struct_size = kHostV1Size;
    check_init(s, suite, "init.older_host_minor", older, PG_OK);
  }
  HostShape newer;
  newer.options = s.options();
  newer.abi_minor = PG_PLUGIN_ABI_MINOR + 1;
  newer.struct_size = sizeof(pg_host_services) + 48;  // fields this plugin cannot know
  check_init(s, suite, "init.newer_host_minor", newer, PG_OK);
  HostShape bare;
  bare.options = s.options();
  bare.optional_services = false;
  check_init(s, suite, "init.null_optional_services", bare, PG_OK);
  HostShape foreign;
  foreign.options = s.options();
  foreign.abi_major = PG_PLUGIN_ABI_MAJOR + 1;
  check_init(s, suite, "init.other_major_refused", foreign, PG_ERR_VERSION);
}

void check_devices(const Session& s, Suite& suite) {
  const pg_plugin& p = s.plugin();
  pg_device_t again = nullptr;
  CallResult r = guarded([&](pg_error* e) { return p.device_open(s.state(), 0, &again, e); });
  suite.expect(r.ok() && again == s.device(), "device_open.same_handle",
               "opening device 0 twice gave different handles (" + r.describe() + ")");
  for (uint32_t index : {s.device_count(), uint32_t{0xffffffffu}}) {
    pg_device_t d = nullptr;
    r = guarded([&](pg_error* e) { return p.device_open(s.state(), index, &d, e); });
    expect_error(suite, "device_open.out_of_range_" + std::to_string(index), r);
  }
  const pg_device_properties& props = s.properties();
  const pg_capabilities& caps = props.caps;
  suite.expect(props.name[0] != '\0', "properties.name", "device name is empty");
  uint64_t known = (uint64_t{1} << PG_DTYPE_COUNT) - 1;
  suite.expect(caps.dtype_mask != 0 && (caps.dtype_mask & ~known) == 0 && !(caps.dtype_mask & 1),
               "properties.dtype_mask",
               "dtype_mask must be non-empty, without VOID and without unknown dtypes");
  suite.expect(caps.max_vector_lanes >= 1 && caps.max_threads_per_group >= 1, "properties.limits",
               "max_vector_lanes and max_threads_per_group must be >= 1");
  bool dims = true;
  for (int d = 0; d < 3; ++d)
    dims = dims && caps.max_global_dims[d] >= 1 && caps.max_local_dims[d] >= 1;
  suite.expect(dims, "properties.dims", "max_global_dims and max_local_dims must be >= 1");
  // What every kernel of the host needs (docs/plugin-sdk.md, "What a plugin must support").
  std::string lacking;
  for (pg_dtype dt : {PG_DTYPE_BOOL, PG_DTYPE_INT32, PG_DTYPE_INT64})
    if (!(caps.dtype_mask & (uint64_t{1} << dt)))
      lacking += std::string(lacking.empty() ? "" : ", ") + sdk::dtype_name(dt);
  suite.expect(lacking.empty(), "properties.required_dtypes",
               "the device lacks " + lacking +
                   ": the host's kernels compute indices, loop counters and sizes in int64, "
                   "launch indices (SPECIAL) in int32 and comparisons and gates in bool, so "
                   "every plugin must declare and run all three");
  const uint32_t known_flags = PG_CAP_DECOMPOSE_TRANSCENDENTAL | PG_CAP_LOCAL_MEMORY |
                               PG_CAP_GROUPS | PG_CAP_HOST_MEMORY | PG_CAP_ALIGNED_VECTORS |
                               PG_CAP_ATOMIC_ADD | PG_CAP_ASYNC | PG_CAP_EXPLICIT_SIMD;
  suite.expect((caps.flags & ~known_flags) == 0, "properties.flags",
               "unknown capability flags " + std::to_string(caps.flags));
  // ABI 1.3 fields (zero from an older plugin, which the kit's full-size struct receives).
  suite.expect(caps.index_bits == 0 || caps.index_bits == 32 || caps.index_bits == 64,
               "properties.index_bits", "index_bits must be 0, 32 or 64");
  bool cores = caps.tensor_core_count <= PG_MAX_TENSOR_CORES;
  for (uint32_t t = 0; cores && t < caps.tensor_core_count; ++t) {
    const pg_tensor_core& tc = caps.tensor_cores[t];
    const uint32_t threads = tc.threads ? tc.threads : 1;
    cores = tc.m && tc.n && tc.k && (uint32_t{tc.m} * tc.k) % threads == 0 &&
            (uint32_t{tc.k} * tc.n) % threads == 0 && (uint32_t{tc.m} * tc.n) % threads == 0 &&
            ((caps.dtype_mask >> tc.dtype_c) & 1u);
  }
  suite.expect(cores, "properties.tensor_cores",
               "at most PG_MAX_TENSOR_CORES shapes, each with m, n, k > 0 whose fragments "
               "divide among its threads, accumulating in a declared dtype");
  suite.expect(!(caps.flags & PG_CAP_ASYNC) || s.has_async(), "properties.async",
               "PG_CAP_ASYNC is declared but pg_plugin.async is missing or incomplete");
  suite.expect(props.struct_size == sizeof props && caps.struct_size == sizeof caps,
               "properties.struct_size_kept", "the plugin changed the caller's struct_size");

  // A caller built against an older, smaller struct: nothing past its struct_size may change.
  for (uint32_t size : {uint32_t{offsetof(pg_device_properties, caps)}, uint32_t{8},
                        uint32_t{sizeof(pg_device_properties)}}) {
    unsigned char buffer[sizeof(pg_device_properties) + 64];
    std::memset(buffer, 0xcd, sizeof buffer);
    pg_device_properties header{};
    header.struct_size = size;
    std::memcpy(buffer, &header, sizeof header.struct_size);
    if (size >= sizeof(pg_device_properties)) {
      uint32_t caps_size = sizeof(pg_capabilities);
      std::memcpy(buffer + offsetof(pg_device_properties, caps), &caps_size, sizeof caps_size);
    }
    auto* out = reinterpret_cast<pg_device_properties*>(buffer);
    r = guarded([&](pg_error* e) { return p.device_properties(s.device(), out, e); });
    size_t changed = sizeof buffer;
    for (size_t k = size; k < sizeof buffer; ++k)
      if (buffer[k] != 0xcd) {
        changed = k;
        break;
      }
    std::string check = "properties.canary_struct_size_" + std::to_string(size);
    if (r.threw || (!r.ok() && r.status != PG_ERR_INVALID_ARGUMENT))
      suite.fail(check, "returned " + r.describe());
    else
      suite.expect(changed == sizeof buffer, check,
                   "wrote byte " + std::to_string(changed) + " past the caller's struct_size " +
                       std::to_string(size));
  }
}

}  // namespace

AbiVerdict run_abi_suite(Session& s, Report& report, std::string& why) {
  Suite& suite = report.suite("abi");
  const pg_plugin& p = s.plugin();
  // The version fields come first and are read before anything else.
  if (!suite.expect(p.abi_major == PG_PLUGIN_ABI_MAJOR, "entry.abi_major",
                    "plugin speaks ABI " + version(p.abi_major, p.abi_minor) + ", the kit " +
                        version(PG_PLUGIN_ABI_MAJOR, PG_PLUGIN_ABI_MINOR))) {
    why = "ABI major mismatch: plugin " + version(p.abi_major, p.abi_minor) + ", kit " +
          version(PG_PLUGIN_ABI_MAJOR, PG_PLUGIN_ABI_MINOR);
    return AbiVerdict::fatal;
  }
  if (!suite.expect(p.abi_minor <= PG_PLUGIN_ABI_MINOR, "entry.abi_minor",
                    "plugin ABI " + version(p.abi_major, p.abi_minor) +
                        " is newer than the kit's " +
                        version(PG_PLUGIN_ABI_MAJOR, PG_PLUGIN_ABI_MINOR))) {
    why = "plugin ABI minor is newer than the kit's";
    return AbiVerdict::fatal;
  }
  bool size_ok = p.abi_minor == PG_PLUGIN_ABI_MINOR
                     ? p.struct_size == sizeof(pg_plugin)
                     : p.struct_size >= kPluginV1Size && p.struct_size <= sizeof(pg_plugin);
  if (!suite.expect(size_ok, "entry.struct_size",
                    "struct_size " + std::to_string(p.struct_size) + " does not match ABI " +
                        version(p.abi_major, p.abi_minor) + " (" +
                        std::to_string(sizeof(pg_plugin)) + " bytes at the kit's minor)")) {
    why = "bad pg_plugin.struct_size";
    return AbiVerdict::fatal;
  }
  check_identity(p, suite);
  check_options(p, suite);
  if (!check_slots(s, suite)) {
    why = "required table slots are missing";
    return AbiVerdict::fatal;
  }
  check_init_variants(s, suite);
  if (!s.open_device(why)) {
    if (why.rfind("no devices", 0) == 0) {
      suite.skip("devices", why + "; allocator, op and error suites need a device");
      return AbiVerdict::no_devices;
    }
    suite.fail("devices", why);
    return AbiVerdict::fatal;
  }
  suite.pass("devices", std::to_string(s.device_count()) + " device(s)");
  check_devices(s, suite);
  return AbiVerdict::proceed;
}

void expect_error(Suite& suite, const std::string& check, const CallResult& r, int want) {
  if (r.threw)
    suite.fail(check, "a C++ exception crossed the plugin boundary");
  else if (r.status == PG_OK)
    suite.fail(check, "returned PG_OK, expected " +
                          (want >= 0 ? status_name(want) : std::string("an error")));
  else if (r.status < 0 || r.status > PG_ERR_INTERNAL)
    suite.fail(check, "returned " + status_name(r.status));
  else if (want >= 0 && r.status != want)
    suite.fail(check, "returned " + r.describe() + ", expected " + status_name(want));
  else if (r.message.empty())
    suite.fail(check, "returned " + status_name(r.status) + " without a message");
  else
    suite.pass(check, r.describe());
}

bool expect_ok(Suite& suite, const std::string& check, const CallResult& r) {
  return suite.expect(r.ok(), check, r.describe());
}

}  // namespace polygrad::conformance::detail
