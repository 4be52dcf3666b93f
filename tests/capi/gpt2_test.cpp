// GPT-2 and its tokenizer through the C API (pg_gpt2_*, pg_tokenizer_*): a model folder this
// test writes byte by byte, the loader's errors (each naming the file and the key), logits of
// a 0-layer model computed here by hand, and fixed strings encoded with a small vocabulary.
#include <polygrad/polygrad.h>

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

std::string le64(uint64_t n) {
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>((n >> (8 * i)) & 0xff);
  return out;
}

struct Weight {
  std::vector<int64_t> shape;
  std::vector<float> values;
};

// A safetensors file of F32 tensors, by hand.
std::string st_file(const std::map<std::string, Weight>& ws) {
  std::string header = "{", data;
  for (const auto& [name, w] : ws) {
    if (header.size() > 1) header += ",";
    std::string shape;
    for (int64_t s : w.shape) {
      if (!shape.empty()) shape.append(",");
      shape.append(std::to_string(s));
    }
    const size_t begin = data.size();
    data.append(reinterpret_cast<const char*>(w.values.data()), w.values.size() * sizeof(float));
    header.append("\"").append(name).append("\":{\"dtype\":\"F32\",\"shape\":[");
    header.append(shape).append("],\"data_offsets\":[").append(std::to_string(begin));
    header.append(",").append(std::to_string(data.size())).append("]}");
  }
  header += "}";
  return le64(header.size()) + header + data;
}

// vocab 5, 3 positions, width 2, no layers: logits = ln_f(wte[id] + wpe[pos]) @ wte^T.
constexpr int64_t kV = 5, kP = 3, kD = 2;
const char* kConfig =
    R"({"model_type": "gpt2", "vocab_size": 5, "n_positions": 3, "n_embd": 2, "n_layer": 0,
        "n_head": 1, "layer_norm_epsilon": 1e-5})";

std::map<std::string, Weight> weights() {
  std::map<std::string, Weight> w;
  w["transformer.wte.weight"] = {{kV, kD},
                                 {0.5f, -1.f, 2.f, 0.25f, -0.75f, 1.5f, 1.f, 1.f, 0.f, -2.f}};
  w["transformer.wpe.weight"] = {{kP, kD}, {0.1f, 0.2f, -0.3f, 0.4f, 0.5f, -0.6f}};
  w["transformer.ln_f.weight"] = {{kD}, {1.5f, 0.5f}};
  w["transformer.ln_f.bias"] = {{kD}, {0.1f, -0.2f}};
  return w;
}

class Gpt2 : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("pg_gpt2_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  void write(const std::string& name, const std::string& bytes) {
    std::ofstream((dir_ / name).string(), std::ios::binary) << bytes;
  }

  // Loads the folder expecting INVALID_ARGUMENT with a message holding every `parts`.
  void expect_load_error(const std::vector<std::string>& parts) {
    pg_gpt2_t m = nullptr;
    EXPECT_EQ(pg_gpt2_load(dir_.c_str(), 1, 0, nullptr, &m), PG_API_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(m, nullptr);
    const std::string message = pg_last_error();
    for (const std::string& p : parts) EXPECT_NE(message.find(p), std::string::npos) << message;
    pg_gpt2_free(m);
  }

  fs::path dir_;
};

