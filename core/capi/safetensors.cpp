// C API: safetensors checkpoints (core/models/safetensors.hpp).
#include "models/safetensors.hpp"
#include "capi/support.hpp"
#include "models/json_read.hpp"

using namespace polygrad;
using capi::guard;

/// What a pg_safetensors_t points to.
struct pg_safetensors {
  models::Checkpoint checkpoint;
};

namespace {

const models::Checkpoint& checkpoint_arg(pg_safetensors_t f) {
  if (f == nullptr) user_error("argument 'f' is NULL");
  return f->checkpoint;
}

const models::SafetensorsEntry& entry_arg(pg_safetensors_t f, size_t i) {
  const auto& entries = checkpoint_arg(f).entries();
  if (i >= entries.size())
    index_error("tensor " + std::to_string(i) + " of " + std::to_string(entries.size()));
  return entries[i];
}

std::string path_arg(const char* path, const char* name) {
  if (path == nullptr) user_error(std::string("argument '") + name + "' is NULL");
  return path;
}

}  // namespace

pg_api_status pg_safetensors_open(const char* path, pg_safetensors_t* out) {
  return guard("pg_safetensors_open", [&] {
    capi::check_out(out, "out");
    *out = new pg_safetensors{models::Checkpoint::open_file(path_arg(path, "path"))};
  });
}

pg_api_status pg_safetensors_open_index(const char* index_path, pg_safetensors_t* out) {
  return guard("pg_safetensors_open_index", [&] {
    capi::check_out(out, "out");
    *out = new pg_safetensors{models::Checkpoint::open_index(path_arg(index_path, "index_path"))};
  });
}

void pg_safetensors_free(pg_safetensors_t f) {
  delete f;
}

pg_api_status pg_safetensors_count(pg_safetensors_t f, size_t* out) {
  return guard("pg_safetensors_count", [&] {
    const models::Checkpoint& c = checkpoint_arg(f);
    capi::check_out(out, "out");
    *out = c.entries().size();
  });
}

pg_api_status pg_safetensors_entry(pg_safetensors_t f, size_t i, const char** name,
                                   const char** dtype_name, pg_dtype* dtype, size_t* ndim) {
  return guard("pg_safetensors_entry", [&] {
    const models::SafetensorsEntry& e = entry_arg(f, i);
    if (name) *name = e.name.c_str();
    if (dtype_name) *dtype_name = e.dtype_name.c_str();
    if (dtype) *dtype = e.dtype;
    if (ndim) *ndim = e.shape.size();
  });
}

pg_api_status pg_safetensors_shape(pg_safetensors_t f, size_t i, int64_t* dims, size_t capacity,
                                   size_t* ndim) {
  return guard("pg_safetensors_shape", [&] {
    const models::SafetensorsEntry& e = entry_arg(f, i);
    capi::check_out(ndim, "ndim");
    if (capacity > 0) capi::check_out(dims, "dims");
    for (size_t k = 0; k < e.shape.size() && k < capacity; ++k) dims[k] = e.shape[k];
    *ndim = e.shape.size();
  });
}

pg_api_status pg_safetensors_location(pg_safetensors_t f, size_t i, uint64_t* begin, uint64_t* end,
                                      const char** file) {
  return guard("pg_safetensors_location", [&] {
    const models::SafetensorsEntry& e = entry_arg(f, i);
    if (begin) *begin = e.begin;
    if (end) *end = e.end;
    if (file) *file = f->checkpoint.file_of(e).c_str();
  });
}

pg_api_status pg_safetensors_find(pg_safetensors_t f, const char* name, size_t* out) {
  return guard("pg_safetensors_find", [&] {
    const models::Checkpoint& c = checkpoint_arg(f);
    const std::string key = path_arg(name, "name");
    capi::check_out(out, "out");
    const models::SafetensorsEntry* e = c.find(key);
    if (e == nullptr) user_error(c.path() + ": no tensor " + models::quote_key(key));
    *out = static_cast<size_t>(e - c.entries().data());
  });
}

pg_api_status pg_safetensors_tensor(pg_safetensors_t f, const char* name, pg_dtype dtype,
                                    const char* device, pg_tensor_t* out) {
  return guard("pg_safetensors_tensor", [&] {
    const models::Checkpoint& c = checkpoint_arg(f);
    const std::string key = path_arg(name, "name");
    capi::check_out(out, "out");
    std::optional<pg_dtype> as;
    if (dtype != PG_DTYPE_VOID) as = dtype;
    capi::put(out, c.tensor(key, as, capi::device_arg(device)));
  });
}

pg_api_status pg_safetensors_metadata_count(pg_safetensors_t f, size_t* out) {
  return guard("pg_safetensors_metadata_count", [&] {
    const models::Checkpoint& c = checkpoint_arg(f);
    capi::check_out(out, "out");
    *out = c.metadata().size();
  });
}

pg_api_status pg_safetensors_metadata(pg_safetensors_t f, size_t i, const char** key,
                                      const char** value) {
  return guard("pg_safetensors_metadata", [&] {
    const auto& meta = checkpoint_arg(f).metadata();
    if (i >= meta.size())
      index_error("metadata entry " + std::to_string(i) + " of " + std::to_string(meta.size()));
    if (key) *key = meta[i].first.c_str();
    if (value) *value = meta[i].second.c_str();
  });
}

pg_api_status pg_safetensors_save(const char* path, const char* const* names,
                                  const pg_tensor_t* tensors, size_t n,
                                  const char* const* metadata_keys,
                                  const char* const* metadata_values, size_t nmeta) {
  return guard("pg_safetensors_save", [&] {
    const std::string file = path_arg(path, "path");
    if (n > 0 && names == nullptr) user_error("argument 'names' is NULL");
    const std::vector<Tensor> ts = capi::tensors_arg(tensors, n, "tensors");
    std::vector<std::pair<std::string, Tensor>> named;
    for (size_t i = 0; i < n; ++i) {
      if (names[i] == nullptr) user_error("names[" + std::to_string(i) + "] is NULL");
      named.emplace_back(names[i], ts[i]);
    }
    if (nmeta > 0 && (metadata_keys == nullptr || metadata_values == nullptr))
      user_error("argument 'metadata_keys' or 'metadata_values' is NULL");
    models::SafetensorsMetadata meta;
    for (size_t i = 0; i < nmeta; ++i) {
      if (metadata_keys[i] == nullptr || metadata_values[i] == nullptr)
        user_error("metadata entry " + std::to_string(i) + " is NULL");
      meta.emplace_back(metadata_keys[i], metadata_values[i]);
    }
    models::save_safetensors(file, named, meta);
  });
}
