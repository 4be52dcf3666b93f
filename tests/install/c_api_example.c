/* A C program built against an installed polygrad through pkg-config (install_test.cmake):
 * docs/c-api.md's example, the gradient of sum(x * x) at x = (1, -2, 3), which is 2x, and the
 * loss 1 + 4 + 9 = 14. argv[1] is the installed cpu plugin's path: the load report must say
 * the computation ran on that file, found beside the installed libpolygrad.
 *   c_api_example <prefix>/<libdir>/polygrad/plugins/polygrad_cpu_clang.so */
#include <polygrad/polygrad.h>

#include <stdio.h>
#include <string.h>

static int fail(const char* what) {
  fprintf(stderr, "c_api_example: %s: %s\n", what, pg_last_error());
  return 1;
}

/* The line of `report` that names `path`, checked to start with "loaded". */
static int loaded_from(const char* report, const char* path) {
  const char* at = strstr(report, path);
  if (at == NULL) return 0;
  const char* line = at;
  while (line > report && line[-1] != '\n') --line;
  return strncmp(line, "loaded", 6) == 0;
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: c_api_example <installed polygrad_cpu_clang.so>\n");
    return 2;
  }
  const float xv[3] = {1, -2, 3};
  const float want_grad[3] = {2, -4, 6};
  const int64_t shape[1] = {3};
  pg_tensor_t x = NULL, sq = NULL, loss = NULL, grad = NULL;
  float g[3];
  double loss_value = 0;
  if (pg_tensor_from_data(xv, PG_DTYPE_FLOAT32, shape, 1, "cpu", &x) != PG_API_OK ||
      pg_tensor_set_requires_grad(x, 1) != PG_API_OK || pg_tensor_mul(x, x, &sq) != PG_API_OK ||
      pg_tensor_sum(sq, NULL, 0, 0, &loss) != PG_API_OK ||
      pg_tensor_backward(loss, NULL) != PG_API_OK || pg_tensor_grad(x, &grad) != PG_API_OK ||
      pg_tensor_to_host(grad, g, sizeof g) != PG_API_OK ||
      pg_tensor_item(loss, &loss_value) != PG_API_OK)
    return fail("sum(x * x) and its gradient");
  int status = 0;
  for (int i = 0; i < 3; ++i)
    if (g[i] != want_grad[i]) {
      fprintf(stderr, "c_api_example: grad[%d] = %g, expected %g\n", i, g[i], want_grad[i]);
      status = 1;
    }
  if (loss_value != 14) {
    fprintf(stderr, "c_api_example: loss = %g, expected 14\n", loss_value);
    status = 1;
  }
  const char* report = NULL;
  if (pg_plugin_report(0, &report) != PG_API_OK) return fail("pg_plugin_report");
  if (!loaded_from(report, argv[1])) {
    fprintf(stderr, "c_api_example: %s is not loaded; load report:\n%s", argv[1], report);
    status = 1;
  }
  pg_tensor_free(x);
  pg_tensor_free(sq);
  pg_tensor_free(loss);
  pg_tensor_free(grad);
  if (status == 0) printf("c_api_example: grad 2 -4 6, loss 14, plugin %s\n", argv[1]);
  return status;
}
