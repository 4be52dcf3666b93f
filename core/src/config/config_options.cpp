// Checking config device entries against the option schemas the loaded plugins declare.
#include <polygrad/config.hpp>
#include <polygrad/error.hpp>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace polygrad {

namespace {

const char* option_type_name(pg_option_type type) {
  switch (type) {
    case PG_OPTION_BOOL:
      return "a boolean (true or false)";
    case PG_OPTION_INT:
      return "an integer";
    case PG_OPTION_FLOAT:
      return "a number";
    case PG_OPTION_STRING:
      return "a string";
  }
  return "?";
}

std::optional<bool> parse_bool(const std::string& s) {
  std::string v = s;
  std::transform(v.begin(), v.end(), v.begin(), [](unsigned char c) { return std::tolower(c); });
  if (v == "true" || v == "yes" || v == "on") return true;
  if (v == "false" || v == "no" || v == "off") return false;
  return std::nullopt;
}

std::optional<long long> parse_int(const std::string& s) {
  long long value = 0;
  const char* begin = s.data();
  const char* end = s.data() + s.size();
  if (begin != end && *begin == '+') ++begin;
  auto [ptr, ec] = std::from_chars(begin, end, value);
  if (ec != std::errc() || ptr != end || begin == end) return std::nullopt;
  return value;
}

std::optional<double> parse_float(const std::string& s) {
  if (s.empty()) return std::nullopt;
  char* end = nullptr;
  double value = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size() || !std::isfinite(value)) return std::nullopt;
  return value;
}

std::string number_text(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.17g", v);
  return buf;
}

std::string range_text(const pg_option_desc& d) {
  std::string text = "[";
  text += number_text(d.min_value);
  text += ", ";
  text += number_text(d.max_value);
  text += "]";
  return text;
}

}  // namespace

PluginOptions Config::options_for(const std::string& prefix, const pg_option_desc* schema,
                                  uint32_t schema_count) const {
  PluginOptions out;
  for (const DeviceConfig& device : devices_) {
    if (device.prefix != prefix) continue;
    for (const ConfigOption& option : device.options) {
      const std::string key = "devices." + device.name + "." + option.key;
      const pg_option_desc* desc = nullptr;
      std::string known;
      for (uint32_t i = 0; i < schema_count; ++i) {
        if (schema[i].key == nullptr) continue;
        if (option.key == schema[i].key) desc = &schema[i];
        if (!known.empty()) known += ", ";
        known += schema[i].key;
      }
      if (desc == nullptr)
        user_error(message(option.line, key,
                           "unknown option for device '" + prefix +
                               "' (known: " + (known.empty() ? std::string("none") : known) + ")"));
      auto wrong = [&] {
        user_error(message(option.line, key,
                           std::string("expected ") + option_type_name(desc->type) + ", got " +
                               (option.scalar ? "'" + option.value + "'" : option.value)));
      };
      if (!option.scalar) wrong();
      const bool bounded = desc->min_value <= desc->max_value;
      std::string value;
      switch (desc->type) {
        case PG_OPTION_BOOL: {
          auto b = parse_bool(option.value);
          if (!b) wrong();
          value = *b ? "true" : "false";
          break;
        }
        case PG_OPTION_INT: {
          auto v = parse_int(option.value);
          if (!v) wrong();
          if (bounded && (static_cast<double>(*v) < desc->min_value ||
                          static_cast<double>(*v) > desc->max_value))
            user_error(
                message(option.line, key, option.value + " is out of range " + range_text(*desc)));
          value = std::to_string(*v);
          break;
        }
        case PG_OPTION_FLOAT: {
          auto v = parse_float(option.value);
          if (!v) wrong();
          if (bounded && (*v < desc->min_value || *v > desc->max_value))
            user_error(
                message(option.line, key, option.value + " is out of range " + range_text(*desc)));
          value = option.value;
          break;
        }
        case PG_OPTION_STRING:
          value = option.value;
          break;
        default:
          internal_error("plugin for '" + prefix + "' declares option '" + option.key +
                         "' with unknown type " + std::to_string(desc->type));
      }
      out[{device.index, option.key}] = value;
    }
  }
  return out;
}

void Config::check_devices_known(const std::vector<std::string>& served) const {
  std::string list;
  for (const std::string& p : served) {
    if (!list.empty()) list += ", ";
    list += p;
  }
  if (list.empty()) list = "none";
  auto is_served = [&](const std::string& prefix) {
    return std::find(served.begin(), served.end(), prefix) != served.end();
  };
  for (const DeviceConfig& device : devices_)
    if (!is_served(device.prefix))
      user_error(message(device.line, "devices." + device.name,
                         "unknown device: no loaded plugin serves '" + device.prefix +
                             "' (served: " + list + ")"));
  if (default_device_) {
    auto parsed = parse_device_name(*default_device_);
    if (parsed && !is_served(parsed->first))
      user_error(message(default_device_line_, "default_device",
                         "unknown device '" + *default_device_ + "': no loaded plugin serves '" +
                             parsed->first + "' (served: " + list + ")"));
  }
}

}  // namespace polygrad
