// GPT-2's forward pass and its KV-cache decoding.
#include "models/gpt2.hpp"
#include "tensor/tensor_impl.hpp"

#include <polygrad/error.hpp>

#include <cmath>

namespace polygrad::models {

namespace {

// Rows `ids` (B, T) of `table` (N, D): (B, T, D). Float ids must hold whole numbers; ids
// given as data (a realised host buffer) are checked against N, naming the value.
Tensor take_rows(const Tensor& table, const Tensor& ids, const char* what) {
  const int64_t n = table.size(0), k = ids.numel(), d = table.size(1);
  Tensor idx = detail::dt(ids).is_float() ? detail::whole_float_index(what, ids, n) : ids;
  if (const std::optional<int64_t> bad = detail::host_ints_outside(idx, 0, n))
    index_error(std::string(what) + ": index " + std::to_string(*bad) +
                " is out of bounds for an axis of size " + std::to_string(n));
  Tensor ix = idx.reshape({k, 1}).expand({k, d});
  return table.gather(0, ix).reshape({ids.size(0), ids.size(1), d});
}

Tensor layer_norm(const Tensor& x, const Tensor& w, const Tensor& b, double eps) {
  return x.layernorm({-1}, eps) * w + b;
}

// (B, T, D) -> (B, H, T, D / H)
Tensor split_heads(const Tensor& x, int64_t heads) {
  const int64_t bsz = x.size(0), t = x.size(1), d = x.size(2);
  return x.reshape({bsz, t, heads, d / heads}).permute({0, 2, 1, 3});
}

void check_ids(const Tensor& ids, const char* what) {
  if (ids.ndim() != 2)
    user_error(std::string("gpt2: ") + what + " must be 2-d (batch, tokens), not " +
               std::to_string(ids.ndim()) + "-d");
}

}  // namespace

Tensor Gpt2::embed(const Tensor& tokens_in, const Tensor& positions_in) const {
  // (ids made on another device, the default one say, come to the model's)
  const Tensor tokens = tokens_in.to(device_), positions = positions_in.to(device_);
  return take_rows(wte_, tokens, "gpt2: token") + take_rows(wpe_, positions, "gpt2: position");
}

Tensor Gpt2::attention_out(const Gpt2Block& b, const Tensor& a) const {
  // a (B, H, T, hd) -> (B, T, D) @ c_proj
  const int64_t bsz = a.size(0), t = a.size(2);
  return a.permute({0, 2, 1, 3}).reshape({bsz, t, config_.n_embd}).matmul(b.attn_proj_w) +
         b.attn_proj_b;
}

Tensor Gpt2::mlp(const Gpt2Block& b, const Tensor& x) const {
  Tensor h =
      layer_norm(x, b.ln_2_w, b.ln_2_b, config_.layer_norm_epsilon).matmul(b.c_fc_w) + b.c_fc_b;
  h = config_.activation_function == "relu" ? h.relu() : h.gelu();
  return x + h.matmul(b.mlp_proj_w) + b.mlp_proj_b;
}

Tensor Gpt2::logits(const Tensor& x) const {
  return layer_norm(x, ln_f_w_, ln_f_b_, config_.layer_norm_epsilon).matmul(lm_head_.T());
}

Tensor Gpt2::forward(const Tensor& tokens, const std::optional<Tensor>& positions) const {
  check_ids(tokens, "tokens");
  const int64_t bsz = tokens.size(0), t = tokens.size(1), d = config_.n_embd;
  if (bsz > max_batch_ || t > max_seq_len_ || t == 0)
    user_error("gpt2: tokens of shape (" + std::to_string(bsz) + ", " + std::to_string(t) +
               ") do not fit max_batch " + std::to_string(max_batch_) + ", max_seq_len " +
               std::to_string(max_seq_len_));
  Tensor pos;
  if (positions) {
    if (positions->shape() != tokens.shape())
      user_error("gpt2: positions must have the tokens' shape");
    pos = *positions;
  } else {
    pos = Tensor::arange(t, device_).reshape({1, t}).expand({bsz, t});
  }
  Tensor x = embed(tokens, pos);
  for (const Gpt2Block& b : blocks_) {
    Tensor qkv = layer_norm(x, b.ln_1_w, b.ln_1_b, config_.layer_norm_epsilon).matmul(b.c_attn_w) +
                 b.c_attn_b;
    std::vector<Tensor> parts = qkv.split(d, -1);
    Tensor q = split_heads(parts[0], config_.n_head), k = split_heads(parts[1], config_.n_head),
           v = split_heads(parts[2], config_.n_head);
    x = x + attention_out(b, q.scaled_dot_product_attention(k, v, std::nullopt, true));
    x = mlp(b, x);
  }
  return logits(x);
}

Tensor Gpt2::prefill(const Tensor& tokens) {
  check_ids(tokens, "tokens");
  const int64_t bsz = tokens.size(0), t = tokens.size(1), d = config_.n_embd;
  const int64_t hd = d / config_.n_head;
  if (bsz > max_batch_ || t > max_seq_len_ || t == 0)
    user_error("gpt2: a prompt of shape (" + std::to_string(bsz) + ", " + std::to_string(t) +
               ") does not fit max_batch " + std::to_string(max_batch_) + ", max_seq_len " +
               std::to_string(max_seq_len_));
  // No sequence until this prefill has run: a failure leaves step() refusing.
  batch_ = 0;
  position_ = 0;
  if (cache_k_.empty() || cache_k_[0].size(0) != bsz) {
    cache_k_.clear();
    cache_v_.clear();
    for (size_t i = 0; i < blocks_.size(); ++i) {
      cache_k_.push_back(
          Tensor::zeros({bsz, config_.n_head, max_seq_len_, hd}, PG_DTYPE_FLOAT32, device_)
              .realize());
      cache_v_.push_back(
          Tensor::zeros({bsz, config_.n_head, max_seq_len_, hd}, PG_DTYPE_FLOAT32, device_)
              .realize());
    }
  }
  Tensor pos = Tensor::arange(t, device_).reshape({1, t}).expand({bsz, t});
  Tensor x = embed(tokens, pos);
  const std::vector<std::pair<int64_t, int64_t>> rows = {
      {0, 0}, {0, 0}, {0, max_seq_len_ - t}, {0, 0}};
  for (size_t i = 0; i < blocks_.size(); ++i) {
    const Gpt2Block& b = blocks_[i];
    Tensor qkv = layer_norm(x, b.ln_1_w, b.ln_1_b, config_.layer_norm_epsilon).matmul(b.c_attn_w) +
                 b.c_attn_b;
    std::vector<Tensor> parts = qkv.split(d, -1);
    Tensor q = split_heads(parts[0], config_.n_head), k = split_heads(parts[1], config_.n_head),
           v = split_heads(parts[2], config_.n_head);
    cache_k_[i].assign(k.pad(rows));
    cache_v_[i].assign(v.pad(rows));
    x = x + attention_out(b, q.scaled_dot_product_attention(k, v, std::nullopt, true));
    x = mlp(b, x);
  }
  Tensor out = logits(x.shrink({{0, bsz}, {t - 1, t}, {0, d}})).reshape({bsz, config_.vocab_size});
  std::vector<Tensor> all = {out};
  all.insert(all.end(), cache_k_.begin(), cache_k_.end());
  all.insert(all.end(), cache_v_.begin(), cache_v_.end());
  Tensor::realize_all(all);
  batch_ = bsz;
  position_ = t;
  return out;
}

Tensor Gpt2::step(const Tensor& tokens) {
  check_ids(tokens, "tokens");
  if (batch_ == 0) user_error("gpt2: step before prefill (start a sequence with prefill)");
  const int64_t bsz = tokens.size(0), d = config_.n_embd, hd = d / config_.n_head;
  if (bsz != batch_ || tokens.size(1) != 1)
    user_error("gpt2: step takes one token per cached sequence, shape (" + std::to_string(batch_) +
               ", 1)");
  const int64_t p = position_;
  if (p >= max_seq_len_)
    user_error("gpt2: the KV cache is full (max_seq_len " + std::to_string(max_seq_len_) + ")");
  // The position comes in as data (a buffer) to the embedding, and as the bound variable
  // n = p + 1 to the attention and the cache writes: every step is the same graph.
  Tensor pos = Tensor(std::vector<int32_t>(static_cast<size_t>(bsz), static_cast<int32_t>(p)),
                      {bsz, 1}, device_);
  const Dim n = attended_length(p);
  const std::vector<std::pair<Dim, Dim>> attended = {
      {0, bsz}, {0, config_.n_head}, {0, n}, {0, hd}};
  const std::vector<std::pair<Dim, Dim>> row = {{0, bsz}, {0, config_.n_head}, {n - 1, n}, {0, hd}};
  const double scale = 1.0 / std::sqrt(static_cast<double>(hd));
  Tensor x = embed(tokens, pos);
  for (size_t i = 0; i < blocks_.size(); ++i) {
    const Gpt2Block& b = blocks_[i];
    Tensor qkv = layer_norm(x, b.ln_1_w, b.ln_1_b, config_.layer_norm_epsilon).matmul(b.c_attn_w) +
                 b.c_attn_b;
    std::vector<Tensor> parts = qkv.split(d, -1);
    Tensor q = split_heads(parts[0], config_.n_head), k = split_heads(parts[1], config_.n_head),
           v = split_heads(parts[2], config_.n_head);
    detail::assign_through_view(cache_k_[i], shrink(cache_k_[i], row), k);
    detail::assign_through_view(cache_v_[i], shrink(cache_v_[i], row), v);
    Tensor keys = shrink(cache_k_[i], attended), values = shrink(cache_v_[i], attended);
    Tensor s = (q.matmul(keys.transpose(-1, -2)) * scale).softmax(-1);
    x = x + attention_out(b, s.matmul(values));
    x = mlp(b, x);
  }
  Tensor out = logits(x).reshape({bsz, config_.vocab_size});
  std::vector<Tensor> all = {out};
  all.insert(all.end(), cache_k_.begin(), cache_k_.end());
  all.insert(all.end(), cache_v_.begin(), cache_v_.end());
  Tensor::realize_all(all);
  position_ = p + 1;
  return out;
}

}  // namespace polygrad::models
