// Helper functions emitted in front of every kernel. Plain C that also compiles as CUDA C++
// when helper_prefix carries __device__.
//
// 16-bit floats: pg_<fmt>_to_f32(bits) and pg_f32_to_<fmt>(float) convert between memory and
// registers and keep NaN payloads (a BITCAST round trip returns the same bits);
// pg_round_<fmt>(float) rounds an arithmetic result; pg_cast_<fmt>(double) converts any value
// with a single rounding. All round to nearest even.
#include "writer.hpp"

#include <cctype>
#include <initializer_list>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace polygrad::cstyle::detail {

namespace {

// {P} is replaced by the helper prefix, {M} by the memcpy spelling.
constexpr const char* kSmallFloat =
    R"(/* double -> 16-bit float with `mb` mantissa, `eb` exponent bits */
{P} unsigned short pg_to_small_float(double x, int mb, int eb) {
  unsigned long long b;
  {M}(&b, &x, 8);
  unsigned int sign = (unsigned int)(b >> 63) << (mb + eb);
  int e = (int)((b >> 52) & 0x7ff);
  unsigned long long m = b & 0xfffffffffffffull;
  unsigned int max_e = (1u << eb) - 1u;
  unsigned int inf = max_e << mb;
  if (e == 0x7ff) {
    unsigned int payload = (unsigned int)(m >> (52 - mb));
    return (unsigned short)(sign | inf | (m ? (payload ? payload : (1u << (mb - 1))) : 0u));
  }
  if (e == 0) return (unsigned short)sign;
  int E = e - 1023 + (int)(max_e >> 1);
  if (E >= (int)max_e) return (unsigned short)(sign | inf);
  unsigned long long full = m | (1ull << 52);
  int shift = E > 0 ? 52 - mb : 52 - mb + 1 - E;
  if (shift > 53) return (unsigned short)sign;
  unsigned long long q = full >> shift;
  unsigned long long rem = full & ((1ull << shift) - 1ull);
  unsigned long long half = 1ull << (shift - 1);
  if (rem > half || (rem == half && (q & 1ull))) q += 1ull;
  unsigned long long bits = E > 0 ? ((unsigned long long)(E - 1) << mb) + q : q;
  if (bits >= inf) bits = inf;
  return (unsigned short)(sign | (unsigned int)bits);
}
/* 16-bit float -> float, exact; NaN payloads move to the top of the float mantissa */
{P} float pg_from_small_float(unsigned int h, int mb, int eb) {
  unsigned int max_e = (1u << eb) - 1u;
  unsigned int e = (h >> mb) & max_e;
  unsigned int m = h & ((1u << mb) - 1u);
  unsigned int negative = (h >> (mb + eb)) & 1u;
  if (e == max_e) {
    unsigned int u = (negative << 31) | 0x7f800000u | (m << (23 - mb));
    float f;
    {M}(&f, &u, 4);
    return f;
  }
  int k = (e == 0 ? 1 : (int)e) - (int)(max_e >> 1) - mb;
  unsigned long long p = (unsigned long long)(k + 1023) << 52;
  double scale;
  {M}(&scale, &p, 8);
  double v = (double)(e == 0 ? m : (m | (1u << mb))) * scale;
  return (float)(negative ? -v : v);
}
/* float -> 16-bit float; NaNs keep the top of their payload and stay NaN */
{P} unsigned short pg_f32_to_small_float(float f, int mb, int eb) {
  unsigned int u;
  {M}(&u, &f, 4);
  if ((u & 0x7f800000u) == 0x7f800000u && (u & 0x7fffffu)) {
    unsigned int m = (u & 0x7fffffu) >> (23 - mb);
    return (unsigned short)(((u >> 31) << (mb + eb)) | (((1u << eb) - 1u) << mb) |
                            (m ? m : (1u << (mb - 1))));
  }
  return pg_to_small_float((double)f, mb, eb);
}
{P} float pg_bf16_to_f32(unsigned short h) {
  unsigned int u = (unsigned int)h << 16;
  float f;
  {M}(&f, &u, 4);
  return f;
}
{P} unsigned short pg_f32_to_bf16(float f) {
  unsigned int u;
  {M}(&u, &f, 4);
  if ((u & 0x7f800000u) == 0x7f800000u && (u & 0x7fffffu)) {
    unsigned int h = u >> 16;
    return (unsigned short)((h & 0x7fu) ? h : (h | 0x40u));
  }
  u += 0x7fffu + ((u >> 16) & 1u);
  return (unsigned short)(u >> 16);
}
{P} float pg_round_bf16(float x) { return pg_bf16_to_f32(pg_f32_to_bf16(x)); }
{P} float pg_cast_bf16(double x) { return pg_bf16_to_f32(pg_to_small_float(x, 7, 8)); }
)";

constexpr const char* kFloat16Software =
    R"({P} float pg_f16_to_f32(unsigned short h) { return pg_from_small_float(h, 10, 5); }
{P} unsigned short pg_f32_to_f16(float f) { return pg_f32_to_small_float(f, 10, 5); }
{P} float pg_round_f16(float x) { return pg_f16_to_f32(pg_to_small_float((double)x, 10, 5)); }
{P} float pg_cast_f16(double x) { return pg_f16_to_f32(pg_to_small_float(x, 10, 5)); }
)";

