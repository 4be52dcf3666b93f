// Helper functions emitted in front of every kernel. Plain C that also compiles as CUDA C++
// when helper_prefix carries __device__.
#include "writer.hpp"

namespace polygrad::cstyle::detail {

namespace {

// {P} is replaced by the helper prefix, {M} by the memcpy spelling.
constexpr const char* kHelpers =
    R"(/* 16-bit float formats with `mb` mantissa and `eb` exponent bits, round to nearest even. */
{P} unsigned short pg_to_small_float(double x, int mb, int eb) {
  unsigned long long b;
  {M}(&b, &x, 8);
  unsigned int sign = (unsigned int)(b >> 63) << (mb + eb);
  int e = (int)((b >> 52) & 0x7ff);
  unsigned long long m = b & 0xfffffffffffffull;
  unsigned int max_e = (1u << eb) - 1u;
  unsigned int inf = max_e << mb;
  if (e == 0x7ff) return (unsigned short)(sign | inf | (m ? (1u << (mb - 1)) : 0u));
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
{P} float pg_from_small_float(unsigned int h, int mb, int eb) {
  unsigned int max_e = (1u << eb) - 1u;
  unsigned int e = (h >> mb) & max_e;
  unsigned int m = h & ((1u << mb) - 1u);
  int negative = (h >> (mb + eb)) & 1u;
  double v;
  if (e == max_e) {
    v = m ? __builtin_nan("") : __builtin_inf();
  } else {
    int k = (e == 0 ? 1 : (int)e) - (int)(max_e >> 1) - mb;
    unsigned long long p = (unsigned long long)(k + 1023) << 52;
    double scale;
    {M}(&scale, &p, 8);
    v = (double)(e == 0 ? m : (m | (1u << mb))) * scale;
  }
  return (float)(negative ? -v : v);
}
{P} float pg_f16_to_f32(unsigned short h) { return pg_from_small_float(h, 10, 5); }
{P} unsigned short pg_f32_to_f16(double x) { return pg_to_small_float(x, 10, 5); }
{P} float pg_bf16_to_f32(unsigned short h) {
  unsigned int u = (unsigned int)h << 16;
  float f;
  {M}(&f, &u, 4);
  return f;
}
{P} unsigned short pg_f32_to_bf16(double x) { return pg_to_small_float(x, 7, 8); }
{P} float pg_round_f16(double x) { return pg_f16_to_f32(pg_f32_to_f16(x)); }
{P} float pg_round_bf16(double x) { return pg_bf16_to_f32(pg_f32_to_bf16(x)); }
/* max that is NaN when either input is NaN */
{P} float pg_max_f32(float a, float b) { return a != a ? a : (b != b ? b : (a > b ? a : b)); }
{P} double pg_max_f64(double a, double b) { return a != a ? a : (b != b ? b : (a > b ? a : b)); }
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

}  // namespace

std::string base_prelude(const DialectTable& table) {
  std::string text = kHelpers;
  replace_all(text, "{P}", table.helper_prefix);
  replace_all(text, "{M}", table.memcpy_name);
  return text;
}

}  // namespace polygrad::cstyle::detail
