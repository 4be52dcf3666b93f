// polygrad devices [--verbose] [--json]
#include <polygrad/plugin.hpp>
#include <polygrad/registry.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <sstream>

#include "cli.hpp"
#include "command.hpp"

namespace polygrad::cli {

namespace {

struct DeviceRow {
  std::string name;
  std::string plugin;
  bool ok = false;
  DeviceProperties props;
  std::string error;
};

std::vector<DeviceRow> collect_devices(Registry& registry) {
  std::vector<DeviceRow> rows;
  for (const std::string& name : registry.device_names()) {
    DeviceRow row;
    row.name = name;
    try {
      Device device = registry.device(name);
      row.plugin = device.plugin_name();
      row.props = device.properties();
      row.ok = true;
    } catch (const Error& e) {
      row.error = e.what();
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

std::string memory_text(uint64_t bytes) {
  if (bytes == 0) return "unknown";
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.1f GiB", static_cast<double>(bytes) / (1ull << 30));
  return buf;
}

std::string cache_text(uint64_t bytes) {
  if (bytes == 0) return "unknown";
  return std::to_string(bytes >> 10) + " KiB";
}

const char* option_type_text(pg_option_type type) {
  switch (type) {
    case PG_OPTION_BOOL:
      return "boolean";
    case PG_OPTION_INT:
      return "integer";
    case PG_OPTION_FLOAT:
      return "number";
    case PG_OPTION_STRING:
      return "string";
  }
  return "?";
}

using Json = nlohmann::ordered_json;

Json options_json(const std::vector<PluginOptionInfo>& options) {
  Json list = Json::array();
  for (const PluginOptionInfo& o : options) {
    Json j = Json::object();
    j["key"] = o.key;
    j["type"] = option_type_text(o.type);
    j["default"] = o.default_value;
    j["help"] = o.help;
    // Bounded: the inclusive range the config check enforces (a non-finite bound is null).
    if (o.min_value <= o.max_value) {
      j["min"] = o.min_value;
      j["max"] = o.max_value;
    }
    list.push_back(std::move(j));
  }
  return list;
}

std::vector<std::string> flag_names(uint32_t flags) {
  std::vector<std::string> names;
  if (flags & PG_CAP_DECOMPOSE_TRANSCENDENTAL) names.push_back("decompose_transcendental");
  if (flags & PG_CAP_LOCAL_MEMORY) names.push_back("local_memory");
  if (flags & PG_CAP_GROUPS) names.push_back("groups");
  if (flags & PG_CAP_HOST_MEMORY) names.push_back("host_memory");
  if (flags & PG_CAP_ALIGNED_VECTORS) names.push_back("aligned_vectors");
  if (flags & PG_CAP_ATOMIC_ADD) names.push_back("atomic_add");
  if (flags & PG_CAP_ASYNC) names.push_back("async");
  return names;
}

std::string dims_text(const uint32_t (&dims)[3]) {
  return std::to_string(dims[0]) + " x " + std::to_string(dims[1]) + " x " +
         std::to_string(dims[2]);
}

/// The capability flags and group limits codegen plans with (`--verbose`).
void print_capabilities(std::ostream& out, const pg_capabilities& c) {
  std::string flags;
  for (const std::string& f : flag_names(c.flags)) flags += (flags.empty() ? "" : ", ") + f;
  out << "    capabilities: " << (flags.empty() ? "(no flags)" : flags) << "\n"
      << "    groups: max " << c.max_threads_per_group << " threads per group, local dims "
      << dims_text(c.max_local_dims) << ", global dims " << dims_text(c.max_global_dims)
      << ", local memory " << c.local_memory_bytes << " bytes\n"
      << "    subgroup size " << std::max<uint32_t>(1, c.subgroup_size) << ", index bits "
      << (c.index_bits == 32 ? 32 : 64) << ", largest allocation "
      << (c.max_allocation_bytes ? memory_text(c.max_allocation_bytes) : std::string("unknown"))
      << "\n";
  for (uint32_t t = 0; t < c.tensor_core_count && t < PG_MAX_TENSOR_CORES; ++t) {
    const pg_tensor_core& tc = c.tensor_cores[t];
    out << "    tensor core " << t << ": " << tc.m << "x" << tc.n << "x" << tc.k << ", "
        << polygrad::sdk::dtype_name(tc.dtype_a) << " x " << polygrad::sdk::dtype_name(tc.dtype_b)
        << " -> " << polygrad::sdk::dtype_name(tc.dtype_c) << ", " << tc.threads << " threads\n";
  }
}

void print_text(std::ostream& out, const std::vector<PluginInfo>& plugins,
                const std::vector<DeviceRow>& devices, const std::string& default_device,
                bool verbose) {
  out << "polygrad host ABI " << PG_PLUGIN_ABI_MAJOR << "." << PG_PLUGIN_ABI_MINOR
      << ", default device " << default_device << "\n";
  out << "plugins:\n";
  if (plugins.empty()) out << "  (none loaded; --verbose shows every candidate)\n";
  for (const PluginInfo& p : plugins) {
    out << "  " << p.name << " " << p.version << "  ABI " << p.abi_major << "." << p.abi_minor
        << "  ISA " << p.isa_version << (p.has_compiler ? "  compile-only" : "")
        << (p.has_async ? "  async" : "") << "  devices " << p.device_prefix << " x"
        << p.device_count << "  " << p.path << "\n";
    if (p.device_count == 0) out << "    no devices: " << p.no_device_reason << "\n";
  }
  out << "devices:\n";
  if (devices.empty()) out << "  (none)\n";
  for (const DeviceRow& d : devices) {
    if (!d.ok) {
      out << "  " << d.name << "  error: " << d.error << "\n";
      continue;
    }
    const pg_capabilities& c = d.props.caps;
    out << "  " << d.name << "  " << d.props.name << "  (" << d.plugin << ")\n"
        << "    target " << d.props.target << ", compute units " << c.compute_units
        << ", vector width " << c.vector_width_bytes << " bytes (max " << c.max_vector_lanes
        << " lanes), memory " << memory_text(d.props.memory_bytes) << "\n"
        << "    caches L1 " << cache_text(c.l1_cache_bytes) << ", L2 "
        << cache_text(c.l2_cache_bytes) << " per compute unit\n"
        << "    dtypes";
    for (const std::string& t : d.props.dtype_names()) out << " " << t;
    out << "\n";
    if (verbose) print_capabilities(out, c);
  }
}

void print_json(std::ostream& out, const std::vector<PluginInfo>& plugins,
                const std::vector<DeviceRow>& devices, const std::string& default_device,
                const LoadReport& report) {
  Json j = Json::object();
  j["host_abi"] = std::to_string(PG_PLUGIN_ABI_MAJOR) + "." + std::to_string(PG_PLUGIN_ABI_MINOR);
  j["default_device"] = default_device;
  j["config"] = report.config_path.empty() ? Json(nullptr) : Json(report.config_path);
  j["plugins"] = Json::array();
  for (const PluginInfo& p : plugins) {
    Json pj = Json::object();
    pj["name"] = p.name;
    pj["version"] = p.version;
    pj["abi"] = std::to_string(p.abi_major) + "." + std::to_string(p.abi_minor);
    pj["isa_version"] = p.isa_version;
    pj["compile_only"] = p.has_compiler;
    pj["async"] = p.has_async;
    pj["path"] = p.path;
    pj["device_prefix"] = p.device_prefix;
    pj["device_count"] = p.device_count;
    pj["no_device_reason"] = p.no_device_reason;
    pj["options"] = options_json(p.options);
    j["plugins"].push_back(std::move(pj));
  }
  j["devices"] = Json::array();
  for (const DeviceRow& d : devices) {
    Json dj = Json::object();
    dj["name"] = d.name;
    dj["plugin"] = d.plugin;
    if (!d.ok) {
      dj["error"] = d.error;
      j["devices"].push_back(std::move(dj));
      continue;
    }
    const pg_capabilities& c = d.props.caps;
    dj["description"] = d.props.name;
    dj["target"] = d.props.target;
    dj["compute_units"] = c.compute_units;
    dj["vector_width_bytes"] = c.vector_width_bytes;
    dj["max_vector_lanes"] = c.max_vector_lanes;
    dj["max_threads_per_group"] = c.max_threads_per_group;
    dj["max_local_dims"] = c.max_local_dims;
    dj["max_global_dims"] = c.max_global_dims;
    dj["local_memory_bytes"] = static_cast<unsigned long long>(c.local_memory_bytes);
    dj["l1_cache_bytes"] = static_cast<unsigned long long>(c.l1_cache_bytes);
    dj["l2_cache_bytes"] = static_cast<unsigned long long>(c.l2_cache_bytes);
    dj["subgroup_size"] = std::max<uint32_t>(1, c.subgroup_size);
    dj["index_bits"] = c.index_bits == 32 ? 32u : 64u;
    dj["max_allocation_bytes"] = static_cast<unsigned long long>(c.max_allocation_bytes);
    dj["tensor_cores"] = Json::array();
    for (uint32_t t = 0; t < c.tensor_core_count && t < PG_MAX_TENSOR_CORES; ++t) {
      const pg_tensor_core& tc = c.tensor_cores[t];
      Json tj = Json::object();
      tj["m"] = uint32_t{tc.m};
      tj["n"] = uint32_t{tc.n};
      tj["k"] = uint32_t{tc.k};
      tj["threads"] = uint32_t{tc.threads};
      tj["a"] = polygrad::sdk::dtype_name(tc.dtype_a);
      tj["b"] = polygrad::sdk::dtype_name(tc.dtype_b);
      tj["c"] = polygrad::sdk::dtype_name(tc.dtype_c);
      dj["tensor_cores"].push_back(std::move(tj));
    }
    dj["memory_bytes"] = static_cast<unsigned long long>(d.props.memory_bytes);
    dj["dtypes"] = d.props.dtype_names();
    dj["capabilities"] = flag_names(c.flags);
    j["devices"].push_back(std::move(dj));
  }
  // The library's rendering of the load report, so the CLI and pg_plugin_report agree.
  j["report"] = Json::parse(report_to_json(report, 0))["records"];
  out << j.dump(2, ' ', false, Json::error_handler_t::replace) << "\n";
}

}  // namespace

int run_devices(const std::vector<std::string>& args) {
  const std::string usage =
      "usage: polygrad devices [--verbose] [--json]\n"
      "List the loaded plugins and every device they serve.\n";
  Command command("devices", usage);
  command.flags()("verbose,v",
                  "add each device's capability flags and group limits, and the load report: one "
                  "line per plugin candidate, refused ones included")(
      "json", "print one JSON object (always includes the load report)");
  if (auto done = command.parse(args)) return *done;
  const bool verbose = command.has("verbose"), json = command.has("json");

  Registry& registry = Registry::global();
  LoadReport report = registry.report();
  if (!report.config_error.empty()) {
    if (verbose && !json) std::cout << "load report:\n" << format_report(report);
    std::cerr << "polygrad devices: config error: " << report.config_error << "\n";
    return kFailed;
  }
  std::vector<PluginInfo> plugins = registry.plugins();
  std::vector<DeviceRow> devices = collect_devices(registry);
  std::string default_device = registry.default_device_name();
  if (json) {
    print_json(std::cout, plugins, devices, default_device, report);
    return kOk;
  }
  print_text(std::cout, plugins, devices, default_device, verbose);
  if (verbose) {
    std::cout << "load report:\n";
    std::istringstream lines(format_report(report));
    for (std::string line; std::getline(lines, line);) std::cout << "  " << line << "\n";
  }
  return kOk;
}

}  // namespace polygrad::cli
