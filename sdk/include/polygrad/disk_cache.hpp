// polygrad plugin SDK: an on-disk cache of compiled kernels (header-only).
//
// One file per key, named by the key in hex:
//   magic (8 bytes, the plugin's) | key (32) | payload size (u64 LE) | SHA-256 of payload (32)
//   | payload
// written to a temporary file in the same directory and renamed into place, so readers never
// see a partial entry. Anything that does not check out is logged, removed and rebuilt. The
// directory must be the user's own and not writable by group or others; otherwise the cache
// is refused with one warning and the plugin compiles without it. A key is the SHA-256 of
// everything the payload depends on (source, options, architecture, compiler versions).
//
//   sdk::DiskCache cache(dir, host, "cuda", "PGCUBIN1", ".cubin");
//   const sdk::DiskCache::Key key = sdk::sha256(material);
//   if (cache.usable())
//     if (auto hit = cache.read(key)) return *hit;
//   ... compile ...; cache.write(key, bytes);
#ifndef POLYGRAD_DISK_CACHE_HPP
#define POLYGRAD_DISK_CACHE_HPP

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <polygrad/plugin.hpp>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <cpuid.h>
#include <immintrin.h>
#endif

#include <array>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace polygrad::sdk {

namespace detail {

inline constexpr uint32_t kSha256K[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

/// SHA-256's compression of `blocks` 64-byte blocks at `p` into the state `h`, in plain C++.
inline void sha256_blocks_portable(uint32_t h[8], const uint8_t* p, size_t blocks) {
  const uint32_t* k = kSha256K;
  auto rotr = [](uint32_t x, int r) { return (x >> r) | (x << (32 - r)); };
  for (; blocks > 0; --blocks, p += 64) {
    uint32_t w[64];
    for (int i = 0; i < 16; ++i)
      w[i] = uint32_t{p[4 * i]} << 24 | uint32_t{p[4 * i + 1]} << 16 | uint32_t{p[4 * i + 2]} << 8 |
             p[4 * i + 3];
    for (int i = 16; i < 64; ++i) {
      const uint32_t s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
      const uint32_t s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
      w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], hh = h[7];
    for (int i = 0; i < 64; ++i) {
      const uint32_t t1 =
          hh + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + k[i] + w[i];
      const uint32_t t2 = (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
      hh = g;
      g = f;
      f = e;
      e = d + t1;
      d = c;
      c = b;
      b = a;
      a = t1 + t2;
    }
    h[0] += a, h[1] += b, h[2] += c, h[3] += d, h[4] += e, h[5] += f, h[6] += g, h[7] += hh;
  }
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define POLYGRAD_SHA256_NI 1
/// The same with the x86 SHA extensions (about ten times the portable rate): the state as the
/// instructions want it (ABEF, CDGH), four rounds per group of four message words.
__attribute__((target("sha,sse4.1,ssse3"))) inline void sha256_blocks_ni(uint32_t h[8],
                                                                         const uint8_t* p,
                                                                         size_t blocks) {
  const __m128i swap = _mm_set_epi64x(0x0c0d0e0f08090a0bULL, 0x0405060700010203ULL);
  __m128i tmp = _mm_shuffle_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(h)), 0xB1);
  __m128i efgh = _mm_shuffle_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(h + 4)), 0x1B);
  __m128i abef = _mm_alignr_epi8(tmp, efgh, 8);
  __m128i cdgh = _mm_blend_epi16(efgh, tmp, 0xF0);
  for (; blocks > 0; --blocks, p += 64) {
    const __m128i abef0 = abef, cdgh0 = cdgh;
    __m128i w[4];  // message words 4g .. 4g+3 of group g, in w[g % 4]
    for (int g = 0; g < 16; ++g) {
      __m128i& m = w[g % 4];
      if (g < 4) {
        m = _mm_shuffle_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16 * g)), swap);
      } else {  // W[t] = s1(W[t-2]) + W[t-7] + s0(W[t-15]) + W[t-16], four at a time
        const __m128i t7 = _mm_alignr_epi8(w[(g + 3) % 4], w[(g + 2) % 4], 4);
        m = _mm_sha256msg2_epu32(_mm_add_epi32(_mm_sha256msg1_epu32(m, w[(g + 1) % 4]), t7),
                                 w[(g + 3) % 4]);
      }
      __m128i wk =
          _mm_add_epi32(m, _mm_loadu_si128(reinterpret_cast<const __m128i*>(kSha256K + 4 * g)));
      cdgh = _mm_sha256rnds2_epu32(cdgh, abef, wk);
      wk = _mm_shuffle_epi32(wk, 0x0E);
      abef = _mm_sha256rnds2_epu32(abef, cdgh, wk);
    }
    abef = _mm_add_epi32(abef, abef0);
    cdgh = _mm_add_epi32(cdgh, cdgh0);
  }
  tmp = _mm_shuffle_epi32(abef, 0x1B);
  cdgh = _mm_shuffle_epi32(cdgh, 0xB1);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(h), _mm_blend_epi16(tmp, cdgh, 0xF0));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(h + 4), _mm_alignr_epi8(cdgh, tmp, 8));
}

