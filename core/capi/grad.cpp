// C API: autograd.
#include "capi/support.hpp"

#include "autograd/backward.hpp"

using namespace polygrad;
using capi::arg;
using capi::guard;

pg_api_status pg_tensor_set_requires_grad(pg_tensor_t t, int on) {
  return guard("pg_tensor_set_requires_grad", [&] {
    arg(t, "t");
    t->t.requires_grad(on != 0);
  });
}

pg_api_status pg_tensor_grad(pg_tensor_t t, pg_tensor_t* out) {
  return guard("pg_tensor_grad", [&] {
    std::optional<Tensor> g = arg(t, "t").grad();
    capi::check_out(out, "out");
    *out = g ? new pg_tensor{*g} : nullptr;
  });
}

pg_api_status pg_tensor_set_grad(pg_tensor_t t, pg_tensor_t grad) {
  return guard("pg_tensor_set_grad", [&] {
    arg(t, "t");
    t->t.set_grad(capi::opt_arg(grad));
  });
}

pg_api_status pg_tensor_backward(pg_tensor_t root, pg_tensor_t root_grad) {
  return guard("pg_tensor_backward",
               [&] { autograd::backward(arg(root, "root"), capi::opt_arg(root_grad)); });
}

pg_api_status pg_tensor_gradient(pg_tensor_t root, const pg_tensor_t* targets, size_t n,
                                 pg_tensor_t root_grad, pg_tensor_t* out) {
  return guard("pg_tensor_gradient", [&] {
    std::vector<Tensor> ts = capi::tensors_arg(targets, n, "targets");
    if (n > 0) capi::check_out(out, "out");
    std::vector<Tensor> grads = autograd::gradient(arg(root, "root"), ts, capi::opt_arg(root_grad));
    for (size_t i = 0; i < n; ++i) out[i] = new pg_tensor{grads[i]};
  });
}
