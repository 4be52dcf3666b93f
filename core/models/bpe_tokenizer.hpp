// GPT-2's byte-level BPE tokenizer, read from the model folder's vocab.json and merges.txt.
// Internal to the core; the C API (core/capi/tokenizer.cpp) exposes it.
//
// Encoding: the text is split by GPT-2's pre-tokenizer pattern
//   's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
// each piece's UTF-8 bytes are mapped to GPT-2's printable stand-ins (bytes_to_unicode), and
// merged pairwise by merges.txt's ranks; each resulting symbol is looked up in vocab.json.
// Letters, numbers and white space are exact for ASCII; other code points are classified by
// the C library's C.UTF-8 tables (letters) and a table of the common non-ASCII digits and
// number forms. A vocabulary entry of the form <|name|> ("<|endoftext|>") is a special
// token: where the text holds it, it becomes its id, as transformers' GPT-2 tokenizer does.
#ifndef POLYGRAD_MODELS_BPE_TOKENIZER_HPP
#define POLYGRAD_MODELS_BPE_TOKENIZER_HPP

#include <cstdint>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace polygrad::models {

class BpeTokenizer {
 public:
  /// Reads vocab.json (a JSON object: symbol -> id) and merges.txt ("a b" per line, ranked by
  /// line; a first line starting with "#version" is skipped). User errors name the file and
  /// the line or key at fault.
  static BpeTokenizer load(const std::string& vocab_path, const std::string& merges_path);
  /// The same from the files' contents; `vocab_name` and `merges_name` name them in messages.
  static BpeTokenizer from_text(const std::string& vocab_json, const std::string& merges_txt,
                                const std::string& vocab_name = "vocab.json",
                                const std::string& merges_name = "merges.txt");

  /// The ids of `text` (UTF-8; invalid bytes are encoded as bytes; special tokens as their
  /// ids). A user error names a symbol the vocabulary lacks.
  std::vector<int64_t> encode(const std::string& text) const;
  /// The bytes the ids stand for (possibly a partial UTF-8 sequence at the end). A user
  /// error names an id the vocabulary lacks.
  std::string decode(const std::vector<int64_t>& ids) const;
  /// One more than the largest id.
  int64_t vocab_size() const { return vocab_size_; }

 private:
  std::vector<std::string> bpe(const std::vector<std::string>& symbols) const;
  std::vector<int64_t> encode_ordinary(const std::string& text) const;

  std::unordered_map<std::string, int64_t> vocab_;
  std::unordered_map<int64_t, std::string> by_id_;
  std::unordered_map<std::string, size_t> merge_rank_;     ///< "a b" -> line rank
  std::vector<std::pair<std::string, int64_t>> specials_;  ///< <|name|> entries
  int64_t vocab_size_ = 0;
};

}  // namespace polygrad::models

#endif  // POLYGRAD_MODELS_BPE_TOKENIZER_HPP
