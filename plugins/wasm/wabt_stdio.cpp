// Debian's libwabt.a is built as position-dependent code: it reaches libc's stdin, stdout and
// stderr with PC-relative relocations, which a shared object cannot resolve against libc.
// These hidden definitions give the link local symbols to resolve them to; they are set to
// libc's streams before anything else in the plugin runs. No standard header is included here,
// since they declare the same names.
#include <dlfcn.h>

extern "C" {
__attribute__((visibility("hidden"))) void* stdin = nullptr;
__attribute__((visibility("hidden"))) void* stdout = nullptr;
__attribute__((visibility("hidden"))) void* stderr = nullptr;
}

namespace {

void* libc_stream(const char* name) {
  void** stream = static_cast<void**>(dlsym(RTLD_DEFAULT, name));
  return stream ? *stream : nullptr;
}

__attribute__((constructor(101))) void bind_libc_streams() {
  stdin = libc_stream("stdin");
  stdout = libc_stream("stdout");
  stderr = libc_stream("stderr");
}

}  // namespace
