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

namespace {

// A first pass over the text (nlohmann's SAX interface, no values built): refuses a key given
// twice in one object (nlohmann would keep the last) and nesting past kMaxJsonDepth, and
// records key order. (A parse callback would do the same in one pass, but nlohmann's callback
// parser rescans the parent object at each object's end: quadratic for a header of many
// tensors.)
class KeyOrderPass {
 public:
  KeyOrderPass(JsonDocument& doc, const std::string& what) : doc_(doc), what_(what) {}

  bool null() { return true; }
  bool boolean(bool) { return true; }
  bool number_integer(Json::number_integer_t) { return true; }
  bool number_unsigned(Json::number_unsigned_t) { return true; }
  bool number_float(Json::number_float_t, const Json::string_t&) { return true; }
  bool string(Json::string_t&) { return true; }
  bool binary(Json::binary_t&) { return true; }
  bool start_object(size_t) { return open(true); }
  bool start_array(size_t) { return open(false); }
  bool end_object() { return close(); }
  bool end_array() { return close(); }
  bool key(Json::string_t& key) {
    Frame& top = open_.back();
    if (!top.keys.insert(key).second)
      user_error(what_ + " has the key " + quote_key(key) + " twice in one object");
    if (open_.size() == 1) doc_.keys.push_back(key);
    if (open_.size() == 2 && open_[0].object) doc_.member_keys[open_[0].last_key].push_back(key);
    top.last_key = key;
    return true;
  }
  bool parse_error(size_t, const std::string&, const nlohmann::detail::exception& e) {
    // "[json.exception.parse_error.101] parse error at line 1, column 3: ...": the prefix goes.
    std::string_view message = e.what();
    if (const size_t close = message.find("] "); close != std::string_view::npos)
      message.remove_prefix(close + 2);
    user_error(what_ + " is not valid JSON: " + std::string(message));
  }

 private:
  struct Frame {
    bool object;
    std::unordered_set<std::string> keys;
    std::string last_key;
  };
  bool open(bool object) {
    if (open_.size() >= static_cast<size_t>(kMaxJsonDepth))
      user_error(what_ + " nests objects and arrays more than " + std::to_string(kMaxJsonDepth) +
                 " deep");
    open_.push_back(Frame{object, {}, {}});
    return true;
  }
  bool close() {
    open_.pop_back();
    return true;
  }

  JsonDocument& doc_;
  const std::string& what_;
  std::vector<Frame> open_;
};

}  // namespace

JsonDocument read_json(const char* text, size_t size, const std::string& what) {
  const size_t bad = utf8_error_offset(text, size);
  if (bad < size) {
    char byte[8];
    std::snprintf(byte, sizeof byte, "0x%02x", static_cast<unsigned char>(text[bad]));
    user_error(what + " is not UTF-8 (byte " + byte + " at offset " + std::to_string(bad) + ")");
  }
  JsonDocument doc;
  KeyOrderPass pass(doc, what);
  Json::sax_parse(text, text + size, &pass);
  try {
    doc.root = Json::parse(text, text + size);
  } catch (const Json::exception& e) {
    internal_error(what + ": JSON the first pass accepted failed to parse: " + e.what());
  }
  return doc;
}

}  // namespace polygrad::models
