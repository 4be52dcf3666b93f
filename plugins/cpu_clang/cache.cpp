// The object cache's key and place; the cache itself is the SDK's (polygrad/disk_cache.hpp).
#include "cpu_clang.hpp"

namespace polygrad::cpu_clang {

std::string default_cache_dir() {
  return sdk::default_cache_dir("cpu_clang");
}

std::unique_ptr<sdk::DiskCache> make_object_cache(const std::string& directory,
                                                  const sdk::Host& host) {
  return std::make_unique<sdk::DiskCache>(directory, host, "cpu_clang", "PGCCOBJ1", ".pgobj");
}

sdk::DiskCache::Key cache_key(const std::string& source, const std::string& entry,
                              const CompileOptions& options) {
  std::string material = "polygrad cpu_clang ";
  material += kVersion;
  material +=
      '\0' + compiler_identity(*options.cpu) + '\0' + options.cpu->triple + '\0' + options.cpu->cpu;
  for (const std::string& f : options.cpu->features) material += ' ' + f;
  // '\0' as a char: inside a string literal it would end the literal.
  material += '\0';
  material += "-O" + std::to_string(options.opt_level) + '\0' + entry + '\0' + source;
  return sdk::sha256(material);
}

}  // namespace polygrad::cpu_clang