constexpr const char* kMisc = R"(/* max that is NaN when either input is NaN */
{P} float pg_max_f32(float a, float b) { return ((a > b) | (a != a)) ? a : b; }
{P} double pg_max_f64(double a, double b) { return ((a > b) | (a != a)) ? a : b; }
{P} double pg_i64_as_f64(long long x) {
  double d;
  {M}(&d, &x, 8);
  return d;
}
)";

void replace_all(std::string& s, const std::string& from, const std::string& to) {
  for (size_t pos = s.find(from); pos != std::string::npos; pos = s.find(from, pos + to.size()))
    s.replace(pos, from.size(), to);
}

/// Calls `f` with each identifier pg_... that `text` names.
template <typename F>
void each_name(std::string_view text, F&& f) {
  auto word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  for (size_t at = text.find("pg_"); at != std::string_view::npos; at = text.find("pg_", at + 1)) {
    if (at > 0 && word(text[at - 1])) continue;
    size_t end = at;
    while (end < text.size() && word(text[end])) ++end;
    f(text.substr(at, end - at));
  }
}

/// A helper: its comment and definition, the name it defines, and the helpers it calls.
struct Helper {
  std::string text, name;
  std::vector<size_t> calls;
};

/// The helpers of `text`: each starts at a line at column 0 that opens a comment or begins
/// with `prefix` (a comment's own definition continues it); bodies are indented, closed by a
/// "}" line.
std::vector<Helper> split_helpers(const std::string& text, const std::string& prefix) {
  std::vector<Helper> out;
  bool after_comment = false;
  for (size_t at = 0; at < text.size();) {
    size_t end = text.find('\n', at);
    end = end == std::string::npos ? text.size() : end + 1;
    const std::string line = text.substr(at, end - at);
    const bool comment = line.rfind("/*", 0) == 0;
    const bool defines = !prefix.empty() && line.rfind(prefix, 0) == 0;
    if ((comment || (defines && !after_comment)) || out.empty()) out.emplace_back();
    out.back().text += line;
    if (defines && out.back().name.empty()) {
      std::string first;
      each_name(std::string_view(line).substr(0, line.find('(')), [&](std::string_view n) {
        if (first.empty() || n < first) first = n;
      });
      out.back().name = first;
    }
    after_comment = comment;
    at = end;
  }
  return out;
}

/// A dialect's helpers, split once, with each one's calls and an index of their names.
struct Helpers {
  std::vector<Helper> list;
  std::unordered_map<std::string_view, size_t> by_name;
};

/// The helpers of `text` (the prelude with the dialect's spellings), split on first use; the
/// dialects of a process are few, each kept for the process.
const Helpers& helpers_of(const std::string& text, const std::string& prefix) {
  static std::mutex mu;
  static std::map<std::string, std::unique_ptr<const Helpers>> cache;
  std::lock_guard<std::mutex> lock(mu);
  auto& slot = cache[text];
  if (!slot) {
    auto h = std::make_unique<Helpers>();
    h->list = split_helpers(text, prefix);
    for (size_t i = 0; i < h->list.size(); ++i)
      if (!h->list[i].name.empty()) h->by_name.emplace(h->list[i].name, i);
    for (Helper& helper : h->list)
      each_name(helper.text, [&](std::string_view n) {
        auto it = h->by_name.find(n);
        if (it != h->by_name.end()) helper.calls.push_back(it->second);
      });
    slot = std::move(h);
  }
  return *slot;
}

}  // namespace

std::string base_prelude(const Dialect& dialect, std::initializer_list<std::string_view> uses) {
  const DialectTable& table = dialect.table();
  std::string f16 = dialect.float16_helpers();
  std::string text =
      std::string(kSmallFloat) + (f16.empty() ? kFloat16Software : f16) + kMisc + dialect.helpers();
  replace_all(text, "{P}", table.helper_prefix);
  replace_all(text, "{M}", table.memcpy_name);
  const Helpers& helpers = helpers_of(text, table.helper_prefix);
  // The helpers the kernel names, then those they call, until none is added.
  std::vector<char> wanted(helpers.list.size(), 0);
  std::vector<size_t> todo;
  auto want = [&](size_t i) {
    if (!wanted[i]) wanted[i] = 1, todo.push_back(i);
  };
  for (std::string_view text_used : uses)
    each_name(text_used, [&](std::string_view n) {
      auto it = helpers.by_name.find(n);
      if (it != helpers.by_name.end()) want(it->second);
    });
  for (size_t i = 0; i < helpers.list.size(); ++i)
    if (helpers.list[i].name.empty()) want(i);
  while (!todo.empty()) {
    const size_t i = todo.back();
    todo.pop_back();
    for (size_t c : helpers.list[i].calls) want(c);
  }
  std::string out;
  for (size_t i = 0; i < helpers.list.size(); ++i)
    if (wanted[i]) out += helpers.list[i].text;
  return out;
}

}  // namespace polygrad::cstyle::detail
