// safetensors checkpoints: memory-mapped files, sharded checkpoints through
// model.safetensors.index.json, tensors made from their entries, and the writer. Internal to
// the core; the C API (core/capi/safetensors.cpp) exposes it. safetensors_header.hpp parses
// and checks a header.
#ifndef POLYGRAD_MODELS_SAFETENSORS_HPP
#define POLYGRAD_MODELS_SAFETENSORS_HPP

#include "models/safetensors_header.hpp"

#include <polygrad/tensor.hpp>

#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace polygrad::models {

/// A read-only memory map of a whole file; unmapped when the last reference goes.
class MappedFile {
 public:
  /// Maps `path`; user errors name the path (missing, a directory, unreadable).
  explicit MappedFile(const std::string& path);
  /// A view of `size` bytes at `data` that the caller keeps alive as long as this object;
  /// `name` stands for a path in messages. Nothing is mapped or freed.
  MappedFile(std::string name, const uint8_t* data, size_t size)
      : path_(std::move(name)), data_(data), size_(size), mapped_(false) {}
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
  bool mapped_ = true;
};

/// The tensors of one safetensors file, or of the shards an index names.
class Checkpoint {
 public:
  /// One file.
  static Checkpoint open_file(const std::string& path);
  /// A sharded checkpoint: `index_path` is a model.safetensors.index.json whose "weight_map"
  /// maps each tensor name to a shard file in the same folder. Every shard is opened and
  /// checked, and every tensor the map names must be in its shard. The index's "metadata"
  /// (values that are not strings written as JSON) is the checkpoint's metadata.
  static Checkpoint open_index(const std::string& index_path);
  /// The bytes of one file, read in place (the caller keeps them alive as long as the
  /// checkpoint); `name` stands for its path in messages.
  static Checkpoint open_memory(const uint8_t* data, size_t size, const std::string& name);

  /// What was opened: the file, or the index.
  const std::string& path() const { return path_; }
  const std::vector<SafetensorsEntry>& entries() const { return entries_; }
  const SafetensorsMetadata& metadata() const { return metadata_; }
  /// The entry of `name`, or nullptr.
  const SafetensorsEntry* find(const std::string& name) const;
  /// The file (a shard for an index) that holds `entry`.
  const std::string& file_of(const SafetensorsEntry& entry) const;
  /// The entry's bytes in the mapped file.
  const uint8_t* bytes(const SafetensorsEntry& entry) const;

  /// A new tensor on `device` holding entry `name`'s values, copied from the map: as stored
  /// (dtype nullopt) or converted to `dtype` (F16 and BF16 to float32 exactly on the host,
  /// other pairs by a cast on the device). A user error names the file and key of an unknown
  /// name or a stored dtype polygrad has no equivalent for.
  Tensor tensor(const std::string& name, std::optional<pg_dtype> dtype,
                const std::string& device) const;

 private:
  static Checkpoint from_file(std::shared_ptr<MappedFile> file);

  std::string path_;  ///< what was opened (the file or the index)
  std::vector<std::shared_ptr<MappedFile>> files_;
  std::vector<uint64_t> data_start_;  ///< per file
  std::vector<SafetensorsEntry> entries_;
  std::unordered_map<std::string, size_t> by_name_;
  SafetensorsMetadata metadata_;
};

/// Writes `tensors` (realised and copied to the host one at a time) and `metadata` to `path` as
/// a safetensors file, in the given order. Written to a temporary file beside it and renamed, so
/// a failure leaves no partial file. Errors name the path or the tensor.
void save_safetensors(const std::string& path,
                      const std::vector<std::pair<std::string, Tensor>>& tensors,
                      const SafetensorsMetadata& metadata);

}  // namespace polygrad::models

#endif  // POLYGRAD_MODELS_SAFETENSORS_HPP