TEST_F(Gpt2, LogitsOfAZeroLayerModelMatchAHandComputation) {
  write("config.json", kConfig);
  write("model.safetensors", st_file(weights()));
  pg_gpt2_t m = nullptr;
  ASSERT_EQ(pg_gpt2_load(dir_.c_str(), 1, 0, nullptr, &m), PG_API_OK) << pg_last_error();
  int64_t cfg[8];
  size_t count = 0;
  ASSERT_EQ(pg_gpt2_config(m, cfg, 8, &count), PG_API_OK);
  EXPECT_EQ(count, 8u);
  EXPECT_EQ(cfg[0], kV);
  EXPECT_EQ(cfg[7], kP);  // max_seq_len 0: n_positions
  // Token ids as floats holding whole numbers (the seed's convention).
  const float ids[] = {3, 0, 4};
  const int64_t shape[] = {1, 3};
  pg_tensor_t tokens = nullptr, logits = nullptr;
  ASSERT_EQ(pg_tensor_from_data(ids, PG_DTYPE_FLOAT32, shape, 2, nullptr, &tokens), PG_API_OK);
  ASSERT_EQ(pg_gpt2_forward(m, tokens, nullptr, &logits), PG_API_OK) << pg_last_error();
  std::vector<float> got(3 * kV);
  ASSERT_EQ(pg_tensor_to_host(logits, got.data(), got.size() * sizeof(float)), PG_API_OK)
      << pg_last_error();
  const auto w = weights();
  const auto& wte = w.at("transformer.wte.weight").values;
  const auto& wpe = w.at("transformer.wpe.weight").values;
  const auto& g = w.at("transformer.ln_f.weight").values;
  const auto& b = w.at("transformer.ln_f.bias").values;
  for (int t = 0; t < 3; ++t) {
    const int id = static_cast<int>(ids[t]);
    double x[kD], mean = 0, var = 0;
    for (int j = 0; j < kD; ++j) mean += x[j] = wte[id * kD + j] + wpe[t * kD + j];
    mean /= kD;
    for (double v : x) var += (v - mean) * (v - mean) / kD;
    for (int j = 0; j < kD; ++j) x[j] = (x[j] - mean) / std::sqrt(var + 1e-5) * g[j] + b[j];
    for (int v = 0; v < kV; ++v)
      EXPECT_NEAR(got[t * kV + v], x[0] * wte[v * kD] + x[1] * wte[v * kD + 1], 1e-4)
          << "token " << t << ", logit " << v;
  }
  // The KV-cache path gives the last position's logits.
  pg_tensor_t last = nullptr;
  ASSERT_EQ(pg_gpt2_prefill(m, tokens, &last), PG_API_OK) << pg_last_error();
  std::vector<float> got_last(kV);
  ASSERT_EQ(pg_tensor_to_host(last, got_last.data(), kV * sizeof(float)), PG_API_OK);
  for (int v = 0; v < kV; ++v) EXPECT_NEAR(got_last[v], got[2 * kV + v], 1e-5);
  int64_t pos = 0;
  ASSERT_EQ(pg_gpt2_position(m, &pos), PG_API_OK);
  EXPECT_EQ(pos, 3);
  pg_tensor_t next = nullptr;
  const float one[] = {1};
  const int64_t one_shape[] = {1, 1};
  pg_tensor_t tok1 = nullptr;
  ASSERT_EQ(pg_tensor_from_data(one, PG_DTYPE_FLOAT32, one_shape, 2, nullptr, &tok1), PG_API_OK);
  EXPECT_EQ(pg_gpt2_step(m, tok1, &next), PG_API_ERR_INVALID_ARGUMENT);  // the cache is full
  EXPECT_NE(std::string(pg_last_error()).find("KV cache is full"), std::string::npos);
  for (pg_tensor_t t : {tokens, logits, last, tok1}) pg_tensor_free(t);
  pg_gpt2_free(m);
}

TEST_F(Gpt2, NoConfigJson) {
  write("model.safetensors", st_file(weights()));
  expect_load_error({dir_.string(), "has no config.json"});
}

TEST_F(Gpt2, UnsupportedModelTypeIsNamed) {
  write("config.json", R"({"model_type": "bert"})");
  write("model.safetensors", st_file(weights()));
  expect_load_error({"config.json", "unsupported model_type 'bert'"});
}

TEST_F(Gpt2, NoWeights) {
  write("config.json", kConfig);
  expect_load_error({"neither model.safetensors nor model.safetensors.index.json"});
}

TEST_F(Gpt2, TruncatedFileIsNamed) {
  write("config.json", kConfig);
  const std::string file = st_file(weights());
  write("model.safetensors", file.substr(0, file.size() - 12));
  expect_load_error({(dir_ / "model.safetensors").string()});
}

