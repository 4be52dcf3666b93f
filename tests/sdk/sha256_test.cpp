// sdk::sha256 (disk_cache.hpp), the disk caches' key and checksum: FIPS 180-4's example digests,
// and the x86 SHA-extension path against the portable one where the processor has them.
#include <polygrad/disk_cache.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace {

std::string hex(const std::array<uint8_t, 32>& d) {
  static const char* digits = "0123456789abcdef";
  std::string s;
  for (uint8_t b : d) {
    s += digits[b >> 4];
    s += digits[b & 15];
  }
  return s;
}

TEST(Sha256, GivesTheStandardsExampleDigests) {
  using polygrad::sdk::sha256;
  EXPECT_EQ(hex(sha256(std::string())),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(hex(sha256(std::string("abc"))),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(hex(sha256(std::string("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"))),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(hex(sha256(std::string(1000000, 'a'))),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(Sha256, ShaExtensionsAgreeWithThePortableRounds) {
#ifdef POLYGRAD_SHA256_NI
  if (!polygrad::sdk::detail::cpu_has_sha_ni())
    GTEST_SKIP() << "this processor has no SHA extensions";
  std::mt19937 rng(7);
  for (size_t blocks : {1, 2, 3, 17}) {
    std::vector<uint8_t> data(64 * blocks);
    for (uint8_t& b : data) b = static_cast<uint8_t>(rng());
    uint32_t a[8], b[8];
    for (int i = 0; i < 8; ++i) a[i] = b[i] = static_cast<uint32_t>(rng());
    polygrad::sdk::detail::sha256_blocks_portable(a, data.data(), blocks);
    polygrad::sdk::detail::sha256_blocks_ni(b, data.data(), blocks);
    for (int i = 0; i < 8; ++i) EXPECT_EQ(a[i], b[i]) << blocks << " blocks, word " << i;
  }
#else
  GTEST_SKIP() << "not an x86-64 build";
#endif
}

}  // namespace
