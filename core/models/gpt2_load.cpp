// GPT-2's weights from a checkpoint folder (config.json + safetensors, single or sharded) or
// from bytes.
#include "models/gpt2.hpp"
#include "models/json_read.hpp"

#include <polygrad/error.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace polygrad::models {

namespace {

namespace fs = std::filesystem;

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + (shape.size() == 1 ? ",)" : ")");
}

// Looks tensors up by name across checkpoints (shards given as bytes), with or without the
// "transformer." prefix, and checks their shapes.
class WeightSource {
 public:
  WeightSource(const std::vector<Checkpoint>& ckpts, std::string name, std::string device)
      : ckpts_(ckpts), name_(std::move(name)), device_(std::move(device)) {}

  bool has(const std::string& key) const { return locate(key).first != nullptr; }

  /// The float32 tensor of `key` (or "transformer." + key), which must have `shape`.
  Tensor get(const std::string& key, const std::vector<int64_t>& shape) const {
    auto [ckpt, entry] = locate(key);
    if (ckpt == nullptr)
      user_error(name_ + ": no tensor " + quote_key(key) + " (nor " +
                 quote_key("transformer." + key) + ")");
    if (entry->shape != shape)
      user_error(ckpt->file_of(*entry) + ": tensor " + quote_key(entry->name) + " has shape " +
                 shape_text(entry->shape) + ", GPT-2 needs " + shape_text(shape));
    if (entry->dtype != PG_DTYPE_FLOAT32 && entry->dtype != PG_DTYPE_FLOAT16 &&
        entry->dtype != PG_DTYPE_BFLOAT16)
      user_error(ckpt->file_of(*entry) + ": tensor " + quote_key(entry->name) + " has dtype " +
                 entry->dtype_name + " (GPT-2 weights are F32, F16 or BF16)");
    return ckpt->tensor(entry->name, PG_DTYPE_FLOAT32, device_);
  }

 private:
  std::pair<const Checkpoint*, const SafetensorsEntry*> locate(const std::string& key) const {
    for (const std::string& k : {key, "transformer." + key})
      for (const Checkpoint& c : ckpts_)
        if (const SafetensorsEntry* e = c.find(k)) return {&c, e};
    return {nullptr, nullptr};
  }

  const std::vector<Checkpoint>& ckpts_;
  std::string name_;
  std::string device_;
};

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) user_error(path.string() + ": cannot open");
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void check_sizes(int64_t max_batch, int64_t max_seq_len, int64_t n_positions) {
  if (max_batch < 1)
    user_error("gpt2: max_batch must be at least 1, not " + std::to_string(max_batch));
  if (max_seq_len < 0 || max_seq_len > n_positions)
    user_error("gpt2: max_seq_len " + std::to_string(max_seq_len) + " is outside [0, n_positions " +
               std::to_string(n_positions) + "]");
}

}  // namespace

Gpt2 Gpt2::load(const std::string& path, int64_t max_batch, int64_t max_seq_len,
                const std::string& device) {
  const fs::path folder(path);
  if (!fs::is_directory(folder)) user_error(path + ": is not a model folder");
  const fs::path config_path = folder / "config.json";
  if (!fs::exists(config_path))
    user_error(path +
               ": has no config.json (a Hub model folder holds config.json and "
               "model.safetensors)");
  const std::string text = read_text(config_path);
  const Gpt2Config config = parse_gpt2_config(text.data(), text.size(), config_path.string());
  check_sizes(max_batch, max_seq_len, config.n_positions);
  std::vector<Checkpoint> ckpts;
  if (fs::exists(folder / "model.safetensors"))
    ckpts.push_back(Checkpoint::open_file((folder / "model.safetensors").string()));
  else if (fs::exists(folder / "model.safetensors.index.json"))
    ckpts.push_back(Checkpoint::open_index((folder / "model.safetensors.index.json").string()));
  else
    user_error(path + ": has neither model.safetensors nor model.safetensors.index.json");
  return from_checkpoints(config, ckpts, ckpts.front().path(), max_batch, max_seq_len, device);
}

