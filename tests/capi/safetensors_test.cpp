// The safetensors entries of the C API (pg_safetensors_*), against files this test writes byte
// by byte (an 8-byte little-endian length, the JSON header text, the data), independently of
// the core's writer; and the core's writer, read back byte by byte.
#include <polygrad/polygrad.h>

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

std::string le64(uint64_t n) {
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>((n >> (8 * i)) & 0xff);
  return out;
}

template <class T>
std::string bytes_of(const std::vector<T>& v) {
  return std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
}

std::string st_file(const std::string& header, const std::string& data) {
  return le64(header.size()) + header + data;
}

class Safetensors : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("pg_safetensors_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string write(const std::string& name, const std::string& bytes) {
    const std::string path = (dir_ / name).string();
    std::ofstream(path, std::ios::binary) << bytes;
    return path;
  }

  // Opens `path`, expecting a failure whose message names the path and holds every `parts`.
  void expect_open_error(const std::string& path, const std::vector<std::string>& parts,
                         bool index = false) {
    pg_safetensors_t f = nullptr;
    const pg_api_status s =
        index ? pg_safetensors_open_index(path.c_str(), &f) : pg_safetensors_open(path.c_str(), &f);
    EXPECT_EQ(s, PG_API_ERR_INVALID_ARGUMENT) << path;
    EXPECT_EQ(f, nullptr);
    const std::string message = pg_last_error();
    EXPECT_NE(message.find(path), std::string::npos) << message;
    for (const std::string& p : parts) EXPECT_NE(message.find(p), std::string::npos) << message;
    pg_safetensors_free(f);
  }

  fs::path dir_;
};

pg_safetensors_t open_ok(const std::string& path) {
  pg_safetensors_t f = nullptr;
  EXPECT_EQ(pg_safetensors_open(path.c_str(), &f), PG_API_OK) << pg_last_error();
  return f;
}

template <class T>
std::vector<T> values(pg_safetensors_t f, const char* name, pg_dtype as = PG_DTYPE_VOID) {
  pg_tensor_t t = nullptr;
  EXPECT_EQ(pg_safetensors_tensor(f, name, as, "cpu", &t), PG_API_OK) << pg_last_error();
  if (t == nullptr) return {};
  int64_t n = 0;
  pg_tensor_numel(t, &n);
  std::vector<T> out(static_cast<size_t>(n));
  if (n > 0) {
    EXPECT_EQ(pg_tensor_to_host(t, out.data(), out.size() * sizeof(T)), PG_API_OK)
        << pg_last_error();
  }
  pg_tensor_free(t);
  return out;
}

std::vector<int64_t> shape_of(pg_safetensors_t f, size_t i) {
  int64_t dims[8];
  size_t ndim = 0;
  EXPECT_EQ(pg_safetensors_shape(f, i, dims, 8, &ndim), PG_API_OK) << pg_last_error();
  return std::vector<int64_t>(dims, dims + ndim);
}

