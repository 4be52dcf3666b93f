// C API: GPT-2 (core/models/gpt2.hpp).
#include "models/gpt2.hpp"
#include "capi/support.hpp"

using namespace polygrad;
using capi::guard;

/// What a pg_gpt2_t points to.
struct pg_gpt2 {
  models::Gpt2 model;
};

namespace {

models::Gpt2& model_arg(pg_gpt2_t m) {
  if (m == nullptr) user_error("argument 'm' is NULL");
  return m->model;
}

}  // namespace

pg_api_status pg_gpt2_load(const char* path, int64_t max_batch, int64_t max_seq_len,
                           const char* device, pg_gpt2_t* out) {
  return guard("pg_gpt2_load", [&] {
    if (path == nullptr) user_error("argument 'path' is NULL");
    capi::check_out(out, "out");
    *out = new pg_gpt2{models::Gpt2::load(path, max_batch, max_seq_len, capi::device_arg(device))};
  });
}

pg_api_status pg_gpt2_load_bytes(const char* config_json, size_t config_size,
                                 const uint8_t* const* files, const size_t* sizes, size_t nfiles,
                                 int64_t max_batch, int64_t max_seq_len, const char* device,
                                 pg_gpt2_t* out) {
  return guard("pg_gpt2_load_bytes", [&] {
    if (config_json == nullptr && config_size > 0) user_error("argument 'config_json' is NULL");
    if (nfiles > 0 && (files == nullptr || sizes == nullptr))
      user_error("argument 'files' or 'sizes' is NULL");
    capi::check_out(out, "out");
    std::vector<std::pair<const uint8_t*, size_t>> blobs;
    for (size_t i = 0; i < nfiles; ++i) blobs.emplace_back(files[i], sizes[i]);
    *out = new pg_gpt2{models::Gpt2::load_bytes(std::string(config_json, config_size), blobs,
                                                max_batch, max_seq_len, capi::device_arg(device))};
  });
}

void pg_gpt2_free(pg_gpt2_t m) {
  delete m;
}

pg_api_status pg_gpt2_config(pg_gpt2_t m, int64_t* values, size_t capacity, size_t* count) {
  return guard("pg_gpt2_config", [&] {
    const models::Gpt2& g = model_arg(m);
    const models::Gpt2Config& c = g.config();
    const int64_t all[] = {c.vocab_size, c.n_positions, c.n_embd,      c.n_layer,
                           c.n_head,     c.n_inner,     g.max_batch(), g.max_seq_len()};
    const size_t n = sizeof(all) / sizeof(all[0]);
    if (capacity > 0) capi::check_out(values, "values");
    for (size_t i = 0; i < n && i < capacity; ++i) values[i] = all[i];
    if (count) *count = n;
  });
}

pg_api_status pg_gpt2_forward(pg_gpt2_t m, pg_tensor_t tokens, pg_tensor_t positions,
                              pg_tensor_t* logits) {
  return guard("pg_gpt2_forward", [&] {
    const models::Gpt2& g = model_arg(m);
    capi::put(logits, g.forward(capi::arg(tokens, "tokens"), capi::opt_arg(positions)));
  });
}

pg_api_status pg_gpt2_prefill(pg_gpt2_t m, pg_tensor_t tokens, pg_tensor_t* logits) {
  return guard("pg_gpt2_prefill", [&] {
    models::Gpt2& g = model_arg(m);
    capi::check_out(logits, "logits");
    capi::put(logits, g.prefill(capi::arg(tokens, "tokens")));
  });
}

pg_api_status pg_gpt2_step(pg_gpt2_t m, pg_tensor_t tokens, pg_tensor_t* logits) {
  return guard("pg_gpt2_step", [&] {
    models::Gpt2& g = model_arg(m);
    capi::check_out(logits, "logits");
    capi::put(logits, g.step(capi::arg(tokens, "tokens")));
  });
}

pg_api_status pg_gpt2_position(pg_gpt2_t m, int64_t* out) {
  return guard("pg_gpt2_position", [&] {
    const models::Gpt2& g = model_arg(m);
    capi::check_out(out, "out");
    *out = g.position();
  });
}
