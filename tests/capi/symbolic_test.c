/* Symbolic sizes through the C API: a (8, 2) tensor sliced to its first n rows with n bound, its
 * column sums at several n against hand sums, no kernel compiled after the first n; a value out
 * of range is an error naming the variable. */
#include "check.h"

int main(void) {
  float data[16];
  for (int i = 0; i < 16; ++i) data[i] = (float)(i + 1);
  const int64_t dims[2] = {8, 2};
  pg_tensor_t x = NULL;
  CHECK_OK(pg_tensor_from_data(data, PG_DTYPE_FLOAT32, dims, 2, NULL, &x));
  size_t first = 0, now = 0;
  const int64_t ns[5] = {3, 5, 1, 8, 6};
  for (int k = 0; k < 5; ++k) {
    pg_dim_t n = NULL;
    CHECK_OK(pg_variable_bind("rows", 1, 8, ns[k], &n));
    const int64_t bounds[4] = {0, 0, 0, 2};
    const pg_dim_t sym[4] = {NULL, n, NULL, NULL};
    pg_tensor_t rows = NULL, sums = NULL;
    CHECK_OK(pg_tensor_shrink_sym(x, bounds, sym, 2, &rows));
    const int64_t axis = 0;
    CHECK_OK(pg_tensor_sum(rows, &axis, 1, 0, &sums));
    float got[2] = {0, 0};
    read_floats(sums, got, 2);
    double want0 = 0, want1 = 0;
    for (int64_t r = 0; r < ns[k]; ++r) {
      want0 += data[2 * r];
      want1 += data[2 * r + 1];
    }
    CHECK_NEAR(got[0], want0, 1e-4);
    CHECK_NEAR(got[1], want1, 1e-4);
    CHECK_OK(pg_compiled_kernel_count(k == 0 ? &first : &now));
    if (k > 0) CHECK(now == first);
    pg_tensor_free(sums);
    pg_tensor_free(rows);
    pg_dim_free(n);
  }
  pg_dim_t bad = NULL;
  CHECK(pg_variable_bind("start_pos", 1, 8, 9, &bad) != PG_API_OK);
  CHECK(strstr(pg_last_error(), "start_pos") != NULL);
  CHECK(strstr(pg_last_error(), "9") != NULL);
  pg_tensor_free(x);
  return check_report("capi_symbolic_test");
}
