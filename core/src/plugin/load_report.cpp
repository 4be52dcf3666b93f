#include <polygrad/load_report.hpp>

#include <nlohmann/json.hpp>

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

namespace {

using Json = nlohmann::ordered_json;

// A string member, or null when it is empty.
Json text_or_null(const std::string& s) {
  return s.empty() ? Json(nullptr) : Json(s);
}

Json record_json(const LoadRecord& r) {
  Json j = Json::object();
  j["path"] = r.path;
  j["source"] = to_string(r.source);
  j["kind"] = to_string(r.kind);
  j["status"] = to_string(r.status);
  j["stage"] = to_string(r.stage);
  j["plugin"] = text_or_null(r.plugin_name);
  j["version"] = text_or_null(r.plugin_version);
  j["device_prefix"] = text_or_null(r.device_prefix);
  j["abi"] = r.abi_known ? Json(std::to_string(r.abi_major) + "." + std::to_string(r.abi_minor))
                         : Json(nullptr);
  j["device_count"] = r.device_count;
  j["reason"] = r.reason;
  return j;
}

}  // namespace

std::string report_to_json(const LoadReport& report, int indent) {
  Json j = Json::object();
  j["config"] = text_or_null(report.config_path);
  j["config_error"] = text_or_null(report.config_error);
  j["records"] = Json::array();
  for (const LoadRecord& r : report.records) j["records"].push_back(record_json(r));
  // Bytes that are not UTF-8 (a path, a dlerror text) become U+FFFD instead of an exception.
  return j.dump(indent > 0 ? indent : -1, ' ', false, Json::error_handler_t::replace);
}

}  // namespace polygrad