TEST_F(Gpt2, MissingTensorNamesFileAndKey) {
  write("config.json", kConfig);
  auto w = weights();
  w.erase("transformer.ln_f.bias");
  write("model.safetensors", st_file(w));
  expect_load_error({"model.safetensors: no tensor 'ln_f.bias' (nor 'transformer.ln_f.bias')"});
}

TEST_F(Gpt2, MisshapenTensorNamesFileKeyAndShapes) {
  write("config.json", kConfig);
  auto w = weights();
  w["transformer.wpe.weight"].shape = {kD, kP};
  write("model.safetensors", st_file(w));
  expect_load_error(
      {"model.safetensors: tensor 'transformer.wpe.weight' has shape (2, 3), "
       "GPT-2 needs (3, 2)"});
}

TEST_F(Gpt2, ShardMissingFromTheIndexIsNamed) {
  write("config.json", kConfig);
  write("model.safetensors.index.json",
        R"({"weight_map": {"transformer.wte.weight": "model-00001-of-00002.safetensors"}})");
  expect_load_error({"model.safetensors.index.json", "model-00001-of-00002.safetensors"});
}

TEST_F(Gpt2, LoadBytesNamesTheWeightsFile) {
  const std::string file = st_file(weights());
  const uint8_t* files[] = {reinterpret_cast<const uint8_t*>(file.data())};
  const size_t sizes[] = {file.size() - 4};
  pg_gpt2_t m = nullptr;
  EXPECT_EQ(pg_gpt2_load_bytes(kConfig, std::strlen(kConfig), files, sizes, 1, 1, 0, nullptr, &m),
            PG_API_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(pg_last_error()).find("weights[0]"), std::string::npos) << pg_last_error();
  pg_gpt2_free(m);
}

// "hello world" with merges h e, l l, he ll, hell o, Ġ w, Ġw o over a vocabulary whose id of a
// byte's stand-in is the byte: "hello" (259), " wo" (261), r, l, d.
TEST(Tokenizer, EncodesAndDecodesFixedStrings) {
  std::string vocab = "{";
  // GPT-2's bytes_to_unicode: printable bytes stand for themselves, the others for 256 + n.
  int extra = 0;
  for (int byte = 0; byte < 256; ++byte) {
    const bool printable =
        (byte >= '!' && byte <= '~') || (byte >= 0xA1 && byte <= 0xAC) || byte >= 0xAE;
    const int cp = printable ? byte : 256 + extra++;
    char buf[16];
    std::snprintf(buf, sizeof buf, "\\u%04x", cp);
    if (byte) vocab.append(",");
    vocab.append("\"").append(buf).append("\":").append(std::to_string(byte));
  }
  vocab += R"(,"he":256,"ll":257,"hell":258,"hello":259,"\u0120w":260,"\u0120wo":261})";
  const std::string merges = "#version: 0.2\nh e\nl l\nhe ll\nhell o\n\xC4\xA0 w\n\xC4\xA0w o\n";
  pg_tokenizer_t t = nullptr;
  ASSERT_EQ(pg_tokenizer_load_bytes(vocab.data(), vocab.size(), merges.data(), merges.size(), &t),
            PG_API_OK)
      << pg_last_error();
  const std::string text = "hello world";
  int64_t ids[8];
  size_t count = 0;
  ASSERT_EQ(pg_tokenizer_encode(t, text.data(), text.size(), ids, 8, &count), PG_API_OK)
      << pg_last_error();
  ASSERT_EQ(count, 5u);
  const int64_t want[] = {259, 261, 'r', 'l', 'd'};
  for (size_t i = 0; i < 5; ++i) EXPECT_EQ(ids[i], want[i]) << i;
  char out[32];
  size_t size = 0;
  ASSERT_EQ(pg_tokenizer_decode(t, ids, count, out, sizeof out, &size), PG_API_OK);
  EXPECT_EQ(std::string(out, size), text);
  const int64_t bad = 999;
  EXPECT_EQ(pg_tokenizer_decode(t, &bad, 1, out, sizeof out, &size), PG_API_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(pg_last_error()).find("id 999"), std::string::npos);
  pg_tokenizer_free(t);
}

}  // namespace