Gpt2 Gpt2::load_bytes(const std::string& config_json,
                      const std::vector<std::pair<const uint8_t*, size_t>>& files,
                      int64_t max_batch, int64_t max_seq_len, const std::string& device,
                      const std::string& name) {
  const Gpt2Config config =
      parse_gpt2_config(config_json.data(), config_json.size(), name + "/config.json");
  check_sizes(max_batch, max_seq_len, config.n_positions);
  if (files.empty()) user_error(name + ": no safetensors files given");
  std::vector<Checkpoint> ckpts;
  for (size_t i = 0; i < files.size(); ++i) {
    const std::string file = name + "/weights[" + std::to_string(i) + "]";
    if (files[i].first == nullptr && files[i].second > 0) user_error(file + " is NULL");
    ckpts.push_back(Checkpoint::open_memory(files[i].first, files[i].second, file));
  }
  return from_checkpoints(config, ckpts, name, max_batch, max_seq_len, device);
}

Gpt2 Gpt2::from_checkpoints(const Gpt2Config& config, const std::vector<Checkpoint>& ckpts,
                            const std::string& name, int64_t max_batch, int64_t max_seq_len,
                            const std::string& device) {
  Gpt2 m;
  m.config_ = config;
  m.max_batch_ = max_batch;
  m.max_seq_len_ = max_seq_len == 0 ? config.n_positions : max_seq_len;
  m.device_ = device;
  const WeightSource w(ckpts, name, device);
  const int64_t d = config.n_embd, ff = config.n_inner, v = config.vocab_size;
  m.wte_ = w.get("wte.weight", {v, d});
  m.wpe_ = w.get("wpe.weight", {config.n_positions, d});
  m.device_ = m.wte_.device();  // (the canonical name of "" too)
  for (int64_t i = 0; i < config.n_layer; ++i) {
    const std::string p = "h." + std::to_string(i) + ".";
    Gpt2Block b;
    b.ln_1_w = w.get(p + "ln_1.weight", {d});
    b.ln_1_b = w.get(p + "ln_1.bias", {d});
    b.c_attn_w = w.get(p + "attn.c_attn.weight", {d, 3 * d});
    b.c_attn_b = w.get(p + "attn.c_attn.bias", {3 * d});
    b.attn_proj_w = w.get(p + "attn.c_proj.weight", {d, d});
    b.attn_proj_b = w.get(p + "attn.c_proj.bias", {d});
    b.ln_2_w = w.get(p + "ln_2.weight", {d});
    b.ln_2_b = w.get(p + "ln_2.bias", {d});
    b.c_fc_w = w.get(p + "mlp.c_fc.weight", {d, ff});
    b.c_fc_b = w.get(p + "mlp.c_fc.bias", {ff});
    b.mlp_proj_w = w.get(p + "mlp.c_proj.weight", {ff, d});
    b.mlp_proj_b = w.get(p + "mlp.c_proj.bias", {d});
    m.blocks_.push_back(std::move(b));
  }
  m.ln_f_w_ = w.get("ln_f.weight", {d});
  m.ln_f_b_ = w.get("ln_f.bias", {d});
  // lm_head.weight sits outside "transformer."; absent, the logits are tied to wte.
  bool own_head = false;
  for (const Checkpoint& c : ckpts) own_head = own_head || c.find("lm_head.weight") != nullptr;
  m.lm_head_ = own_head ? w.get("lm_head.weight", {v, d}) : m.wte_;
  std::vector<Tensor> all = {m.wte_, m.wpe_, m.ln_f_w_, m.ln_f_b_, m.lm_head_};
  for (const Gpt2Block& b : m.blocks_)
    for (const Tensor* t :
         {&b.ln_1_w, &b.ln_1_b, &b.c_attn_w, &b.c_attn_b, &b.attn_proj_w, &b.attn_proj_b, &b.ln_2_w,
          &b.ln_2_b, &b.c_fc_w, &b.c_fc_b, &b.mlp_proj_w, &b.mlp_proj_b})
      all.push_back(*t);
  Tensor::realize_all(all);  // (the views of the checkpoints' maps end here)
  return m;
}

}  // namespace polygrad::models