TEST_F(Safetensors, ReadsEveryEntryOfAHandWrittenFile) {
  const std::vector<float> w = {1.5f, -2.0f, 0.25f, 3.0f, 4.0f, -0.5f};
  const std::vector<int64_t> i = {-3, 1LL << 40};
  const std::vector<uint8_t> u = {0, 7, 255};
  const std::vector<uint8_t> b = {1, 0, 1, 1};
  const std::vector<double> s = {6.25};
  const std::vector<int16_t> h = {-300, 300};
  std::string data = bytes_of(w);  // [0, 24)
  data += bytes_of(i);             // [24, 40)
  data += bytes_of(u);             // [40, 43)
  data += bytes_of(b);             // [43, 47)
  data += bytes_of(s);             // [47, 55)
  data += bytes_of(h);             // [55, 59)
  const std::string header = R"({"__metadata__":{"format":"pt","note":"caf\u00e9"},)"
                             R"("w":{"dtype":"F32","shape":[2,3],"data_offsets":[0,24]},)"
                             R"("i":{"dtype":"I64","shape":[2],"data_offsets":[24,40]},)"
                             R"("u":{"dtype":"U8","shape":[3],"data_offsets":[40,43]},)"
                             R"("b":{"dtype":"BOOL","shape":[2,2],"data_offsets":[43,47]},)"
                             R"("s":{"dtype":"F64","shape":[],"data_offsets":[47,55]},)"
                             R"("h":{"dtype":"I16","shape":[2],"data_offsets":[55,59]},)"
                             R"("e":{"dtype":"F32","shape":[0,3],"data_offsets":[59,59]}}   )";
  pg_safetensors_t f = open_ok(write("a.safetensors", st_file(header, data)));
  ASSERT_NE(f, nullptr);
  size_t count = 0;
  ASSERT_EQ(pg_safetensors_count(f, &count), PG_API_OK);
  ASSERT_EQ(count, 7u);
  const char* names[] = {"w", "i", "u", "b", "s", "h", "e"};
  const char* dtype_names[] = {"F32", "I64", "U8", "BOOL", "F64", "I16", "F32"};
  const pg_dtype dtypes[] = {PG_DTYPE_FLOAT32, PG_DTYPE_INT64, PG_DTYPE_UINT8,  PG_DTYPE_BOOL,
                             PG_DTYPE_FLOAT64, PG_DTYPE_INT16, PG_DTYPE_FLOAT32};
  for (size_t k = 0; k < count; ++k) {
    const char* name = nullptr;
    const char* dtype_name = nullptr;
    pg_dtype dtype = PG_DTYPE_VOID;
    size_t ndim = 99;
    ASSERT_EQ(pg_safetensors_entry(f, k, &name, &dtype_name, &dtype, &ndim), PG_API_OK);
    EXPECT_STREQ(name, names[k]);
    EXPECT_STREQ(dtype_name, dtype_names[k]);
    EXPECT_EQ(dtype, dtypes[k]);
    EXPECT_EQ(ndim, shape_of(f, k).size());
    size_t found = 99;
    ASSERT_EQ(pg_safetensors_find(f, names[k], &found), PG_API_OK);
    EXPECT_EQ(found, k);
  }
  EXPECT_EQ(shape_of(f, 0), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(shape_of(f, 4), std::vector<int64_t>{});
  EXPECT_EQ(shape_of(f, 6), (std::vector<int64_t>{0, 3}));
  uint64_t begin = 0, end = 0;
  const char* file = nullptr;
  ASSERT_EQ(pg_safetensors_location(f, 1, &begin, &end, &file), PG_API_OK);
  EXPECT_EQ(begin, 24u);
  EXPECT_EQ(end, 40u);
  EXPECT_EQ(std::string(file), (dir_ / "a.safetensors").string());

  EXPECT_EQ(values<float>(f, "w"), w);
  EXPECT_EQ(values<int64_t>(f, "i"), i);
  EXPECT_EQ(values<uint8_t>(f, "u"), u);
  EXPECT_EQ(values<uint8_t>(f, "b"), b);
  EXPECT_EQ(values<double>(f, "s"), s);
  EXPECT_EQ(values<int16_t>(f, "h"), h);
  EXPECT_TRUE(values<float>(f, "e").empty());
  // Converted on request: int16 -> float32 by a cast.
  EXPECT_EQ(values<float>(f, "h", PG_DTYPE_FLOAT32), (std::vector<float>{-300.0f, 300.0f}));

  size_t nmeta = 0;
  ASSERT_EQ(pg_safetensors_metadata_count(f, &nmeta), PG_API_OK);
  ASSERT_EQ(nmeta, 2u);
  const char* key = nullptr;
  const char* value = nullptr;
  ASSERT_EQ(pg_safetensors_metadata(f, 1, &key, &value), PG_API_OK);
  EXPECT_STREQ(key, "note");
  EXPECT_STREQ(value, "caf\xc3\xa9");
  EXPECT_EQ(pg_safetensors_metadata(f, 2, &key, &value), PG_API_ERR_INDEX);
  EXPECT_EQ(pg_safetensors_entry(f, 7, nullptr, nullptr, nullptr, nullptr), PG_API_ERR_INDEX);

  pg_tensor_t t = nullptr;
  EXPECT_EQ(pg_safetensors_tensor(f, "missing", PG_DTYPE_VOID, "cpu", &t),
            PG_API_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(pg_last_error()).find("no tensor 'missing'"), std::string::npos);
  EXPECT_NE(std::string(pg_last_error()).find("a.safetensors"), std::string::npos);
  size_t found = 0;
  EXPECT_EQ(pg_safetensors_find(f, "missing", &found), PG_API_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(pg_last_error())
                .find("pg_safetensors_find: " + (dir_ / "a.safetensors").string() +
                      ": no tensor 'missing'"),
            std::string::npos)
      << pg_last_error();
  pg_safetensors_free(f);
}

TEST_F(Safetensors, HalfAndBfloat16WidenExactlyToFloat32) {
  // Bit patterns and their values, derived by hand from the formats.
  const std::vector<uint16_t> half = {0x3c00, 0xc000, 0x0001, 0x03ff,
                                      0x7bff, 0x7c00, 0x8000, 0x3555};
  const std::vector<float> half_values = {
      1.0f,     -2.0f, std::ldexp(1.0f, -24), 1023 * std::ldexp(1.0f, -24), 65504.0f,
      INFINITY, -0.0f, 1365.0f / 4096.0f};
  const std::vector<uint16_t> bf16 = {0x3f80, 0xc049, 0x0001, 0x7f80, 0x4780};
  const std::vector<float> bf16_values = {1.0f, -3.140625f, std::ldexp(1.0f, -133), INFINITY,
                                          65536.0f};
  const std::string header = R"({"h":{"dtype":"F16","shape":[8],"data_offsets":[0,16]},)"
                             R"("b":{"dtype":"BF16","shape":[5],"data_offsets":[16,26]},)"
                             R"("n":{"dtype":"F16","shape":[1],"data_offsets":[26,28]}})";
  const std::string data =
      bytes_of(half) + bytes_of(bf16) + bytes_of(std::vector<uint16_t>{0x7e00});
  pg_safetensors_t f = open_ok(write("h.safetensors", st_file(header, data)));
  ASSERT_NE(f, nullptr);
  const std::vector<float> h = values<float>(f, "h", PG_DTYPE_FLOAT32);
  ASSERT_EQ(h.size(), half_values.size());
  for (size_t k = 0; k < h.size(); ++k) {
    EXPECT_EQ(h[k], half_values[k]) << k;
    EXPECT_EQ(std::signbit(h[k]), std::signbit(half_values[k])) << k;
  }
  EXPECT_EQ(values<float>(f, "b", PG_DTYPE_FLOAT32), bf16_values);
  EXPECT_TRUE(std::isnan(values<float>(f, "n", PG_DTYPE_FLOAT32).at(0)));
  // As stored: the tensor keeps the file's dtype and bits.
  pg_tensor_t t = nullptr;
  ASSERT_EQ(pg_safetensors_tensor(f, "h", PG_DTYPE_VOID, "cpu", &t), PG_API_OK) << pg_last_error();
  pg_dtype dtype = PG_DTYPE_VOID;
  pg_tensor_dtype(t, &dtype);
  EXPECT_EQ(dtype, PG_DTYPE_FLOAT16);
  std::vector<uint16_t> bits(half.size());
  ASSERT_EQ(pg_tensor_to_host(t, bits.data(), bits.size() * 2), PG_API_OK) << pg_last_error();
  EXPECT_EQ(bits, half);
  pg_tensor_free(t);
  pg_safetensors_free(f);
}

TEST_F(Safetensors, ManyEntriesKeepTheHeadersOrder) {
  // 50000 entries named t0, t1, ..., t49999: the file's order is not the names' sorted order
  // (t10 < t2), and a parser that looked each new key up linearly took minutes here.
  const int n = 50000;
  std::string header = "{";
  for (int k = 0; k < n; ++k) {
    const std::string index = std::to_string(k), next = std::to_string(k + 1);
    if (k > 0) header += ',';
    header.append("\"t").append(index).append(R"(":{"dtype":"U8","shape":[1],"data_offsets":[)");
    header.append(index).append(",").append(next).append("]}");
  }
  header += "}";
  pg_safetensors_t f = open_ok(write("many.safetensors", st_file(header, std::string(n, 'x'))));
  ASSERT_NE(f, nullptr);
  size_t count = 0;
  ASSERT_EQ(pg_safetensors_count(f, &count), PG_API_OK);
  ASSERT_EQ(count, static_cast<size_t>(n));
  const std::pair<size_t, const char*> expected[] = {
      {0, "t0"}, {2, "t2"}, {10, "t10"}, {49999, "t49999"}};
  for (const auto& [k, want] : expected) {
    const char* name = nullptr;
    ASSERT_EQ(pg_safetensors_entry(f, k, &name, nullptr, nullptr, nullptr), PG_API_OK);
    EXPECT_STREQ(name, want);
  }
  pg_safetensors_free(f);
}

TEST_F(Safetensors, EightBitFloatsAreListedButNotLoadable) {
  const std::string header = R"({"q":{"dtype":"F8_E4M3","shape":[2],"data_offsets":[0,2]}})";
  const std::string path = write("q.safetensors", st_file(header, "\x01\x02"));
  pg_safetensors_t f = open_ok(path);
  ASSERT_NE(f, nullptr);
  pg_dtype dtype = PG_DTYPE_FLOAT32;
  ASSERT_EQ(pg_safetensors_entry(f, 0, nullptr, nullptr, &dtype, nullptr), PG_API_OK);
  EXPECT_EQ(dtype, PG_DTYPE_VOID);
  pg_tensor_t t = nullptr;
  EXPECT_EQ(pg_safetensors_tensor(f, "q", PG_DTYPE_VOID, "cpu", &t), PG_API_ERR_INVALID_ARGUMENT);
  const std::string message = pg_last_error();
  EXPECT_NE(message.find(path + ": tensor 'q' has dtype F8_E4M3"), std::string::npos) << message;
  pg_safetensors_free(f);
}

TEST_F(Safetensors, BrokenFilesAreErrorsNamingTheFileAndKey) {
  const std::string ok_entry = R"("w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]})";
  const std::string eight(8, '\0');
  expect_open_error(write("empty", ""), {"truncated: 0 bytes"});
  expect_open_error(write("short", std::string("\x10\x00\x00", 3)), {"truncated: 3 bytes"});
  expect_open_error(write("past_end", le64(96) + "{}"),
                    {"truncated: the header length 96 runs past the end of the file (10 bytes)"});
  expect_open_error(write("huge", le64(200'000'000) + "{}"),
                    {"header length 200000000 is over the 100 MB limit"});
  expect_open_error(write("garbage", st_file("\x89PNG\r\n\x1a\n", "")),
                    {"the header is not UTF-8 (byte 0x89 at offset 0)"});
  expect_open_error(write("latin1", st_file("{\"caf\xe9\":1}", "")),
                    {"the header is not UTF-8 (byte 0xe9 at offset 5)"});
  expect_open_error(write("not_json", st_file("{\"w\": [1,", "")),
                    {"the header is not valid JSON"});
  expect_open_error(write("array", st_file("[1, 2]", "")), {"the header is not a JSON object"});
  expect_open_error(write("dup", st_file("{" + ok_entry + "," + ok_entry + "}", eight)),
                    {"the key 'w' twice"});
  expect_open_error(
      write("dtype", st_file(R"({"w":{"dtype":"F17","shape":[2],"data_offsets":[0,8]}})", eight)),
      {"tensor 'w' has the unknown dtype 'F17'"});
  expect_open_error(
      write("no_shape", st_file(R"({"w":{"dtype":"F32","data_offsets":[0,8]}})", eight)),
      {"tensor 'w' has no \"shape\""});
  expect_open_error(
      write("neg", st_file(R"({"w":{"dtype":"F32","shape":[-2],"data_offsets":[0,8]}})", eight)),
      {"tensor 'w': \"shape\" [-2] holds something other than a size"});
  expect_open_error(
      write("size", st_file(R"({"w":{"dtype":"F32","shape":[2,3],"data_offsets":[0,8]}})", eight)),
      {"tensor 'w': \"data_offsets\" [0,8] hold 8 bytes, but F32 [2,3] needs 24"});
  expect_open_error(
      write("reversed", st_file(R"({"w":{"dtype":"U8","shape":[0],"data_offsets":[8,0]}})", eight)),
      {"tensor 'w': \"data_offsets\" [8,0] ends before it begins"});
  expect_open_error(
      write("offsets", st_file(R"({"w":{"dtype":"U8","shape":[2],"data_offsets":[0]}})", eight)),
      {"tensor 'w': \"data_offsets\" is not two sizes"});
  expect_open_error(write("truncated_data", st_file("{" + ok_entry + "}", "\x01\x02\x03")),
                    {"tensor 'w': \"data_offsets\" [0, 8] run past the end of the data (3 bytes"});
  expect_open_error(
      write("overlap",
            st_file("{" + ok_entry + R"(,"v":{"dtype":"I32","shape":[1],"data_offsets":[4,8]}})",
                    eight)),
      {"tensors 'w' [0, 8] and 'v' [4, 8] overlap"});
  expect_open_error(write("too_big", st_file(R"({"w":{"dtype":"F64","shape":[4294967296,)"
                                             R"(4294967296],"data_offsets":[0,8]}})",
                                             eight)),
                    {"tensor 'w': \"shape\" [4294967296,4294967296] is too large to address"});
  expect_open_error(write("meta", st_file(R"({"__metadata__":{"epoch":3}})", "")),
                    {"\"__metadata__\" 'epoch' is not a string"});
  expect_open_error(write("entry", st_file(R"({"w":[1,2]})", "")), {"tensor 'w' is not an object"});
  expect_open_error(write("deep", st_file(std::string(100, '[') + std::string(100, ']'), "")),
                    {"nests objects and arrays more than 64 deep"});
  expect_open_error((dir_ / "absent.safetensors").string(), {"cannot open"});
  expect_open_error(dir_.string(), {"is a directory"});
}

