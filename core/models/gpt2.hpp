// GPT-2 (the Hub's "gpt2" model_type) written with the Tensor API: its configuration, its
// weights loaded from a checkpoint folder or from bytes, the full forward and KV-cache
// decoding. Internal to the core; the C API (core/capi/gpt2.cpp) exposes it.
#ifndef POLYGRAD_MODELS_GPT2_HPP
#define POLYGRAD_MODELS_GPT2_HPP

#include "models/safetensors.hpp"

#include <polygrad/symbolic.hpp>
#include <polygrad/tensor.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace polygrad::models {

/// The fields of config.json that GPT-2 reads; absent ones take transformers' GPT2Config
/// defaults.
struct Gpt2Config {
  int64_t vocab_size = 50257;
  int64_t n_positions = 1024;
  int64_t n_embd = 768;
  int64_t n_layer = 12;
  int64_t n_head = 12;
  int64_t n_inner = 0;  ///< the MLP's width; 0 (config null) means 4 * n_embd
  double layer_norm_epsilon = 1e-5;
  std::string activation_function = "gelu_new";
};

/// Parses config.json's `size` bytes (`what` names it in messages). User errors: invalid JSON,
/// no "model_type" or one other than "gpt2" (named), a field of the wrong type or out of range
/// (named), n_embd not divisible by n_head, an activation other than gelu_new,
/// gelu_pytorch_tanh or relu, scale_attn_weights false, scale_attn_by_inverse_layer_idx or
/// add_cross_attention true.
Gpt2Config parse_gpt2_config(const char* text, size_t size, const std::string& what);

/// One transformer block's weights, as float32 tensors; the Conv1D weights as stored, (in, out).
struct Gpt2Block {
  Tensor ln_1_w, ln_1_b, c_attn_w, c_attn_b, attn_proj_w, attn_proj_b;
  Tensor ln_2_w, ln_2_b, c_fc_w, c_fc_b, mlp_proj_w, mlp_proj_b;
};

/// A loaded GPT-2 with room for `max_batch` sequences of `max_seq_len` tokens, and its KV cache.
class Gpt2 {
 public:
  /// Loads the checkpoint folder `path` as the Hub stores it: config.json and model.safetensors,
  /// or the shards that model.safetensors.index.json names. F16 and BF16 weights are widened
  /// to float32 once. Keys may carry the "transformer." prefix; "h.N.attn.bias" and
  /// "h.N.attn.masked_bias" are ignored; without "lm_head.weight" the logits use wte.
  /// max_seq_len 0 means n_positions. User errors name the file and the key.
  static Gpt2 load(const std::string& path, int64_t max_batch, int64_t max_seq_len,
                   const std::string& device);
  /// The same from memory: config.json's text and the bytes of one or more safetensors files
  /// (shards, merged by name); `name` stands for the folder in messages.
  static Gpt2 load_bytes(const std::string& config_json,
                         const std::vector<std::pair<const uint8_t*, size_t>>& files,
                         int64_t max_batch, int64_t max_seq_len, const std::string& device,
                         const std::string& name = "<bytes>");

  const Gpt2Config& config() const { return config_; }
  int64_t max_batch() const { return max_batch_; }
  int64_t max_seq_len() const { return max_seq_len_; }

  /// Logits (B, T, vocab) of token ids (B, T) at `positions` (B, T; absent: 0..T-1). Ids and
  /// positions may be int or float tensors holding whole numbers. B <= max_batch,
  /// T <= max_seq_len. Lazy; leaves the cache alone.
  Tensor forward(const Tensor& tokens, const std::optional<Tensor>& positions) const;

  /// Starts a sequence: runs the T prompt tokens (B, T), fills cache rows [0, T), and returns
  /// the last position's logits (B, vocab), realised. The cache's batch becomes B.
  Tensor prefill(const Tensor& tokens);
  /// One token per sequence (B, 1) at the next position p: writes k and v into cache row p
  /// alone (a store through the row's view), attends over rows [0, p + 1), returns logits
  /// (B, vocab), realised; one schedule whose kernels take p at launch. A user error once the
  /// cache is full (p = max_seq_len) or before prefill.
  Tensor step(const Tensor& tokens);
  /// The next position step() writes (the tokens seen so far).
  int64_t position() const { return position_; }

 private:
  Gpt2() = default;
  static Gpt2 from_checkpoints(const Gpt2Config& config, const std::vector<Checkpoint>& ckpts,
                               const std::string& name, int64_t max_batch, int64_t max_seq_len,
                               const std::string& device);
  Tensor embed(const Tensor& tokens, const Tensor& positions) const;
  Tensor attention_out(const Gpt2Block& b, const Tensor& a) const;
  Tensor mlp(const Gpt2Block& b, const Tensor& x) const;
  Tensor logits(const Tensor& x) const;
  /// The cache rows a step at position p attends over, p + 1, as the variable "attended"
  /// in [1, max_seq_len] bound to it: every step's graph is one structure, scheduled and
  /// compiled once (docs/compiler.md, "Symbolic sizes"). The step writes row n - 1 of it.
  Dim attended_length(int64_t p) const { return Variable("attended", 1, max_seq_len_).bind(p + 1); }

  Gpt2Config config_;
  int64_t max_batch_ = 1;
  int64_t max_seq_len_ = 0;
  std::string device_;
  Tensor wte_, wpe_, ln_f_w_, ln_f_b_, lm_head_;
  std::vector<Gpt2Block> blocks_;
  std::vector<Tensor> cache_k_, cache_v_;  ///< per layer (B, n_head, max_seq_len, head_dim)
  int64_t batch_ = 0;                      ///< the cached sequences (0: no prefill yet)
  int64_t position_ = 0;
};

}  // namespace polygrad::models

#endif  // POLYGRAD_MODELS_GPT2_HPP
