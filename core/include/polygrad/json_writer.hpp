// A small streaming JSON writer (header-only), used for machine-readable reports.
//
//   polygrad::JsonWriter w;
//   w.begin_object();
//   w.key("name").value("cpu_clang");
//   w.key("devices").begin_array().value(1).end_array();
//   w.end_object();
//   std::string text = w.str();
//
// Strings are escaped per RFC 8259: quote, backslash and every control character; other bytes
// (UTF-8) pass through. Non-finite doubles are written as null.
#ifndef POLYGRAD_JSON_WRITER_HPP
#define POLYGRAD_JSON_WRITER_HPP

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

namespace polygrad {

class JsonWriter {
 public:
  /// indent > 0 pretty-prints with that many spaces per level; 0 writes one line.
  explicit JsonWriter(int indent = 2) : indent_(indent) {}

  JsonWriter& begin_object() { return open('{'); }
  JsonWriter& end_object() { return close('}'); }
  JsonWriter& begin_array() { return open('['); }
  JsonWriter& end_array() { return close(']'); }

  /// The key of the next member; must be inside an object.
  JsonWriter& key(std::string_view k) {
    separate();
    write_string(k);
    out_ += indent_ > 0 ? ": " : ":";
    after_key_ = true;
    return *this;
  }

  JsonWriter& value(std::string_view s) {
    separate();
    write_string(s);
    return *this;
  }
  JsonWriter& value(const char* s) {
    if (s == nullptr) return null();
    return value(std::string_view(s));
  }
  JsonWriter& value(const std::string& s) { return value(std::string_view(s)); }
  JsonWriter& value(bool b) { return raw(b ? "true" : "false"); }
  JsonWriter& value(int v) { return raw(std::to_string(v)); }
  JsonWriter& value(long v) { return raw(std::to_string(v)); }
  JsonWriter& value(long long v) { return raw(std::to_string(v)); }
  JsonWriter& value(unsigned v) { return raw(std::to_string(v)); }
  JsonWriter& value(unsigned long v) { return raw(std::to_string(v)); }
  JsonWriter& value(unsigned long long v) { return raw(std::to_string(v)); }
  JsonWriter& value(double v) {
    if (!std::isfinite(v)) return null();
    char buf[32];
    std::snprintf(buf, sizeof(buf), "%.17g", v);
    return raw(buf);
  }
  JsonWriter& null() { return raw("null"); }

  /// The text written so far (complete once every object and array is closed).
  const std::string& str() const { return out_; }

  /// `s` as a quoted, escaped JSON string.
  static std::string quote(std::string_view s) {
    JsonWriter w(0);
    w.write_string(s);
    return w.out_;
  }

 private:
  JsonWriter& raw(std::string_view text) {
    separate();
    out_ += text;
    return *this;
  }
  JsonWriter& open(char c) {
    separate();
    out_ += c;
    first_.push_back(true);
    return *this;
  }
  JsonWriter& close(char c) {
    bool empty = first_.empty() || first_.back();
    if (!first_.empty()) first_.pop_back();
    if (!empty) newline();
    out_ += c;
    return *this;
  }
  // Writes the comma and line break that come before a value or key.
  void separate() {
    if (after_key_) {
      after_key_ = false;
      return;
    }
    if (first_.empty()) return;
    if (!first_.back()) out_ += ',';
    first_.back() = false;
    newline();
  }
  void newline() {
    if (indent_ <= 0) return;
    out_ += '\n';
    out_.append(first_.size() * static_cast<size_t>(indent_), ' ');
  }
  void write_string(std::string_view s) {
    out_ += '"';
    for (unsigned char c : s) {
      switch (c) {
        case '"':
          out_ += "\\\"";
          break;
        case '\\':
          out_ += "\\\\";
          break;
        case '\b':
          out_ += "\\b";
          break;
        case '\f':
          out_ += "\\f";
          break;
        case '\n':
          out_ += "\\n";
          break;
        case '\r':
          out_ += "\\r";
          break;
        case '\t':
          out_ += "\\t";
          break;
        default:
          if (c < 0x20) {
            char buf[8];
            std::snprintf(buf, sizeof(buf), "\\u%04x", c);
            out_ += buf;
          } else {
            out_ += static_cast<char>(c);
          }
      }
    }
    out_ += '"';
  }

  int indent_;
  std::string out_;
  std::vector<bool> first_;  // per open container: nothing written in it yet
  bool after_key_ = false;
};

}  // namespace polygrad

#endif  // POLYGRAD_JSON_WRITER_HPP
