// A small writer of the WebAssembly binary format: LEB128 numbers, names, sections and the
// opcodes the renderer uses. No dependency beyond the standard library, so the renderer can be
// linked into a browser build.
#ifndef POLYGRAD_WASM_ENCODER_HPP
#define POLYGRAD_WASM_ENCODER_HPP

#include <cstdint>
#include <cstring>
#include <string>

namespace polygrad::wasm {

/// Value types of the binary format.
enum class ValType : uint8_t { I32 = 0x7F, I64 = 0x7E, F32 = 0x7D, F64 = 0x7C, V128 = 0x7B };

/// Section ids of the binary format.
enum class SectionId : uint8_t {
  Custom = 0,
  Type = 1,
  Import = 2,
  Function = 3,
  Global = 6,
  Export = 7,
  Code = 10
};

/// Opcodes (one byte; 0xFC-prefixed ones are written with misc()).
namespace op {
constexpr uint8_t block = 0x02, loop = 0x03, if_ = 0x04, else_ = 0x05, end = 0x0B, br = 0x0C,
                  br_if = 0x0D, select = 0x1B, local_get = 0x20, local_set = 0x21, local_tee = 0x22;
constexpr uint8_t i32_load = 0x28, i64_load = 0x29, f32_load = 0x2A, f64_load = 0x2B,
                  i32_load8_s = 0x2C, i32_load8_u = 0x2D, i32_load16_s = 0x2E, i32_load16_u = 0x2F,
                  i32_store = 0x36, i64_store = 0x37, f32_store = 0x38, f64_store = 0x39,
                  i32_store8 = 0x3A, i32_store16 = 0x3B;
constexpr uint8_t i32_const = 0x41, i64_const = 0x42, f32_const = 0x43, f64_const = 0x44;
constexpr uint8_t i32_eqz = 0x45, i32_eq = 0x46, i32_ne = 0x47, i32_lt_s = 0x48, i32_lt_u = 0x49,
                  i32_gt_s = 0x4A, i32_gt_u = 0x4B, i64_eqz = 0x50, i64_eq = 0x51, i64_ne = 0x52,
                  i64_lt_s = 0x53, i64_lt_u = 0x54, i64_gt_s = 0x55, i64_gt_u = 0x56, f32_eq = 0x5B,
                  f32_ne = 0x5C, f32_lt = 0x5D, f64_eq = 0x61, f64_ne = 0x62, f64_lt = 0x63;
constexpr uint8_t i32_add = 0x6A, i32_sub = 0x6B, i32_mul = 0x6C, i32_div_s = 0x6D,
                  i32_div_u = 0x6E, i32_rem_s = 0x6F, i32_rem_u = 0x70, i32_and = 0x71,
                  i32_or = 0x72, i32_xor = 0x73, i32_shl = 0x74, i32_shr_s = 0x75, i32_shr_u = 0x76;
constexpr uint8_t i64_add = 0x7C, i64_sub = 0x7D, i64_mul = 0x7E, i64_div_s = 0x7F,
                  i64_div_u = 0x80, i64_rem_s = 0x81, i64_rem_u = 0x82, i64_and = 0x83,
                  i64_or = 0x84, i64_xor = 0x85, i64_shl = 0x86, i64_shr_s = 0x87, i64_shr_u = 0x88;
constexpr uint8_t f32_neg = 0x8C, f32_trunc = 0x8F, f32_sqrt = 0x91, f32_add = 0x92, f32_sub = 0x93,
                  f32_mul = 0x94, f32_div = 0x95, f32_max = 0x97;
constexpr uint8_t f64_neg = 0x9A, f64_trunc = 0x9D, f64_sqrt = 0x9F, f64_add = 0xA0, f64_sub = 0xA1,
                  f64_mul = 0xA2, f64_div = 0xA3, f64_max = 0xA5;
constexpr uint8_t i32_wrap_i64 = 0xA7, i64_extend_i32_s = 0xAC, i64_extend_i32_u = 0xAD,
                  f32_convert_i32_s = 0xB2, f32_convert_i32_u = 0xB3, f32_convert_i64_s = 0xB4,
                  f32_convert_i64_u = 0xB5, f32_demote_f64 = 0xB6, f64_convert_i32_s = 0xB7,
                  f64_convert_i32_u = 0xB8, f64_convert_i64_s = 0xB9, f64_convert_i64_u = 0xBA,
                  f64_promote_f32 = 0xBB, i32_reinterpret_f32 = 0xBC, i64_reinterpret_f64 = 0xBD,
                  f32_reinterpret_i32 = 0xBE, f64_reinterpret_i64 = 0xBF, i32_extend8_s = 0xC0,
                  i32_extend16_s = 0xC1;
/// 0xFC-prefixed: saturating float-to-int truncation (never traps).
constexpr uint32_t i32_trunc_sat_f32_s = 0, i32_trunc_sat_f32_u = 1, i32_trunc_sat_f64_s = 2,
                   i32_trunc_sat_f64_u = 3, i64_trunc_sat_f32_s = 4, i64_trunc_sat_f32_u = 5,
                   i64_trunc_sat_f64_s = 6, i64_trunc_sat_f64_u = 7;
}  // namespace op

/// A growing byte string with the binary format's encodings.
class ByteWriter {
 public:
  void u8(uint8_t b) { bytes_.push_back(static_cast<char>(b)); }
  /// Unsigned LEB128.
  void uleb(uint64_t v) {
    do {
      uint8_t b = v & 0x7F;
      v >>= 7;
      u8(v ? (b | 0x80) : b);
    } while (v);
  }
  /// Signed LEB128.
  void sleb(int64_t v) {
    for (;;) {
      uint8_t b = v & 0x7F;
      v >>= 7;  // arithmetic
      bool done = (v == 0 && !(b & 0x40)) || (v == -1 && (b & 0x40));
      u8(done ? b : (b | 0x80));
      if (done) return;
    }
  }
  void f32(float f) { raw(&f, 4); }
  void f64(double f) { raw(&f, 8); }
  void name(const std::string& s) {
    uleb(s.size());
    bytes_ += s;
  }
  void raw(const void* p, size_t n) { bytes_.append(static_cast<const char*>(p), n); }
  void append(const ByteWriter& w) { bytes_ += w.bytes_; }
  /// A section: its id, its size, its contents.
  void section(SectionId id, const ByteWriter& contents) {
    u8(static_cast<uint8_t>(id));
    uleb(contents.size());
    append(contents);
  }
  /// An 0xFC-prefixed instruction.
  void misc(uint32_t sub) {
    u8(0xFC);
    uleb(sub);
  }
  /// A memory access immediate: alignment (log2 bytes) and a constant offset.
  void memarg(uint32_t align_log2, uint64_t offset) {
    uleb(align_log2);
    uleb(offset);
  }
  size_t size() const { return bytes_.size(); }
  const std::string& bytes() const { return bytes_; }
  std::string take() { return std::move(bytes_); }

 private:
  std::string bytes_;
};

}  // namespace polygrad::wasm

#endif
