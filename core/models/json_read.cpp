#include "models/json_read.hpp"

#include <polygrad/error.hpp>

#include <cstdint>
#include <cstdio>
#include <string_view>
#include <unordered_set>
#include <vector>

namespace polygrad::models {

size_t utf8_error_offset(const char* text, size_t size) {
  const auto* s = reinterpret_cast<const unsigned char*>(text);
  size_t i = 0;
  while (i < size) {
    const unsigned char c = s[i];
    if (c < 0x80) {
      ++i;
      continue;
    }
    size_t n = 0;
    uint32_t cp = 0, min = 0;
    if ((c & 0xe0) == 0xc0) {
      n = 1, cp = c & 0x1f, min = 0x80;
    } else if ((c & 0xf0) == 0xe0) {
      n = 2, cp = c & 0x0f, min = 0x800;
    } else if ((c & 0xf8) == 0xf0) {
      n = 3, cp = c & 0x07, min = 0x10000;
    } else {
      return i;  // a continuation byte without a lead, or 0xf8..0xff
    }
    if (size - i <= n) return i;
    for (size_t k = 1; k <= n; ++k) {
      if ((s[i + k] & 0xc0) != 0x80) return i;
      cp = (cp << 6) | (s[i + k] & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return i;
    i += n + 1;
  }
  return size;
}

std::string quote_key(const std::string& key) {
  // (keys reach here from parsed JSON or from callers: replace what is not UTF-8)
  const std::string json = Json(key).dump(-1, ' ', false, Json::error_handler_t::replace);
  std::string quoted = json;  // "key" -> 'key'
  quoted.front() = '\'';
  quoted.back() = '\'';
  return quoted;
}

Json read_json(const char* text, size_t size, const std::string& what) {
  const size_t bad = utf8_error_offset(text, size);
  if (bad < size) {
    char byte[8];
    std::snprintf(byte, sizeof byte, "0x%02x", static_cast<unsigned char>(text[bad]));
    user_error(what + " is not UTF-8 (byte " + byte + " at offset " + std::to_string(bad) + ")");
  }
  // Each open object's keys so far: a key given twice is ambiguous (nlohmann keeps the last).
  std::vector<std::unordered_set<std::string>> keys;
  int depth = 0;
  auto check = [&](int, Json::parse_event_t event, Json& parsed) {
    switch (event) {
      case Json::parse_event_t::object_start:
      case Json::parse_event_t::array_start:
        if (++depth > kMaxJsonDepth)
          user_error(what + " nests objects and arrays more than " + std::to_string(kMaxJsonDepth) +
                     " deep");
        if (event == Json::parse_event_t::object_start) keys.emplace_back();
        break;
      case Json::parse_event_t::object_end:
      case Json::parse_event_t::array_end:
        --depth;
        if (event == Json::parse_event_t::object_end && !keys.empty()) keys.pop_back();
        break;
      case Json::parse_event_t::key:
        if (!keys.empty() && !keys.back().insert(parsed.get<std::string>()).second)
          user_error(what + " has the key " + quote_key(parsed.get<std::string>()) +
                     " twice in one object");
        break;
      case Json::parse_event_t::value:
        break;
    }
    return true;
  };
  try {
    return Json::parse(text, text + size, check);
  } catch (const Json::exception& e) {
    // "[json.exception.parse_error.101] parse error at line 1, column 3: ...": the prefix goes.
    std::string_view message = e.what();
    if (const size_t close = message.find("] "); close != std::string_view::npos)
      message.remove_prefix(close + 2);
    user_error(what + " is not valid JSON: " + std::string(message));
  }
}

}  // namespace polygrad::models
