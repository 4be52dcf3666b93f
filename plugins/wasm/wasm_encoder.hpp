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

/// 0xFD-prefixed SIMD128 opcodes (written with ByteWriter::simd()).
namespace simd {
constexpr uint32_t v128_load = 0x00, v128_store = 0x0B, v128_const = 0x0C, i8x16_shuffle = 0x0D;
constexpr uint32_t i8x16_splat = 0x0F, i16x8_splat = 0x10, i32x4_splat = 0x11, i64x2_splat = 0x12,
                   f32x4_splat = 0x13, f64x2_splat = 0x14;
constexpr uint32_t i8x16_extract_lane_s = 0x15, i8x16_extract_lane_u = 0x16,
                   i8x16_replace_lane = 0x17, i16x8_extract_lane_s = 0x18,
                   i16x8_extract_lane_u = 0x19, i16x8_replace_lane = 0x1A,
                   i32x4_extract_lane = 0x1B, i32x4_replace_lane = 0x1C, i64x2_extract_lane = 0x1D,
                   i64x2_replace_lane = 0x1E, f32x4_extract_lane = 0x1F, f32x4_replace_lane = 0x20,
                   f64x2_extract_lane = 0x21, f64x2_replace_lane = 0x22;
constexpr uint32_t i8x16_eq = 0x23, i8x16_ne = 0x24, i8x16_lt_s = 0x25, i8x16_lt_u = 0x26,
                   i16x8_eq = 0x2D, i16x8_ne = 0x2E, i16x8_lt_s = 0x2F, i16x8_lt_u = 0x30,
                   i32x4_eq = 0x37, i32x4_ne = 0x38, i32x4_lt_s = 0x39, i32x4_lt_u = 0x3A,
                   f32x4_eq = 0x41, f32x4_ne = 0x42, f32x4_lt = 0x43, f64x2_eq = 0x47,
                   f64x2_ne = 0x48, f64x2_lt = 0x49;
constexpr uint32_t v128_not = 0x4D, v128_and = 0x4E, v128_andnot = 0x4F, v128_or = 0x50,
                   v128_xor = 0x51, v128_bitselect = 0x52;
constexpr uint32_t f32x4_trunc = 0x69, f64x2_trunc = 0x7A;
constexpr uint32_t i8x16_neg = 0x61, i8x16_shl = 0x6B, i8x16_shr_s = 0x6C, i8x16_shr_u = 0x6D,
                   i8x16_add = 0x6E, i8x16_sub = 0x71, i8x16_max_s = 0x78, i8x16_max_u = 0x79;
constexpr uint32_t i16x8_neg = 0x81, i16x8_shl = 0x8B, i16x8_shr_s = 0x8C, i16x8_shr_u = 0x8D,
                   i16x8_add = 0x8E, i16x8_sub = 0x91, i16x8_mul = 0x95, i16x8_max_s = 0x98,
                   i16x8_max_u = 0x99;
constexpr uint32_t i32x4_neg = 0xA1, i32x4_shl = 0xAB, i32x4_shr_s = 0xAC, i32x4_shr_u = 0xAD,
                   i32x4_add = 0xAE, i32x4_sub = 0xB1, i32x4_mul = 0xB5, i32x4_max_s = 0xB8,
                   i32x4_max_u = 0xB9;
constexpr uint32_t i64x2_neg = 0xC1, i64x2_shl = 0xCB, i64x2_shr_s = 0xCC, i64x2_shr_u = 0xCD,
                   i64x2_add = 0xCE, i64x2_sub = 0xD1, i64x2_mul = 0xD5, i64x2_eq = 0xD6,
                   i64x2_ne = 0xD7, i64x2_lt_s = 0xD8, i64x2_gt_s = 0xD9;
constexpr uint32_t f32x4_neg = 0xE1, f32x4_sqrt = 0xE3, f32x4_add = 0xE4, f32x4_sub = 0xE5,
                   f32x4_mul = 0xE6, f32x4_div = 0xE7, f32x4_max = 0xE9, f32x4_pmax = 0xEB;
constexpr uint32_t f64x2_neg = 0xED, f64x2_sqrt = 0xEF, f64x2_add = 0xF0, f64x2_sub = 0xF1,
                   f64x2_mul = 0xF2, f64x2_div = 0xF3, f64x2_max = 0xF5, f64x2_pmax = 0xF7;
constexpr uint32_t i32x4_trunc_sat_f32x4_s = 0xF8, i32x4_trunc_sat_f32x4_u = 0xF9,
                   f32x4_convert_i32x4_s = 0xFA, f32x4_convert_i32x4_u = 0xFB;
}  // namespace simd
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
  /// An 0xFD-prefixed (SIMD128) instruction.
  void simd(uint32_t sub) {
    u8(0xFD);
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
