// On-disk object cache. An entry is one file named by the hex key:
//   magic "PGCCOBJ1" | key (32) | payload size (u64 LE) | SHA-256 of payload (32) | payload
// written to a temporary file in the same directory and renamed into place, so readers never
// see a partial entry. Anything that does not check out is logged, removed and rebuilt.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include <llvm/ADT/ArrayRef.h>
#include <llvm/ADT/StringRef.h>
#include <llvm/Support/SHA256.h>

#include "cpu_clang.hpp"

namespace polygrad::cpu_clang {

namespace {

constexpr char kMagic[8] = {'P', 'G', 'C', 'C', 'O', 'B', 'J', '1'};
constexpr size_t kHeaderSize = 8 + 32 + 8 + 32;

std::array<uint8_t, 32> sha256(const char* data, size_t n) {
  llvm::SHA256 hasher;
  hasher.update(llvm::ArrayRef<uint8_t>(reinterpret_cast<const uint8_t*>(data), n));
  llvm::StringRef digest = hasher.final();
  std::array<uint8_t, 32> out{};
  std::memcpy(out.data(), digest.data(), std::min<size_t>(digest.size(), out.size()));
  return out;
}

bool read_file(const std::string& path, std::vector<char>& out) {
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
        out.resize(done);  // shrank since fstat: keep what is there, the checks will judge it
        break;
      }
      done += static_cast<size_t>(n);
    }
  }
  ::close(fd);
  return ok;
}

bool write_all(int fd, const char* data, size_t n) {
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
bool make_dirs(const std::string& path) {
  for (size_t pos = 1; pos <= path.size(); ++pos) {
    if (pos != path.size() && path[pos] != '/') continue;
    std::string part = path.substr(0, pos);
    if (::mkdir(part.c_str(), 0700) != 0 && errno != EEXIST) return false;
  }
  return true;
}

}  // namespace

std::string default_cache_dir() {
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  if (xdg != nullptr && xdg[0] == '/') return std::string(xdg) + "/polygrad/cpu_clang";
  const char* home = std::getenv("HOME");
  if (home != nullptr && home[0] != '\0') return std::string(home) + "/.cache/polygrad/cpu_clang";
  return "/tmp/polygrad-" + std::to_string(::getuid()) + "/cpu_clang";
}

ObjectCache::ObjectCache(std::string directory, const sdk::Host& host)
    : directory_(std::move(directory)), host_(host) {}

ObjectCache::Key ObjectCache::key(const std::string& source, const std::string& entry,
                                  const CompileOptions& options) {
  std::string material = "polygrad cpu_clang ";
  material += kVersion;
  material +=
      '\0' + compiler_identity(*options.cpu) + '\0' + options.cpu->triple + '\0' + options.cpu->cpu;
  for (const std::string& f : options.cpu->features) material += ' ' + f;
  // '\0' as a char: inside a string literal it would end the literal.
  material += '\0';
  material += "-O" + std::to_string(options.opt_level) + '\0' + entry + '\0' + source;
  return sha256(material.data(), material.size());
}

std::string ObjectCache::path_of(const Key& key) const {
  static const char* hex = "0123456789abcdef";
  std::string name;
  for (uint8_t b : key) {
    name += hex[b >> 4];
    name += hex[b & 15];
  }
  return directory_ + "/" + name + ".pgobj";
}

bool ObjectCache::usable() {
  std::call_once(checked_, [this] {
    std::string reason;
    struct stat st {};
    if (directory_.empty() || directory_[0] != '/')
      reason = "it is not an absolute path";
    else if (!make_dirs(directory_))
      reason = std::string("it cannot be created: ") + std::strerror(errno);
    else if (::stat(directory_.c_str(), &st) != 0)
      reason = std::string("it cannot be read: ") + std::strerror(errno);
    else if (!S_ISDIR(st.st_mode))
      reason = "it is not a directory";
    else if (st.st_uid != ::geteuid())
      reason = "it is owned by uid " + std::to_string(st.st_uid) + ", not by this user (uid " +
               std::to_string(::geteuid()) + ")";
    else if (st.st_mode & (S_IWGRP | S_IWOTH)) {
      char mode[8];
      std::snprintf(mode, sizeof(mode), "%04o", static_cast<unsigned>(st.st_mode & 07777));
      reason = std::string("it is ") + ((st.st_mode & S_IWOTH) ? "world" : "group") +
               "-writable (mode " + mode + ")";
    }
    usable_ = reason.empty();
    if (!usable_)
      host_.log(PG_LOG_WARNING, "cpu_clang: cache directory '" + directory_ +
                                    "' refused: " + reason + "; compiling without the cache");
  });
  return usable_;
}

std::optional<std::vector<char>> ObjectCache::read(const Key& key) {
  const std::string path = path_of(key);
  std::vector<char> file;
  if (!read_file(path, file)) return std::nullopt;  // a miss
  std::string problem;
  uint64_t size = 0;
  if (file.size() < kHeaderSize)
    problem = "shorter than its header";
  else if (std::memcmp(file.data(), kMagic, 8) != 0)
    problem = "bad magic";
  else if (std::memcmp(file.data() + 8, key.data(), 32) != 0)
    problem = "key mismatch";
  else {
    std::memcpy(&size, file.data() + 40, 8);
    if (size != file.size() - kHeaderSize)
      problem = "payload is " + std::to_string(file.size() - kHeaderSize) + " bytes, header says " +
                std::to_string(size);
    else if (std::memcmp(sha256(file.data() + kHeaderSize, size).data(), file.data() + 48, 32) != 0)
      problem = "payload checksum mismatch";
  }
  if (!problem.empty()) {
    host_.log(PG_LOG_WARNING,
              "cpu_clang: corrupt cache entry '" + path + "' (" + problem + "); rebuilding it");
    ::unlink(path.c_str());
    return std::nullopt;
  }
  return std::vector<char>(file.begin() + kHeaderSize, file.end());
}

void ObjectCache::write(const Key& key, const std::vector<char>& object) {
  static std::atomic<uint64_t> counter{0};
  const std::string path = path_of(key);
  const std::string tmp =
      path + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(counter.fetch_add(1));
  std::vector<char> header(kHeaderSize);
  std::memcpy(header.data(), kMagic, 8);
  std::memcpy(header.data() + 8, key.data(), 32);
  uint64_t size = object.size();
  std::memcpy(header.data() + 40, &size, 8);
  auto sum = sha256(object.data(), object.size());
  std::memcpy(header.data() + 48, sum.data(), 32);
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  bool ok = fd >= 0 && write_all(fd, header.data(), header.size()) &&
            write_all(fd, object.data(), object.size());
  if (fd >= 0) ok = (::close(fd) == 0) && ok;
  if (ok) ok = ::rename(tmp.c_str(), path.c_str()) == 0;
  if (!ok) {
    int saved = errno;
    ::unlink(tmp.c_str());
    host_.log(PG_LOG_WARNING,
              "cpu_clang: cannot write cache entry '" + path + "': " + std::strerror(saved));
  }
}

}  // namespace polygrad::cpu_clang