TEST_F(Safetensors, SavedFilesHoldTheBytesTheFormatPrescribes) {
  const std::vector<float> w = {1, 2, 3, 4, 5, 6};
  const std::vector<int32_t> i = {7, -8};
  const int64_t w_dims[] = {3, 2};
  const int64_t i_dims[] = {2};
  pg_tensor_t t[2] = {nullptr, nullptr};
  ASSERT_EQ(pg_tensor_from_data(w.data(), PG_DTYPE_FLOAT32, w_dims, 2, "cpu", &t[0]), PG_API_OK);
  ASSERT_EQ(pg_tensor_from_data(i.data(), PG_DTYPE_INT32, i_dims, 1, "cpu", &t[1]), PG_API_OK);
  pg_tensor_t doubled = nullptr;
  ASSERT_EQ(pg_tensor_mul_scalar(t[0], pg_scalar_float(2.0), &doubled), PG_API_OK);  // lazy
  const pg_tensor_t saved[2] = {doubled, t[1]};
  const char* names[] = {"layer.w", "idx"};
  const char* keys[] = {"format"};
  const char* vals[] = {"pt"};
  const std::string path = (dir_ / "out.safetensors").string();
  ASSERT_EQ(pg_safetensors_save(path.c_str(), names, saved, 2, keys, vals, 1), PG_API_OK)
      << pg_last_error();

  std::ifstream in(path, std::ios::binary);
  const std::string raw((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string header = R"({"__metadata__":{"format":"pt"},)"
                             R"("layer.w":{"dtype":"F32","shape":[3,2],"data_offsets":[0,24]},)"
                             R"("idx":{"dtype":"I32","shape":[2],"data_offsets":[24,32]}})";
  const std::string padded = header + std::string((8 - header.size() % 8) % 8, ' ');
  const std::vector<float> w2 = {2, 4, 6, 8, 10, 12};
  EXPECT_EQ(raw, st_file(padded, bytes_of(w2) + bytes_of(i)));

  pg_safetensors_t f = open_ok(path);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(values<float>(f, "layer.w"), w2);
  EXPECT_EQ(values<int32_t>(f, "idx"), i);
  pg_safetensors_free(f);

  // Errors name the path and the tensor; no partial file is left behind.
  const pg_tensor_t twice[2] = {t[0], t[1]};
  const char* same[] = {"a", "a"};
  EXPECT_EQ(pg_safetensors_save(path.c_str(), same, twice, 2, nullptr, nullptr, 0),
            PG_API_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(pg_last_error()).find(path + ": tensor 'a' is given twice"),
            std::string::npos)
      << pg_last_error();
  const char* latin1[] = {"caf\xe9"};
  EXPECT_EQ(pg_safetensors_save(path.c_str(), latin1, t, 1, nullptr, nullptr, 0),
            PG_API_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(pg_last_error()).find("the name is not UTF-8"), std::string::npos)
      << pg_last_error();
  const char* reserved[] = {"__metadata__"};
  EXPECT_EQ(pg_safetensors_save(path.c_str(), reserved, t, 1, nullptr, nullptr, 0),
            PG_API_ERR_INVALID_ARGUMENT);
  const std::string nowhere = (dir_ / "no" / "such" / "dir.safetensors").string();
  EXPECT_EQ(pg_safetensors_save(nowhere.c_str(), names, t, 1, nullptr, nullptr, 0),
            PG_API_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(pg_last_error()).find(nowhere + ": cannot write"), std::string::npos)
      << pg_last_error();
  size_t files = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir_)) ++files;
  EXPECT_EQ(files, 1u);  // out.safetensors only: no temporary left
  pg_tensor_free(doubled);
  pg_tensor_free(t[0]);
  pg_tensor_free(t[1]);
}