/// Whether this processor has the SHA extensions (CPUID 7 EBX bit 29) and SSE4.1 and SSSE3.
inline bool cpu_has_sha_ni() {
  static const bool yes = [] {
    unsigned a = 0, b = 0, c = 0, d = 0;
    if (__get_cpuid_count(7, 0, &a, &b, &c, &d) == 0 || ((b >> 29) & 1) == 0) return false;
    if (__get_cpuid(1, &a, &b, &c, &d) == 0) return false;
    return ((c >> 19) & 1) != 0 && ((c >> 9) & 1) != 0;
  }();
  return yes;
}
#endif

inline void sha256_blocks(uint32_t h[8], const uint8_t* p, size_t blocks) {
#ifdef POLYGRAD_SHA256_NI
  if (cpu_has_sha_ni()) return sha256_blocks_ni(h, p, blocks);
#endif
  sha256_blocks_portable(h, p, blocks);
}

}  // namespace detail

/// SHA-256 of `n` bytes at `data` (FIPS 180-4).
inline std::array<uint8_t, 32> sha256(const void* data, size_t n) {
  uint32_t h[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                   0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
  const auto* bytes = static_cast<const uint8_t*>(data);
  const size_t done = n / 64 * 64;
  detail::sha256_blocks(h, bytes, n / 64);
  uint8_t tail[128] = {};
  const size_t rest = n - done;
  if (rest > 0) std::memcpy(tail, bytes + done, rest);
  tail[rest] = 0x80;
  const size_t tail_len = rest + 9 <= 64 ? 64 : 128;
  const uint64_t bits = uint64_t{n} * 8;
  for (int i = 0; i < 8; ++i) tail[tail_len - 1 - i] = static_cast<uint8_t>(bits >> (8 * i));
  detail::sha256_blocks(h, tail, tail_len / 64);
  std::array<uint8_t, 32> out{};
  for (int i = 0; i < 8; ++i)
    for (int j = 0; j < 4; ++j) out[4 * i + j] = static_cast<uint8_t>(h[i] >> (24 - 8 * j));
  return out;
}

inline std::array<uint8_t, 32> sha256(const std::string& s) {
  return sha256(s.data(), s.size());
}

/// The default cache directory of plugin `name`: $XDG_CACHE_HOME/polygrad/<name>, else
/// ~/.cache/polygrad/<name>, else /tmp/polygrad-<uid>/<name>.
inline std::string default_cache_dir(const std::string& name) {
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  if (xdg != nullptr && xdg[0] == '/') return std::string(xdg) + "/polygrad/" + name;
  const char* home = std::getenv("HOME");
  if (home != nullptr && home[0] != '\0') return std::string(home) + "/.cache/polygrad/" + name;
  return "/tmp/polygrad-" + std::to_string(::getuid()) + "/" + name;
}

/// An on-disk cache of compiled kernels (see the top of this file).
class DiskCache {
 public:
  using Key = std::array<uint8_t, 32>;

  /// `label` names the cache in warnings ("cpu_clang"); `magic` is 8 characters; `suffix` ends
  /// every entry's file name (".pgobj").
  DiskCache(std::string directory, const Host& host, std::string label, const char (&magic)[9],
            std::string suffix)
      : directory_(std::move(directory)),
        host_(host),
        label_(std::move(label)),
        suffix_(std::move(suffix)) {
    std::memcpy(magic_, magic, 8);
  }

  const std::string& directory() const { return directory_; }

  std::string path_of(const Key& key) const {
    static const char* hex = "0123456789abcdef";
    std::string name;
    for (uint8_t b : key) {
      name += hex[b >> 4];
      name += hex[b & 15];
    }
    return directory_ + "/" + name + suffix_;
  }

  /// True when the directory exists (created 0700 if missing), is ours and is not writable by
  /// group or others. The first refusal is logged as a warning naming the directory.
  bool usable() {
    std::call_once(checked_, [this] {
      const std::string reason = refusal();
      usable_ = reason.empty();
      if (!usable_)
        host_.log(PG_LOG_WARNING, label_ + ": cache directory '" + directory_ +
                                      "' refused: " + reason + "; compiling without the cache");
    });
    return usable_;
  }

  /// The cached payload for `key`; nullopt on a miss. A corrupt entry is logged and removed.
  std::optional<std::vector<char>> read(const Key& key) {
    const std::string path = path_of(key);
    std::vector<char> file;
    if (!read_file(path, file)) return std::nullopt;  // a miss
    std::string problem;
    uint64_t size = 0;
    if (file.size() < kHeaderSize)
      problem = "shorter than its header";
    else if (std::memcmp(file.data(), magic_, 8) != 0)
      problem = "bad magic";
    else if (std::memcmp(file.data() + 8, key.data(), 32) != 0)
      problem = "key mismatch";
    else {
      std::memcpy(&size, file.data() + 40, 8);
      if (size != file.size() - kHeaderSize)
        problem = "payload is " + std::to_string(file.size() - kHeaderSize) +
                  " bytes, header says " + std::to_string(size);
      else if (std::memcmp(sha256(file.data() + kHeaderSize, size).data(), file.data() + 48, 32) !=
               0)
        problem = "payload checksum mismatch";
    }
    if (!problem.empty()) {
      host_.log(PG_LOG_WARNING,
                label_ + ": corrupt cache entry '" + path + "' (" + problem + "); rebuilding it");
      ::unlink(path.c_str());
      return std::nullopt;
    }
    return std::vector<char>(file.begin() + kHeaderSize, file.end());
  }

  /// Store a payload; failures are logged, never thrown.
  void write(const Key& key, const void* payload, size_t n) {
    static std::atomic<uint64_t> counter{0};
    const std::string path = path_of(key);
    const std::string tmp =
        path + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(counter.fetch_add(1));
    char header[kHeaderSize];
    std::memcpy(header, magic_, 8);
    std::memcpy(header + 8, key.data(), 32);
    const uint64_t size = n;
    std::memcpy(header + 40, &size, 8);
    const auto sum = sha256(payload, n);
    std::memcpy(header + 48, sum.data(), 32);
    int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    bool ok = fd >= 0 && write_all(fd, header, kHeaderSize) &&
              write_all(fd, static_cast<const char*>(payload), n);
    if (fd >= 0) ok = (::close(fd) == 0) && ok;
    if (ok) ok = ::rename(tmp.c_str(), path.c_str()) == 0;
    if (!ok) {
      const int saved = errno;
      ::unlink(tmp.c_str());
      host_.log(PG_LOG_WARNING,
                label_ + ": cannot write cache entry '" + path + "': " + std::strerror(saved));
    }
  }
  void write(const Key& key, const std::vector<char>& payload) {
    write(key, payload.data(), payload.size());
  }

 private:
  static constexpr size_t kHeaderSize = 8 + 32 + 8 + 32;

  std::string refusal() const {
    struct stat st {};
    if (directory_.empty() || directory_[0] != '/') return "it is not an absolute path";
    if (!make_dirs(directory_)) return std::string("it cannot be created: ") + std::strerror(errno);
    if (::stat(directory_.c_str(), &st) != 0)
      return std::string("it cannot be read: ") + std::strerror(errno);
    if (!S_ISDIR(st.st_mode)) return "it is not a directory";
    if (st.st_uid != ::geteuid())
      return "it is owned by uid " + std::to_string(st.st_uid) + ", not by this user (uid " +
             std::to_string(::geteuid()) + ")";
    if (st.st_mode & (S_IWGRP | S_IWOTH)) {
      char mode[8];
      std::snprintf(mode, sizeof(mode), "%04o", static_cast<unsigned>(st.st_mode & 07777));
      return std::string("it is ") + ((st.st_mode & S_IWOTH) ? "world" : "group") +
             "-writable (mode " + mode + ")";
    }
    return "";
  }

  static bool read_file(const std::string& path, std::vector<char>& out) {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    struct stat st {};
    bool ok = ::fstat(fd, &st) == 0;
    if (ok) {
      out.resize(static_cast<size_t>(st.st_size));
      size_t done = 0;
      while (ok && done < out.size()) {
        ssize_t n = ::read(fd, out.data() + done, out.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
          out.resize(done);  // shrank since fstat: keep what is there, the checks judge it
          break;
        }
        done += static_cast<size_t>(n);
      }
    }
    ::close(fd);
    return ok;
  }

  static bool write_all(int fd, const char* data, size_t n) {
    while (n > 0) {
      ssize_t w = ::write(fd, data, n);
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) return false;
      data += w;
      n -= static_cast<size_t>(w);
    }
    return true;
  }

  /// mkdir -p; the directories it creates are private (0700).
  static bool make_dirs(const std::string& path) {
    for (size_t pos = 1; pos <= path.size(); ++pos) {
      if (pos != path.size() && path[pos] != '/') continue;
      const std::string part = path.substr(0, pos);
      if (::mkdir(part.c_str(), 0700) != 0 && errno != EEXIST) return false;
    }
    return true;
  }

  std::string directory_;
  Host host_;
  std::string label_;
  std::string suffix_;
  char magic_[8];
  std::once_flag checked_;
  bool usable_ = false;
};

}  // namespace polygrad::sdk

#endif  // POLYGRAD_DISK_CACHE_HPP
