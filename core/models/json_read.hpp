// Reading JSON files of checkpoints (a safetensors header, model.safetensors.index.json,
// config.json) with nlohmann-json, strictly: UTF-8 checked first, duplicate keys and deep
// nesting refused. Internal to the core: nlohmann stays out of the public headers.
#ifndef POLYGRAD_MODELS_JSON_READ_HPP
#define POLYGRAD_MODELS_JSON_READ_HPP

#include <nlohmann/json.hpp>

#include <cstddef>
#include <map>
#include <string>
#include <vector>

namespace polygrad::models {

/// A parsed value. Objects are sorted maps (nlohmann::ordered_json would look up each new key
/// linearly: a header of many keys took minutes); JsonDocument keeps the file's key order.
using Json = nlohmann::json;

/// A parsed file, with the order of the keys of its top-level object and of that object's
/// members that are objects.
struct JsonDocument {
  Json root;
  std::vector<std::string> keys;                                ///< root's, in file order
  std::map<std::string, std::vector<std::string>> member_keys;  ///< root[k]'s, in file order
};

/// The most containers nested in one another that read_json accepts.
inline constexpr int kMaxJsonDepth = 64;

/// Parses `size` bytes of JSON text. `what` names the text in messages ("/m/x.safetensors:
/// the header"); user errors: bytes that are not UTF-8 (with the offset of the first),
/// invalid JSON (nlohmann's line and column), a key twice in one object, nesting deeper than
/// kMaxJsonDepth.
JsonDocument read_json(const char* text, size_t size, const std::string& what);

/// The offset of the first byte of `text` that is not part of well-formed UTF-8 (overlong
/// forms, surrogates and code points past U+10FFFF included), or `size` when all of it is.
size_t utf8_error_offset(const char* text, size_t size);

/// `key` quoted for a message: 'name', with control characters escaped.
std::string quote_key(const std::string& key);

}  // namespace polygrad::models

#endif  // POLYGRAD_MODELS_JSON_READ_HPP
