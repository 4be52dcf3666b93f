// The on-disk object cache and compile errors.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include "harness.hpp"

namespace polygrad::test {
namespace {

using sdk::ProgramBuilder;

/// out[i] = x[i] * x[i] + k, with k baked in so that each k is a different source.
ProgramBuilder square_plus(int k) {
  ProgramBuilder b("square_plus");
  auto out = b.param_buffer(0, PG_DTYPE_INT32);
  auto x = b.param_buffer(1, PG_DTYPE_INT32);
  auto i = b.special(PG_SPECIAL_GLOBAL, 0);
  auto v = b.load(b.index(x, i));
  b.store(b.index(out, i),
          b.binary(PG_OP_ADD, b.binary(PG_OP_MUL, v, v), b.const_i(PG_DTYPE_INT32, k)));
  return b;
}

/// Builds square_plus(k) on `p`, runs it on 0..15 and checks every value.
void run_and_check(Plugin& p, int k) {
  std::vector<int32_t> x(16);
  for (int j = 0; j < 16; ++j) x[j] = j - 8;
  auto bx = p.upload(x);
  auto bo = p.alloc(16 * 4);
  auto builder = square_plus(k);
  p.run_once(builder, {bo, bx}, {}, {16, 1, 1});
  auto got = p.download<int32_t>(bo, 16);
  for (int j = 0; j < 16; ++j) EXPECT_EQ(got[j], x[j] * x[j] + k) << j;
  p.free(bx);
  p.free(bo);
}

/// run_and_check(k) in a fresh plugin instance (new device, new JIT) caching in `dir`.
void run_in_fresh_plugin(const TempDir& dir, int k, Options extra = {}) {
  extra.emplace("cache_dir", dir.path());
  Plugin p(std::move(extra));
  run_and_check(p, k);
}

ino_t inode_of(const std::string& path) {
  struct stat st {};
  EXPECT_EQ(stat(path.c_str(), &st), 0) << path;
  return st.st_ino;
}

TEST(CpuClangCache, MissWritesOneEntryAndHitReusesIt) {
  TempDir dir;
  run_in_fresh_plugin(dir, 3);
  auto files = dir.files();
  ASSERT_EQ(files.size(), 1u);
  ino_t first = inode_of(files[0]);
  {
    // A fresh plugin instance (new device, new JIT): served from disk, nothing rewritten.
    Plugin p(Options{{"cache_dir", dir.path()}});
    run_and_check(p, 3);
    EXPECT_FALSE(p.logged(PG_LOG_WARNING, "cache")) << "unexpected cache warning";
  }
  files = dir.files();
  ASSERT_EQ(files.size(), 1u);
  EXPECT_EQ(inode_of(files[0]), first) << "the entry was rewritten instead of read";
  run_in_fresh_plugin(dir, 4);  // a different source is a different entry
  EXPECT_EQ(dir.files().size(), 2u);
}

TEST(CpuClangCache, CorruptEntryIsLoggedAndRebuilt) {
  TempDir dir;
  run_in_fresh_plugin(dir, 5);
  auto files = dir.files();
  ASSERT_EQ(files.size(), 1u);
  const auto full_size = std::filesystem::file_size(files[0]);
  for (uintmax_t cut : {full_size / 2, uintmax_t{10}}) {
    std::filesystem::resize_file(files[0], cut);
    Plugin p(Options{{"cache_dir", dir.path()}});
    run_and_check(p, 5);
    EXPECT_TRUE(p.logged(PG_LOG_WARNING, "corrupt cache entry")) << "cut to " << cut;
    EXPECT_EQ(std::filesystem::file_size(files[0]), full_size);
  }
  {
    // Same size, one flipped payload byte: the checksum catches it.
    std::FILE* f = std::fopen(files[0].c_str(), "r+b");
    ASSERT_NE(f, nullptr);
    std::fseek(f, static_cast<long>(full_size) - 1, SEEK_SET);
    int c = std::fgetc(f);
    std::fseek(f, static_cast<long>(full_size) - 1, SEEK_SET);
    std::fputc(c ^ 0xff, f);
    std::fclose(f);
    Plugin p(Options{{"cache_dir", dir.path()}});
    run_and_check(p, 5);
    EXPECT_TRUE(p.logged(PG_LOG_WARNING, "checksum"));
  }
}

TEST(CpuClangCache, OptLevelIsPartOfTheKey) {
  TempDir dir;
  run_in_fresh_plugin(dir, 3, Options{{"opt_level", "0"}});
  run_in_fresh_plugin(dir, 3, Options{{"opt_level", "2"}});
  EXPECT_EQ(dir.files().size(), 2u);
}

TEST(CpuClangCache, GroupWritableDirectoryIsRefused) {
  TempDir dir;
  ASSERT_EQ(chmod(dir.path().c_str(), 0770), 0);
  Plugin p(Options{{"cache_dir", dir.path()}});
  run_and_check(p, 6);
  EXPECT_TRUE(p.logged(PG_LOG_WARNING, dir.path())) << "warning must name the directory";
  EXPECT_TRUE(p.logged(PG_LOG_WARNING, "group-writable"));
  EXPECT_TRUE(dir.files().empty());
}

TEST(CpuClangCache, CacheOptionFalseWritesNothing) {
  TempDir dir;
  Plugin p(Options{{"cache_dir", dir.path()}, {"cache", "false"}});
  run_and_check(p, 7);
  EXPECT_TRUE(dir.files().empty());
  for (const auto& [level, message] : p.logs())  // debug lines time each step; nothing warns
    EXPECT_EQ(level, PG_LOG_DEBUG) << message;
}

TEST(CpuClangCache, MissingDirectoryIsCreatedPrivate) {
  TempDir dir;
  std::string nested = dir.path() + "/a/b";
  Plugin p(Options{{"cache_dir", nested}});
  run_and_check(p, 8);
  struct stat st {};
  ASSERT_EQ(stat(nested.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 077, 0u);
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(nested),
                          std::filesystem::directory_iterator{}),
            1);
}

TEST(CpuClangCompile, BadSourceIsACompileErrorWithDiagnostics) {
  TempDir dir;
  Plugin p(Options{{"cache_dir", dir.path()}});
  pg_program_t prog = nullptr;
  std::string error;
  EXPECT_EQ(p.load_source("void broken(void) { int x = ; }\n", "broken", prog, error),
            PG_ERR_COMPILE);
  EXPECT_EQ(prog, nullptr);
  EXPECT_NE(error.find("broken"), std::string::npos) << error;
  EXPECT_NE(error.find("expected expression"), std::string::npos) << error;
  EXPECT_TRUE(dir.files().empty());
  // The device still works afterwards.
  run_and_check(p, 9);
}

TEST(CpuClangCompile, MissingEntryIsACompileError) {
  Plugin p(Options{{"cache", "false"}});
  pg_program_t prog = nullptr;
  std::string error;
  EXPECT_EQ(p.load_source("void other(void) {}\n", "wanted", prog, error), PG_ERR_COMPILE);
  EXPECT_NE(error.find("wanted"), std::string::npos) << error;
}

// clang is in libpolygrad_cpu_clang_compiler.so beside the plugin, opened at the first compile:
// a plugin without that file still runs what its object cache holds, and a compile fails with
// an error that names the file.
TEST(CpuClangCompile, CompilerLibraryIsOpenedOnlyToCompile) {
  namespace fs = std::filesystem;
  TempDir cache, alone;
  const fs::path plugin = fs::path(alone.path()) / fs::path(POLYGRAD_CPU_CLANG_PATH).filename();
  fs::copy_file(POLYGRAD_CPU_CLANG_PATH, plugin);
  ASSERT_TRUE(fs::exists(fs::path(POLYGRAD_CPU_CLANG_PATH).parent_path() /
                         "libpolygrad_cpu_clang_compiler.so"));
  run_in_fresh_plugin(cache, 5);  // the plugin beside its compiler fills the cache
  {
    PluginDriver p(plugin.string(), PG_ARTIFACT_C_SOURCE, Options{{"cache_dir", cache.path()}});
    std::vector<int32_t> x(16);
    for (int j = 0; j < 16; ++j) x[j] = j - 8;
    auto bx = p.upload(x);
    auto bo = p.alloc(16 * 4);
    auto builder = square_plus(5);
    p.run_once(builder, {bo, bx}, {}, {16, 1, 1});  // a cache hit: nothing to compile
    auto got = p.download<int32_t>(bo, 16);
    for (int j = 0; j < 16; ++j) EXPECT_EQ(got[j], x[j] * x[j] + 5) << j;
    p.free(bx);
    p.free(bo);
    pg_program_t prog = nullptr;
    std::string error;
    EXPECT_EQ(p.load_source("void fresh(void) {}\n", "fresh", prog, error), PG_ERR_UNSUPPORTED);
    EXPECT_NE(error.find("cannot load " + alone.path() + "/libpolygrad_cpu_clang_compiler.so"),
              std::string::npos)
        << error;
  }
}

}  // namespace
}  // namespace polygrad::test
