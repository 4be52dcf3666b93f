// config.json of a GPT-2 checkpoint.
#include "models/gpt2.hpp"
#include "models/json_read.hpp"

#include <polygrad/error.hpp>

namespace polygrad::models {

namespace {

int64_t int_field(const Json& j, const char* key, int64_t fallback, int64_t min,
                  const std::string& what) {
  if (!j.contains(key) || j[key].is_null()) return fallback;
  const Json& v = j[key];
  if (!v.is_number_integer())
    user_error(what + ": " + quote_key(key) + " is not an integer: " + v.dump().substr(0, 40));
  const int64_t n = v.get<int64_t>();
  if (n < min)
    user_error(what + ": " + quote_key(key) + " is " + std::to_string(n) + ", less than " +
               std::to_string(min));
  return n;
}

}  // namespace

Gpt2Config parse_gpt2_config(const char* text, size_t size, const std::string& what) {
  const Json j = read_json(text, size, what).root;
  if (!j.is_object()) user_error(what + ": is not a JSON object");
  if (!j.contains("model_type") || !j["model_type"].is_string())
    user_error(what + ": has no \"model_type\" (polygrad loads \"gpt2\")");
  const std::string type = j["model_type"].get<std::string>();
  if (type != "gpt2")
    user_error(what + ": unsupported model_type " + quote_key(type) + " (polygrad loads \"gpt2\")");
  Gpt2Config c;
  c.vocab_size = int_field(j, "vocab_size", c.vocab_size, 1, what);
  c.n_positions = int_field(j, "n_positions", c.n_positions, 1, what);
  c.n_embd = int_field(j, "n_embd", c.n_embd, 1, what);
  c.n_layer = int_field(j, "n_layer", c.n_layer, 0, what);
  c.n_head = int_field(j, "n_head", c.n_head, 1, what);
  c.n_inner = int_field(j, "n_inner", 0, 1, what);
  if (c.n_inner == 0) c.n_inner = 4 * c.n_embd;
  if (j.contains("layer_norm_epsilon")) {
    const Json& e = j["layer_norm_epsilon"];
    if (!e.is_number() || !(e.get<double>() > 0))
      user_error(what + ": 'layer_norm_epsilon' is not a positive number: " + e.dump());
    c.layer_norm_epsilon = e.get<double>();
  }
  if (j.contains("activation_function")) {
    const Json& a = j["activation_function"];
    if (!a.is_string()) user_error(what + ": 'activation_function' is not a string");
    c.activation_function = a.get<std::string>();
  }
  if (c.activation_function != "gelu_new" && c.activation_function != "gelu_pytorch_tanh" &&
      c.activation_function != "relu")
    user_error(what + ": unsupported activation_function " + quote_key(c.activation_function) +
               " (gelu_new, gelu_pytorch_tanh and relu are)");
  // Variants the model does not compute are refused rather than computed otherwise.
  for (const auto& [key, supported] : {std::pair<const char*, bool>{"scale_attn_weights", true},
                                       {"scale_attn_by_inverse_layer_idx", false},
                                       {"add_cross_attention", false}}) {
    if (!j.contains(key) || j[key].is_null()) continue;
    if (!j[key].is_boolean() || j[key].get<bool>() != supported)
      user_error(what + ": " + quote_key(key) + " " + j[key].dump() +
                 " is not supported (GPT-2 here has " + (supported ? "true" : "false") + ")");
  }
  if (c.n_embd % c.n_head != 0)
    user_error(what + ": n_embd " + std::to_string(c.n_embd) + " is not divisible by n_head " +
               std::to_string(c.n_head));
  return c;
}

}  // namespace polygrad::models
