#include "models/json_read.hpp"
#include "models/safetensors.hpp"
#include "runtime/runtime.hpp"
#include "tensor/tensor_impl.hpp"

#include <polygrad/error.hpp>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

namespace polygrad::models {

namespace {

// Closes a descriptor on every path out of MappedFile's constructor.
struct FileDescriptor {
  int fd;
  ~FileDescriptor() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

MappedFile::MappedFile(const std::string& path) : path_(path) {
  FileDescriptor f{::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
  if (f.fd < 0) user_error(path + ": cannot open: " + std::strerror(errno));
  struct stat st {};
  if (::fstat(f.fd, &st) != 0) user_error(path + ": cannot stat: " + std::strerror(errno));
  if (S_ISDIR(st.st_mode)) user_error(path + ": is a directory, not a safetensors file");
  if (!S_ISREG(st.st_mode)) user_error(path + ": is not a regular file");
  size_ = static_cast<size_t>(st.st_size);
  if (size_ == 0) return;  // (mmap refuses length 0; the parser reports the empty file)
  void* p = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, f.fd, 0);
  if (p == MAP_FAILED) user_error(path + ": cannot map into memory: " + std::strerror(errno));
  data_ = static_cast<const uint8_t*>(p);
}

MappedFile::~MappedFile() {
  if (mapped_ && data_ != nullptr) ::munmap(const_cast<uint8_t*>(data_), size_);
}

Checkpoint Checkpoint::open_file(const std::string& path) {
  return from_file(std::make_shared<MappedFile>(path));
}

Checkpoint Checkpoint::open_memory(const uint8_t* data, size_t size, const std::string& name) {
  return from_file(std::make_shared<MappedFile>(name, data, size));
}

Checkpoint Checkpoint::from_file(std::shared_ptr<MappedFile> file) {
  Checkpoint c;
  c.path_ = file->path();
  const std::string& path = c.path_;
  SafetensorsHeader header = parse_safetensors(file->data(), file->size(), path);
  c.files_.push_back(std::move(file));
  c.data_start_.push_back(header.data_start);
  c.entries_ = std::move(header.entries);
  c.metadata_ = std::move(header.metadata);
  for (size_t i = 0; i < c.entries_.size(); ++i) c.by_name_.emplace(c.entries_[i].name, i);
  return c;
}

Checkpoint Checkpoint::open_index(const std::string& index_path) {
  namespace fs = std::filesystem;
  Checkpoint c;
  c.path_ = index_path;
  MappedFile index_file(index_path);
  const JsonDocument doc =
      read_json(reinterpret_cast<const char*>(index_file.data()), index_file.size(), index_path);
  const Json& index = doc.root;
  // The keys of a member object in the file's order (none when it is empty).
  auto keys_of = [&](const std::string& member) {
    auto it = doc.member_keys.find(member);
    return it == doc.member_keys.end() ? std::vector<std::string>{} : it->second;
  };
  if (!index.is_object()) user_error(index_path + ": is not a JSON object");
  if (!index.contains("weight_map") || !index["weight_map"].is_object())
    user_error(index_path + ": has no \"weight_map\" object (tensor name -> shard file)");
  if (index.contains("metadata")) {
    const Json& meta = index["metadata"];
    if (!meta.is_object()) user_error(index_path + ": \"metadata\" is not an object");
    for (const std::string& k : keys_of("metadata")) {
      const Json& v = meta.at(k);
      c.metadata_.emplace_back(k, v.is_string() ? v.get<std::string>() : v.dump());
    }
  }

  const fs::path folder = fs::path(index_path).parent_path();
  std::unordered_map<std::string, size_t> shard_of;            // shard file name -> file index
  std::vector<std::unordered_map<std::string, size_t>> names;  // per file: entry name -> index
  std::vector<std::vector<SafetensorsEntry>> shard_entries;
  const Json& weight_map = index["weight_map"];
  for (const std::string& name : keys_of("weight_map")) {
    const Json& value = weight_map.at(name);
    const std::string at = index_path + ": weight_map " + quote_key(name);
    if (!value.is_string()) user_error(at + " is not a file name: " + value.dump().substr(0, 80));
    const std::string shard = value.get<std::string>();
    const fs::path rel(shard);
    bool escapes = shard.empty() || rel.is_absolute();
    for (const fs::path& part : rel) escapes = escapes || part == "..";
    if (escapes)
      user_error(at + ": the shard " + quote_key(shard) +
                 " is not a file name inside the index's folder");
    auto [it, fresh] = shard_of.emplace(shard, c.files_.size());
    if (fresh) {
      const std::string shard_path = (folder / rel).string();
      std::shared_ptr<MappedFile> file;
      SafetensorsHeader header;
      try {
        file = std::make_shared<MappedFile>(shard_path);
        header = parse_safetensors(file->data(), file->size(), shard_path);
      } catch (const Error& e) {
        user_error(at + ": " + e.what());  // the shard's error, and which index names it
      }
      c.files_.push_back(std::move(file));
      c.data_start_.push_back(header.data_start);
      names.emplace_back();
      for (size_t i = 0; i < header.entries.size(); ++i)
        names.back().emplace(header.entries[i].name, i);
      shard_entries.push_back(std::move(header.entries));
    }
    const size_t f = it->second;
    auto found = names[f].find(name);
    if (found == names[f].end())
      user_error(at + " names the shard " + quote_key(shard) + ", which has no tensor " +
                 quote_key(name));
    SafetensorsEntry e = shard_entries[f][found->second];
    e.file = f;
    c.by_name_.emplace(e.name, c.entries_.size());
    c.entries_.push_back(std::move(e));
  }
  return c;
}

const SafetensorsEntry* Checkpoint::find(const std::string& name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : &entries_[it->second];
}

const std::string& Checkpoint::file_of(const SafetensorsEntry& entry) const {
  return files_.at(entry.file)->path();
}

const uint8_t* Checkpoint::bytes(const SafetensorsEntry& entry) const {
  return files_.at(entry.file)->data() + data_start_.at(entry.file) + entry.begin;
}

Tensor Checkpoint::tensor(const std::string& name, std::optional<pg_dtype> dtype,
                          const std::string& device) const {
  const SafetensorsEntry* e = find(name);
  if (e == nullptr) user_error(path_ + ": no tensor " + quote_key(name));
  if (e->dtype == PG_DTYPE_VOID)
    user_error(file_of(*e) + ": tensor " + quote_key(name) + " has dtype " + e->dtype_name +
               ", which polygrad has no dtype for");
  const uint8_t* p = bytes(*e);
  if (dtype == PG_DTYPE_FLOAT32 &&
      (e->dtype == PG_DTYPE_FLOAT16 || e->dtype == PG_DTYPE_BFLOAT16)) {
    // Widened on the host, exactly, as it is written into the device's memory: one pass over
    // the map, no device cast (runtime::from_host_fill).
    const bool half = e->dtype == PG_DTYPE_FLOAT16;
    const std::string d = runtime::canonical_device(device);
    UOpRef node = runtime::from_host_fill(
        d, dtypes::float32, e->shape, [&](void* out, int64_t first, int64_t count) {
          auto* values = static_cast<float*>(out);
          const uint8_t* in = p + 2 * first;
          for (int64_t i = 0; i < count; ++i) {
            uint16_t bits = 0;
            std::memcpy(&bits, in + 2 * i, 2);
            values[i] = half ? half_to_float(bits) : bfloat16_to_float(bits);
          }
        });
    return detail::make(node, e->shape, d);
  }
  Tensor t = Tensor::from_host(p, e->dtype, e->shape, device);
  return !dtype || *dtype == e->dtype ? t : t.cast(*dtype);
}

}  // namespace polygrad::models
