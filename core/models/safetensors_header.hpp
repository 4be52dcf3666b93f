// The safetensors header (https://github.com/huggingface/safetensors): parsing and validation
// of a file's bytes, with no file system or tensor in sight (the fuzz target links this alone).
//
// A file is an 8-byte little-endian header length N, N bytes of UTF-8 JSON
// {"name": {"dtype": "F32", "shape": [2, 3], "data_offsets": [begin, end]}, ...,
//  "__metadata__": {"key": "value"}}, then the data section; offsets count from its start.
// Every error is a user error naming the file and, where one is at fault, the key.
#ifndef POLYGRAD_MODELS_SAFETENSORS_HEADER_HPP
#define POLYGRAD_MODELS_SAFETENSORS_HEADER_HPP

#include <polygrad/plugin.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace polygrad::models {

/// The largest header read (the reference implementation's limit): 100 MB.
inline constexpr uint64_t kMaxSafetensorsHeader = 100'000'000;

/// One tensor of a header.
struct SafetensorsEntry {
  std::string name;
  std::string dtype_name;          ///< as the file spells it: "F32", "BF16", "F8_E4M3"...
  pg_dtype dtype = PG_DTYPE_VOID;  ///< polygrad's; VOID for a dtype it has none of (F8_*)
  std::vector<int64_t> shape;
  uint64_t begin = 0;  ///< data_offsets, from the start of the data section
  uint64_t end = 0;
  size_t file = 0;  ///< which file of a Checkpoint holds it
};

using SafetensorsMetadata = std::vector<std::pair<std::string, std::string>>;

/// A parsed and validated header.
struct SafetensorsHeader {
  std::vector<SafetensorsEntry> entries;  ///< in the header's order
  SafetensorsMetadata metadata;           ///< __metadata__, in the header's order
  uint64_t data_start = 0;                ///< 8 + the header length
};

/// Parses the `size` bytes of a whole file named `file` (for messages) and checks everything:
/// the length, UTF-8 and JSON of the header, each entry's dtype, shape and offsets (inside the
/// data section, no two overlapping, end - begin = numel * itemsize), __metadata__ strings.
SafetensorsHeader parse_safetensors(const uint8_t* bytes, size_t size, const std::string& file);

/// The safetensors dtype name of a polygrad dtype ("F32"); a user error naming `what` for VOID.
const char* safetensors_dtype_name(pg_dtype dtype, const std::string& what);

/// IEEE half and bfloat16 bits as float32 (exact; NaN payloads kept).
float half_to_float(uint16_t bits);
float bfloat16_to_float(uint16_t bits);

}  // namespace polygrad::models

#endif  // POLYGRAD_MODELS_SAFETENSORS_HEADER_HPP
