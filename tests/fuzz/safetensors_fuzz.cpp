// libFuzzer target of the safetensors header parser (core/models/safetensors_header.cpp): any
// input either parses into entries that lie inside the data, or is refused with a
// polygrad::Error. Any other exception, a crash or a sanitizer report is a bug.
#include "models/safetensors_header.hpp"

#include <polygrad/error.hpp>

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    const polygrad::models::SafetensorsHeader h =
        polygrad::models::parse_safetensors(data, size, "fuzz.safetensors");
    if (h.data_start < 8 || h.data_start > size) __builtin_trap();
    for (const polygrad::models::SafetensorsEntry& e : h.entries)
      if (e.begin > e.end || e.end > size - h.data_start) __builtin_trap();
  } catch (const polygrad::Error&) {
    // a refused file: the expected outcome for most inputs
  }
  return 0;
}
