#include <polygrad/json_writer.hpp>
#include <polygrad/load_report.hpp>

namespace polygrad {

const char* to_string(PluginSource source) noexcept {
  switch (source) {
    case PluginSource::config:
      return "config";
    case PluginSource::api:
      return "api";
    case PluginSource::env:
      return "env";
    case PluginSource::libdir:
      return "libdir";
    case PluginSource::build_tree:
      return "build tree";
    case PluginSource::linked:
      return "linked";
  }
  return "?";
}

const char* to_string(LoadStage stage) noexcept {
  switch (stage) {
    case LoadStage::open:
      return "open";
    case LoadStage::entry:
      return "entry";
    case LoadStage::table:
      return "table";
    case LoadStage::abi:
      return "abi";
    case LoadStage::slots:
      return "slots";
    case LoadStage::unique:
      return "unique";
    case LoadStage::options:
      return "options";
    case LoadStage::init:
      return "init";
    case LoadStage::devices:
      return "devices";
    case LoadStage::ready:
      return "ready";
  }
  return "?";
}

const char* to_string(LoadStatus status) noexcept {
  return status == LoadStatus::loaded ? "loaded" : "refused";
}

const char* to_string(PluginKind kind) noexcept {
  return kind == PluginKind::ccl ? "ccl" : "device";
}

std::string format_record(const LoadRecord& r) {
  std::string line = r.loaded() ? "loaded   " : "refused  ";
  line += r.path + " (" + to_string(r.source) + ")";
  if (r.kind == PluginKind::ccl) line += " ccl";
  if (!r.plugin_name.empty()) {
    line += " " + r.plugin_name;
    if (!r.plugin_version.empty()) line += " " + r.plugin_version;
  }
  if (r.abi_known)
    line += (r.kind == PluginKind::ccl ? " CCL ABI " : " ABI ") + std::to_string(r.abi_major) +
            "." + std::to_string(r.abi_minor);
  if (r.loaded() && r.kind == PluginKind::ccl) {
    line += r.device_count > 0 ? ": usable" : ": unusable: " + r.reason;
  } else if (r.loaded()) {
    line += ": " + std::to_string(r.device_count) + (r.device_count == 1 ? " device" : " devices");
    if (!r.reason.empty()) line += ": " + r.reason;
  } else {
    line += std::string(" at ") + to_string(r.stage) + ": " + r.reason;
  }
  return line;
}

std::string format_report(const LoadReport& report) {
  std::string text;
  if (!report.config_path.empty()) text += "config   " + report.config_path + "\n";
  if (!report.config_error.empty()) text += "config error: " + report.config_error + "\n";
  for (const LoadRecord& r : report.records) text += format_record(r) + "\n";
  return text;
}

void write_record_json(JsonWriter& w, const LoadRecord& r) {
  w.begin_object();
  w.key("path").value(r.path);
  w.key("source").value(to_string(r.source));
  w.key("kind").value(to_string(r.kind));
  w.key("status").value(to_string(r.status));
  w.key("stage").value(to_string(r.stage));
  w.key("plugin");
  r.plugin_name.empty() ? w.null() : w.value(r.plugin_name);
  w.key("version");
  r.plugin_version.empty() ? w.null() : w.value(r.plugin_version);
  w.key("device_prefix");
  r.device_prefix.empty() ? w.null() : w.value(r.device_prefix);
  w.key("abi");
  r.abi_known ? w.value(std::to_string(r.abi_major) + "." + std::to_string(r.abi_minor)) : w.null();
  w.key("device_count").value(r.device_count);
  w.key("reason").value(r.reason);
  w.end_object();
}

std::string report_to_json(const LoadReport& report, int indent) {
  JsonWriter w(indent);
  w.begin_object();
  w.key("config");
  report.config_path.empty() ? w.null() : w.value(report.config_path);
  w.key("config_error");
  report.config_error.empty() ? w.null() : w.value(report.config_error);
  w.key("records").begin_array();
  for (const LoadRecord& r : report.records) write_record_json(w, r);
  w.end_array();
  w.end_object();
  return w.str();
}

}  // namespace polygrad
