#include "models/json_read.hpp"
#include "models/safetensors.hpp"

#include <polygrad/error.hpp>

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <set>

namespace polygrad::models {

namespace {

// A temporary file that is removed unless `keep` was called.
struct PendingFile {
  std::string path;
  std::FILE* f = nullptr;
  bool kept = false;
  ~PendingFile() {
    if (f != nullptr) std::fclose(f);
    if (!kept) std::remove(path.c_str());
  }
};

}  // namespace

void save_safetensors(const std::string& path,
                      const std::vector<std::pair<std::string, Tensor>>& tensors,
                      const SafetensorsMetadata& metadata) {
  // The header is written member by member, in the caller's order (an ordered_json object
  // would look up each new key linearly). dump() is strict: text that is not UTF-8 throws.
  using OrderedJson = nlohmann::ordered_json;
  std::string text = "{";
  std::set<std::string> seen;
  try {
    if (!metadata.empty()) {
      OrderedJson meta = OrderedJson::object();
      for (const auto& [k, v] : metadata) {
        if (!seen.insert(k).second)
          user_error(path + ": the metadata key " + quote_key(k) + " is given twice");
        meta[k] = v;
      }
      text += "\"__metadata__\":" + meta.dump();
    }
  } catch (const OrderedJson::exception&) {
    user_error(path + ": a metadata string is not UTF-8");
  }
  seen.clear();
  std::vector<Tensor> values;
  std::vector<uint64_t> sizes;
  uint64_t offset = 0;
  for (const auto& [name, t] : tensors) {
    const std::string at = path + ": tensor " + quote_key(name);
    if (name == "__metadata__") user_error(at + ": the name is reserved for the metadata");
    if (!seen.insert(name).second) user_error(at + " is given twice");
    const uint64_t bytes =
        static_cast<uint64_t>(t.numel()) * static_cast<uint64_t>(t.element_size());
    OrderedJson info = OrderedJson::object();
    info["dtype"] = safetensors_dtype_name(t.dtype(), at);
    info["shape"] = t.shape();
    info["data_offsets"] = {offset, offset + bytes};
    if (text.size() > 1) text += ',';
    try {
      text += OrderedJson(name).dump();
    } catch (const OrderedJson::exception&) {
      user_error(at + ": the name is not UTF-8");
    }
    text += ':' + info.dump();
    values.push_back(t);
    sizes.push_back(bytes);
    offset += bytes;
  }
  text += '}';
  text.append((8 - text.size() % 8) % 8, ' ');  // the data starts 8-byte aligned
  Tensor::realize_all(values);

  PendingFile out{path + ".tmp" + std::to_string(::getpid())};
  out.f = std::fopen(out.path.c_str(), "wb");
  if (out.f == nullptr)
    user_error(path + ": cannot write " + out.path + ": " + std::strerror(errno));
  auto write = [&](const void* p, size_t n) {
    if (n != 0 && std::fwrite(p, 1, n, out.f) != n)
      user_error(path + ": cannot write: " + std::strerror(errno));
  };
  const uint64_t length = text.size();  // little-endian (safetensors_header.cpp asserts it)
  write(&length, 8);
  write(text.data(), text.size());
  std::vector<uint8_t> buffer;
  for (size_t i = 0; i < values.size(); ++i) {
    buffer.resize(sizes[i]);
    if (sizes[i] != 0) values[i].copy_to_host(buffer.data(), buffer.size());
    write(buffer.data(), buffer.size());
  }
  const int closed = std::fclose(out.f);
  out.f = nullptr;
  if (closed != 0) user_error(path + ": cannot write: " + std::strerror(errno));
  if (std::rename(out.path.c_str(), path.c_str()) != 0)
    user_error(path + ": cannot rename " + out.path + " to it: " + std::strerror(errno));
  out.kept = true;
}

}  // namespace polygrad::models