TEST_F(Safetensors, ShardedCheckpointsReadThroughTheirIndex) {
  const std::vector<float> a = {1, 2}, b = {3, 4, 5};
  const std::vector<int64_t> c = {9};
  write("model-00001-of-00002.safetensors",
        st_file(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                R"("c":{"dtype":"I64","shape":[1],"data_offsets":[8,16]}})",
                bytes_of(a) + bytes_of(c)));
  write("model-00002-of-00002.safetensors",
        st_file(R"({"b":{"dtype":"F32","shape":[3],"data_offsets":[0,12]}})", bytes_of(b)));
  const std::string index =
      write("model.safetensors.index.json",
            R"({"metadata":{"total_size":28,"format":"pt"},"weight_map":{)"
            R"("b":"model-00002-of-00002.safetensors","a":"model-00001-of-00002.safetensors",)"
            R"("c":"model-00001-of-00002.safetensors"}})");
  pg_safetensors_t f = nullptr;
  ASSERT_EQ(pg_safetensors_open_index(index.c_str(), &f), PG_API_OK) << pg_last_error();
  size_t count = 0;
  pg_safetensors_count(f, &count);
  ASSERT_EQ(count, 3u);
  const char* name = nullptr;
  const char* file = nullptr;
  ASSERT_EQ(pg_safetensors_entry(f, 0, &name, nullptr, nullptr, nullptr), PG_API_OK);
  EXPECT_STREQ(name, "b");  // the weight_map's order
  ASSERT_EQ(pg_safetensors_location(f, 0, nullptr, nullptr, &file), PG_API_OK);
  EXPECT_EQ(std::string(file), (dir_ / "model-00002-of-00002.safetensors").string());
  EXPECT_EQ(values<float>(f, "a"), a);
  EXPECT_EQ(values<float>(f, "b"), b);
  EXPECT_EQ(values<int64_t>(f, "c"), c);
  const char* key = nullptr;
  const char* value = nullptr;
  ASSERT_EQ(pg_safetensors_metadata(f, 0, &key, &value), PG_API_OK);
  EXPECT_STREQ(key, "total_size");
  EXPECT_STREQ(value, "28");
  pg_safetensors_free(f);

  expect_open_error(write("no_map.json", R"({"metadata":{}})"), {"has no \"weight_map\" object"},
                    true);
  expect_open_error(
      write("missing_key.json", R"({"weight_map":{"z":"model-00002-of-00002.safetensors"}})"),
      {"weight_map 'z' names the shard 'model-00002-of-00002.safetensors', which "
       "has no tensor 'z'"},
      true);
  expect_open_error(write("escape.json", R"({"weight_map":{"a":"../a.safetensors"}})"),
                    {"weight_map 'a': the shard '../a.safetensors' is not a file name inside"},
                    true);
  // A broken shard is reported with the shard's own path.
  write("bad-shard.safetensors", "\x01\x02");
  pg_safetensors_t g = nullptr;
  EXPECT_EQ(pg_safetensors_open_index(
                write("bad.json", R"({"weight_map":{"a":"bad-shard.safetensors"}})").c_str(), &g),
            PG_API_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(pg_last_error())
                .find((dir_ / "bad-shard.safetensors").string() + ": truncated: 2 bytes"),
            std::string::npos)
      << pg_last_error();
  expect_open_error(write("absent.json", R"({"weight_map":{"a":"nothere.safetensors"}})"),
                    {"nothere.safetensors: cannot open"}, true);
}

}  // namespace
