// C API: GPT-2's byte-level BPE tokenizer (core/models/bpe_tokenizer.hpp).
#include "capi/support.hpp"
#include "models/bpe_tokenizer.hpp"

#include <cstring>

using namespace polygrad;
using capi::guard;

/// What a pg_tokenizer_t points to.
struct pg_tokenizer {
  models::BpeTokenizer tokenizer;
};

namespace {

const models::BpeTokenizer& tokenizer_arg(pg_tokenizer_t t) {
  if (t == nullptr) user_error("argument 't' is NULL");
  return t->tokenizer;
}

}  // namespace

pg_api_status pg_tokenizer_load(const char* vocab_path, const char* merges_path,
                                pg_tokenizer_t* out) {
  return guard("pg_tokenizer_load", [&] {
    if (vocab_path == nullptr || merges_path == nullptr)
      user_error("argument 'vocab_path' or 'merges_path' is NULL");
    capi::check_out(out, "out");
    *out = new pg_tokenizer{models::BpeTokenizer::load(vocab_path, merges_path)};
  });
}

pg_api_status pg_tokenizer_load_bytes(const char* vocab_json, size_t vocab_size,
                                      const char* merges_txt, size_t merges_size,
                                      pg_tokenizer_t* out) {
  return guard("pg_tokenizer_load_bytes", [&] {
    if ((vocab_json == nullptr && vocab_size > 0) || (merges_txt == nullptr && merges_size > 0))
      user_error("argument 'vocab_json' or 'merges_txt' is NULL");
    capi::check_out(out, "out");
    *out = new pg_tokenizer{models::BpeTokenizer::from_text(std::string(vocab_json, vocab_size),
                                                            std::string(merges_txt, merges_size))};
  });
}

void pg_tokenizer_free(pg_tokenizer_t t) {
  delete t;
}

pg_api_status pg_tokenizer_encode(pg_tokenizer_t t, const char* text, size_t size, int64_t* ids,
                                  size_t capacity, size_t* count) {
  return guard("pg_tokenizer_encode", [&] {
    const models::BpeTokenizer& tok = tokenizer_arg(t);
    if (text == nullptr && size > 0) user_error("argument 'text' is NULL");
    capi::check_out(count, "count");
    if (capacity > 0) capi::check_out(ids, "ids");
    const std::vector<int64_t> out = tok.encode(std::string(text ? text : "", size));
    for (size_t i = 0; i < out.size() && i < capacity; ++i) ids[i] = out[i];
    *count = out.size();
  });
}

pg_api_status pg_tokenizer_decode(pg_tokenizer_t t, const int64_t* ids, size_t n, char* text,
                                  size_t capacity, size_t* size) {
  return guard("pg_tokenizer_decode", [&] {
    const models::BpeTokenizer& tok = tokenizer_arg(t);
    if (ids == nullptr && n > 0) user_error("argument 'ids' is NULL");
    capi::check_out(size, "size");
    if (capacity > 0) capi::check_out(text, "text");
    const std::string out = tok.decode(std::vector<int64_t>(ids, ids + n));
    if (capacity > 0) std::memcpy(text, out.data(), std::min(out.size(), capacity));
    *size = out.size();
  });
}

pg_api_status pg_tokenizer_vocab_size(pg_tokenizer_t t, int64_t* out) {
  return guard("pg_tokenizer_vocab_size", [&] {
    const models::BpeTokenizer& tok = tokenizer_arg(t);
    capi::check_out(out, "out");
    *out = tok.vocab_size();
  });
}
