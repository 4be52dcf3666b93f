// C API: capture and replay of realisations.
#include "capi/support.hpp"

#include <polygrad/capture.hpp>

#include "runtime/capture.hpp"
#include "tensor/tensor_impl.hpp"

using namespace polygrad;
using capi::guard;

/// What a pg_capture_t points to.
struct pg_capture {
  Captured c;
};

namespace {

const Captured& capture_arg(pg_capture_t c) {
  if (c == nullptr) user_error("capture handle 'c' is NULL");
  return c->c;
}

}  // namespace

pg_api_status pg_capture_begin(void) {
  return guard("pg_capture_begin", [] { detail::begin_capture(); });
}

pg_api_status pg_capture_active(int* out) {
  return guard("pg_capture_active", [&] {
    capi::check_out(out, "out");
    *out = runtime::capturing() ? 1 : 0;
  });
}

pg_api_status pg_capture_end(pg_capture_t* out) {
  return guard("pg_capture_end", [&] {
    // With no place for the handle the capture still ends (discarded), so the thread is not
    // left recording, with every read failing.
    if (out == nullptr) Captured::adopt(detail::end_capture());
    capi::check_out(out, "out");
    Captured c = Captured::adopt(detail::end_capture());  // on error *out stays as it was
    *out = new pg_capture{std::move(c)};
  });
}

pg_api_status pg_capture_run(pg_capture_t c) {
  return guard("pg_capture_run", [&] { capture_arg(c).run(); });
}

pg_api_status pg_capture_run_with(pg_capture_t c, const pg_tensor_t* inputs,
                                  const pg_tensor_t* replacements, size_t n) {
  return guard("pg_capture_run_with", [&] {
    const Captured& cap = capture_arg(c);
    std::vector<Tensor> from = capi::tensors_arg(inputs, n, "inputs");
    std::vector<Tensor> to = capi::tensors_arg(replacements, n, "replacements");
    cap.run(from, to);  // realises the replacements (their handles share the tensors)
  });
}

pg_api_status pg_capture_kernel_count(pg_capture_t c, size_t* out) {
  return guard("pg_capture_kernel_count", [&] {
    const Captured& cap = capture_arg(c);
    capi::check_out(out, "out");
    *out = cap.kernel_count();
  });
}

void pg_capture_free(pg_capture_t c) {
  delete c;
}
