#include "models/bpe_tokenizer.hpp"
#include "models/json_read.hpp"

#include <polygrad/error.hpp>

#include <locale.h>
#include <array>
#include <clocale>
#include <cwctype>
#include <fstream>
#include <limits>
#include <sstream>

namespace polygrad::models {

namespace {

// ---- code points ---------------------------------------------------------------------------

void append_utf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

// A code point and the bytes of the text it came from (an invalid byte is a "code point" of
// its own, classified as other).
struct Char {
  uint32_t cp;
  size_t begin, end;
  bool valid;
};

std::vector<Char> split_chars(const std::string& text) {
  std::vector<Char> out;
  size_t i = 0;
  while (i < text.size()) {
    const size_t n = utf8_error_offset(text.data() + i, std::min<size_t>(4, text.size() - i));
    const auto b0 = static_cast<unsigned char>(text[i]);
    const size_t len = b0 < 0x80 ? 1 : b0 < 0xE0 ? 2 : b0 < 0xF0 ? 3 : 4;
    if (b0 >= 0x80 && (b0 < 0xC2 || b0 > 0xF4 || n < len)) {
      out.push_back({b0, i, i + 1, false});
      ++i;
      continue;
    }
    uint32_t cp = len == 1 ? b0 : len == 2 ? (b0 & 0x1F) : len == 3 ? (b0 & 0x0F) : (b0 & 0x07);
    for (size_t k = 1; k < len; ++k)
      cp = (cp << 6) | (static_cast<unsigned char>(text[i + k]) & 0x3F);
    out.push_back({cp, i, i + len, true});
    i += len;
  }
  return out;
}

enum class Class { letter, number, space, other };

bool is_space(uint32_t c) {
  return (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x20) || c == 0x85 || c == 0xA0 ||
         c == 0x1680 || (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F ||
         c == 0x205F || c == 0x3000;
}

bool is_number(uint32_t c) {
  static constexpr std::array<std::pair<uint32_t, uint32_t>, 16> ranges = {{
      {0x30, 0x39},
      {0xB2, 0xB3},
      {0xB9, 0xB9},
      {0xBC, 0xBE},
      {0x660, 0x669},
      {0x6F0, 0x6F9},
      {0x966, 0x96F},
      {0x9E6, 0x9EF},
      {0x2070, 0x2079},
      {0x2080, 0x2089},
      {0x2150, 0x2189},
      {0x2460, 0x249B},
      {0x3007, 0x3007},
      {0x3021, 0x3029},
      {0xFF10, 0xFF19},
      {0x1D7CE, 0x1D7FF},
  }};
  for (const auto& [lo, hi] : ranges)
    if (c >= lo && c <= hi) return true;
  return false;
}

bool is_letter(uint32_t c) {
  if (c < 0x80) return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
  static const locale_t utf8 = newlocale(LC_CTYPE_MASK, "C.UTF-8", static_cast<locale_t>(0));
  if (utf8 == static_cast<locale_t>(0)) return false;
  return iswalpha_l(static_cast<wint_t>(c), utf8) != 0;
}

Class classify(const Char& ch) {
  if (!ch.valid) return Class::other;
  if (is_space(ch.cp)) return Class::space;
  if (is_number(ch.cp)) return Class::number;
  if (is_letter(ch.cp)) return Class::letter;
  return Class::other;
}

// The end (in chars) of GPT-2's pre-token that starts at i.
size_t pretoken_end(const std::vector<Char>& cs, const std::vector<Class>& cl, size_t i) {
  const size_t n = cs.size();
  // 's|'t|'re|'ve|'m|'ll|'d
  if (cs[i].cp == '\'' && i + 1 < n) {
    const uint32_t a = cs[i + 1].cp, b = i + 2 < n ? cs[i + 2].cp : 0;
    if (a == 's' || a == 't' || a == 'm' || a == 'd') return i + 2;
    if ((a == 'r' && b == 'e') || (a == 'v' && b == 'e') || (a == 'l' && b == 'l')) return i + 3;
  }
  //  ?\p{L}+ |  ?\p{N}+ |  ?[^\s\p{L}\p{N}]+
  const size_t j = cs[i].cp == ' ' && i + 1 < n ? i + 1 : i;
  if (cl[j] != Class::space) {
    size_t e = j;
    while (e < n && cl[e] == cl[j]) ++e;
    return e;
  }
  // \s+(?!\S) | \s+
  size_t e = i;
  while (e < n && cl[e] == Class::space) ++e;
  if (e == n || e - i == 1) return e;
  return e - 1;  // the last space goes with the next piece
}

// GPT-2's bytes_to_unicode: each byte's printable stand-in, as UTF-8.
const std::array<std::string, 256>& byte_symbols() {
  static const std::array<std::string, 256> table = [] {
    std::array<std::string, 256> t;
    uint32_t extra = 0;
    for (uint32_t b = 0; b < 256; ++b) {
      const bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE;
      append_utf8(t[b], printable ? b : 256 + extra++);
    }
    return t;
  }();
  return table;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) user_error(path + ": cannot open");
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

BpeTokenizer BpeTokenizer::load(const std::string& vocab_path, const std::string& merges_path) {
  return from_text(read_file(vocab_path), read_file(merges_path), vocab_path, merges_path);
}

BpeTokenizer BpeTokenizer::from_text(const std::string& vocab_json, const std::string& merges_txt,
                                     const std::string& vocab_name,
                                     const std::string& merges_name) {
  BpeTokenizer t;
  const Json v = read_json(vocab_json.data(), vocab_json.size(), vocab_name).root;
  if (!v.is_object()) user_error(vocab_name + ": is not a JSON object (symbol -> id)");
  for (const auto& [symbol, id] : v.items()) {
    if (!id.is_number_integer() || id.get<int64_t>() < 0)
      user_error(vocab_name + ": the id of " + quote_key(symbol) +
                 " is not a non-negative integer: " + id.dump().substr(0, 40));
    const int64_t i = id.get<int64_t>();
    if (!t.by_id_.emplace(i, symbol).second)
      user_error(vocab_name + ": id " + std::to_string(i) + " is given to both " +
                 quote_key(t.by_id_[i]) + " and " + quote_key(symbol));
    t.vocab_.emplace(symbol, i);
    if (symbol.size() > 4 && symbol.rfind("<|", 0) == 0 &&
        symbol.compare(symbol.size() - 2, 2, "|>") == 0)
      t.specials_.emplace_back(symbol, i);
    t.vocab_size_ = std::max(t.vocab_size_, i + 1);
  }
  std::istringstream lines(merges_txt);
  std::string line;
  size_t number = 0;
  while (std::getline(lines, line)) {
    ++number;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty() || (number == 1 && line.rfind("#version", 0) == 0)) continue;
    const size_t sp = line.find(' ');
    if (sp == std::string::npos || sp == 0 || sp + 1 == line.size() ||
        line.find(' ', sp + 1) != std::string::npos)
      user_error(merges_name + ": line " + std::to_string(number) +
                 " is not two symbols separated by one space: " + quote_key(line.substr(0, 80)));
    t.merge_rank_.emplace(line, t.merge_rank_.size());
  }
  return t;
}

std::vector<std::string> BpeTokenizer::bpe(const std::vector<std::string>& symbols) const {
  std::vector<std::string> s = symbols;
  while (s.size() > 1) {
    size_t best = std::numeric_limits<size_t>::max(), at = 0;
    for (size_t i = 0; i + 1 < s.size(); ++i) {
      auto it = merge_rank_.find(s[i] + " " + s[i + 1]);
      if (it != merge_rank_.end() && it->second < best) {
        best = it->second;
        at = i;
      }
    }
    if (best == std::numeric_limits<size_t>::max()) break;
    const std::string a = s[at], b = s[at + 1];
    std::vector<std::string> merged;
    for (size_t i = 0; i < s.size(); ++i) {
      if (i + 1 < s.size() && s[i] == a && s[i + 1] == b) {
        merged.push_back(a + b);
        ++i;
      } else {
        merged.push_back(s[i]);
      }
    }
    s = std::move(merged);
  }
  return s;
}

std::vector<int64_t> BpeTokenizer::encode(const std::string& text) const {
  std::vector<int64_t> ids;
  size_t from = 0;
  while (from < text.size()) {
    // The earliest (then longest) special token from `from` on.
    size_t at = std::string::npos, len = 0;
    int64_t special_id = 0;
    for (const auto& [symbol, id] : specials_) {
      const size_t found = text.find(symbol, from);
      if (found != std::string::npos && (found < at || (found == at && symbol.size() > len))) {
        at = found;
        len = symbol.size();
        special_id = id;
      }
    }
    const size_t end = at == std::string::npos ? text.size() : at;
    const std::vector<int64_t> piece = encode_ordinary(text.substr(from, end - from));
    ids.insert(ids.end(), piece.begin(), piece.end());
    if (at == std::string::npos) break;
    ids.push_back(special_id);
    from = at + len;
  }
  return ids;
}

std::vector<int64_t> BpeTokenizer::encode_ordinary(const std::string& text) const {
  const std::vector<Char> cs = split_chars(text);
  std::vector<Class> cl;
  for (const Char& c : cs) cl.push_back(classify(c));
  const auto& bytes = byte_symbols();
  std::vector<int64_t> ids;
  for (size_t i = 0; i < cs.size();) {
    const size_t e = pretoken_end(cs, cl, i);
    std::vector<std::string> symbols;
    for (size_t k = cs[i].begin; k < cs[e - 1].end; ++k)
      symbols.push_back(bytes[static_cast<unsigned char>(text[k])]);
    for (const std::string& sym : bpe(symbols)) {
      auto it = vocab_.find(sym);
      if (it == vocab_.end())
        user_error("tokenizer: the vocabulary has no symbol " + quote_key(sym) +
                   " (from the text at byte " + std::to_string(cs[i].begin) + ")");
      ids.push_back(it->second);
    }
    i = e;
  }
  return ids;
}

std::string BpeTokenizer::decode(const std::vector<int64_t>& ids) const {
  static const std::unordered_map<uint32_t, unsigned char> byte_of = [] {
    std::unordered_map<uint32_t, unsigned char> m;
    const auto& bytes = byte_symbols();
    for (int b = 0; b < 256; ++b)
      m.emplace(split_chars(bytes[b]).at(0).cp, static_cast<unsigned char>(b));
    return m;
  }();
  std::string out;
  for (int64_t id : ids) {
    auto it = by_id_.find(id);
    if (it == by_id_.end())
      user_error("tokenizer: id " + std::to_string(id) + " is not in the vocabulary");
    for (const Char& c : split_chars(it->second)) {
      auto b = byte_of.find(c.cp);
      if (!c.valid || b == byte_of.end())
        user_error("tokenizer: the symbol " + quote_key(it->second) + " of id " +
                   std::to_string(id) + " is not made of byte stand-ins");
      out += static_cast<char>(b->second);
    }
  }
  return out;
}

}  // namespace polygrad::models
