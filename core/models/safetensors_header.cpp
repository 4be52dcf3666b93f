#include "models/safetensors_header.hpp"

#include "models/json_read.hpp"

#include <polygrad/error.hpp>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>

namespace polygrad::models {

static_assert(std::endian::native == std::endian::little,
              "safetensors data is little-endian; this host reads it as stored");

namespace {

struct DtypeInfo {
  const char* name;
  pg_dtype dtype;
  uint64_t size;
};

// Every dtype of the format; polygrad has no 8-bit floats (listed, not loadable).
constexpr DtypeInfo kDtypes[] = {
    {"BOOL", PG_DTYPE_BOOL, 1},    {"U8", PG_DTYPE_UINT8, 1},     {"I8", PG_DTYPE_INT8, 1},
    {"F8_E5M2", PG_DTYPE_VOID, 1}, {"F8_E4M3", PG_DTYPE_VOID, 1}, {"I16", PG_DTYPE_INT16, 2},
    {"U16", PG_DTYPE_UINT16, 2},   {"F16", PG_DTYPE_FLOAT16, 2},  {"BF16", PG_DTYPE_BFLOAT16, 2},
    {"I32", PG_DTYPE_INT32, 4},    {"U32", PG_DTYPE_UINT32, 4},   {"F32", PG_DTYPE_FLOAT32, 4},
    {"F64", PG_DTYPE_FLOAT64, 8},  {"I64", PG_DTYPE_INT64, 8},    {"U64", PG_DTYPE_UINT64, 8},
};

const DtypeInfo* find_dtype(const std::string& name) {
  for (const DtypeInfo& d : kDtypes)
    if (name == d.name) return &d;
  return nullptr;
}

std::string known_dtypes() {
  std::string list;
  for (const DtypeInfo& d : kDtypes) list += (list.empty() ? "" : ", ") + std::string(d.name);
  return list;
}

// A non-negative JSON integer, or nullopt (negative, fractional, not a number).
std::optional<uint64_t> unsigned_of(const Json& v) {
  if (!v.is_number_unsigned()) return std::nullopt;
  return v.get<uint64_t>();
}

SafetensorsEntry parse_entry(const std::string& name, const Json& info, const std::string& at) {
  SafetensorsEntry e;
  e.name = name;
  if (!info.is_object()) user_error(at + " is not an object: " + info.dump().substr(0, 80));
  for (const char* field : {"dtype", "shape", "data_offsets"})
    if (!info.contains(field)) user_error(at + " has no \"" + field + "\"");
  const Json& dtype = info["dtype"];
  if (!dtype.is_string()) user_error(at + ": \"dtype\" is not a string");
  e.dtype_name = dtype.get<std::string>();
  const DtypeInfo* d = find_dtype(e.dtype_name);
  if (d == nullptr)
    user_error(at + " has the unknown dtype " + quote_key(e.dtype_name) +
               " (known: " + known_dtypes() + ")");
  e.dtype = d->dtype;

  const Json& shape = info["shape"];
  if (!shape.is_array()) user_error(at + ": \"shape\" is not an array");
  uint64_t bytes = d->size;
  bool overflow = false;
  for (const Json& dim : shape) {
    std::optional<uint64_t> n = unsigned_of(dim);
    if (!n || *n > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
      user_error(at + ": \"shape\" " + shape.dump() + " holds something other than a size");
    e.shape.push_back(static_cast<int64_t>(*n));
    overflow = overflow || (*n != 0 && bytes > std::numeric_limits<uint64_t>::max() / *n);
    bytes = overflow ? 0 : bytes * *n;
  }
  // (a zero anywhere makes the size 0, whatever overflowed before it)
  if (std::find(e.shape.begin(), e.shape.end(), 0) != e.shape.end()) overflow = false, bytes = 0;
  if (overflow) user_error(at + ": \"shape\" " + shape.dump() + " is too large to address");

  const Json& offsets = info["data_offsets"];
  std::optional<uint64_t> begin, end;
  if (offsets.is_array() && offsets.size() == 2)
    begin = unsigned_of(offsets[0]), end = unsigned_of(offsets[1]);
  if (!begin || !end)
    user_error(at + ": \"data_offsets\" is not two sizes [begin, end]: " + offsets.dump());
  if (*begin > *end)
    user_error(at + ": \"data_offsets\" " + offsets.dump() + " ends before it begins");
  e.begin = *begin;
  e.end = *end;
  if (e.end - e.begin != bytes)
    user_error(at + ": \"data_offsets\" " + offsets.dump() + " hold " +
               std::to_string(e.end - e.begin) + " bytes, but " + e.dtype_name + " " +
               shape.dump() + " needs " + std::to_string(bytes));
  return e;
}

}  // namespace

SafetensorsHeader parse_safetensors(const uint8_t* bytes, size_t size, const std::string& file) {
  if (size < 8)
    user_error(file + ": truncated: " + std::to_string(size) +
               " bytes, too short for the 8-byte header length of a safetensors file");
  uint64_t n = 0;
  std::memcpy(&n, bytes, 8);  // little-endian (static_assert above)
  if (n > kMaxSafetensorsHeader)
    user_error(file + ": the header length " + std::to_string(n) +
               " is over the 100 MB limit (not a safetensors file, or a corrupt one)");
  if (n > size - 8)
    user_error(file + ": truncated: the header length " + std::to_string(n) +
               " runs past the end of the file (" + std::to_string(size) + " bytes)");
  SafetensorsHeader header;
  header.data_start = 8 + n;
  const uint64_t data_size = size - header.data_start;
  const JsonDocument doc = read_json(reinterpret_cast<const char*>(bytes) + 8,
                                     static_cast<size_t>(n), file + ": the header");
  if (!doc.root.is_object()) user_error(file + ": the header is not a JSON object");

  for (const std::string& key : doc.keys) {
    const Json& value = doc.root.at(key);
    if (key == "__metadata__") {
      if (!value.is_object()) user_error(file + ": \"__metadata__\" is not an object");
      auto order = doc.member_keys.find(key);
      if (order == doc.member_keys.end()) continue;  // {}
      for (const std::string& k : order->second) {
        const Json& v = value.at(k);
        if (!v.is_string())
          user_error(file + ": \"__metadata__\" " + quote_key(k) +
                     " is not a string: " + v.dump().substr(0, 80));
        header.metadata.emplace_back(k, v.get<std::string>());
      }
      continue;
    }
    SafetensorsEntry e = parse_entry(key, value, file + ": tensor " + quote_key(key));
    if (e.end > data_size)
      user_error(file + ": tensor " + quote_key(key) + ": \"data_offsets\" [" +
                 std::to_string(e.begin) + ", " + std::to_string(e.end) +
                 "] run past the end of the data (" + std::to_string(data_size) +
                 " bytes; the file is truncated or the offsets are wrong)");
    header.entries.push_back(std::move(e));
  }

  // No two entries share a byte.
  std::vector<const SafetensorsEntry*> by_offset;
  for (const SafetensorsEntry& e : header.entries)
    if (e.end > e.begin) by_offset.push_back(&e);
  std::sort(
      by_offset.begin(), by_offset.end(),
      [](const SafetensorsEntry* a, const SafetensorsEntry* b) { return a->begin < b->begin; });
  for (size_t i = 1; i < by_offset.size(); ++i) {
    const SafetensorsEntry& a = *by_offset[i - 1];
    const SafetensorsEntry& b = *by_offset[i];
    if (b.begin < a.end)
      user_error(file + ": tensors " + quote_key(a.name) + " [" + std::to_string(a.begin) + ", " +
                 std::to_string(a.end) + "] and " + quote_key(b.name) + " [" +
                 std::to_string(b.begin) + ", " + std::to_string(b.end) + "] overlap");
  }
  return header;
}

const char* safetensors_dtype_name(pg_dtype dtype, const std::string& what) {
  for (const DtypeInfo& d : kDtypes)
    if (d.dtype == dtype && dtype != PG_DTYPE_VOID) return d.name;
  user_error(what + ": dtype " + std::to_string(static_cast<int>(dtype)) +
             " has no safetensors name");
}

float half_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exponent = (h >> 10) & 0x1fu, mantissa = h & 0x3ffu;
  uint32_t bits = 0;
  if (exponent == 0x1f) {
    bits = sign | 0x7f800000u | (mantissa << 13);  // inf, NaN (payload kept)
  } else if (exponent != 0) {
    bits = sign | ((exponent + 112) << 23) | (mantissa << 13);  // 112 = 127 - 15
  } else {
    const float magnitude = std::ldexp(static_cast<float>(mantissa), -24);  // subnormal, or 0
    return sign ? -magnitude : magnitude;
  }
  return std::bit_cast<float>(bits);
}

float bfloat16_to_float(uint16_t h) {
  return std::bit_cast<float>(static_cast<uint32_t>(h) << 16);
}

}  // namespace polygrad::models
