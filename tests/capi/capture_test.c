/* pg_capture_*: a captured realisation runs again over the same memory, so new values written
 * into host memory the tensor wraps show up in each run; nothing runs while capturing, reading
 * values then fails with a message, and bad handles are errors. */
#include "check.h"

static void no_release(void* context) {
  (void)context;
}

int main(void) {
  _Alignas(64) float data[16] = {1, 2, 3, 4};
  const int64_t dims[1] = {4};
  pg_tensor_t x = NULL, three = NULL, y = NULL, s = NULL;
  pg_capture_t cap = NULL;
  int shared = 0;
  CHECK_OK(pg_tensor_from_host_memory(data, PG_DTYPE_FLOAT32, dims, 1, "cpu", no_release, NULL,
                                      &shared, &x));
  CHECK(shared == 1);
  CHECK_OK(pg_tensor_scalar(3.0, PG_DTYPE_FLOAT32, "cpu", &three));

  int active = -1;
  CHECK_OK(pg_capture_active(&active));
  CHECK(active == 0);
  CHECK_OK(pg_capture_begin());
  CHECK_OK(pg_capture_active(&active));
  CHECK(active == 1);
  CHECK(pg_capture_active(NULL) == PG_API_ERR_INVALID_ARGUMENT);
  CHECK(pg_capture_begin() == PG_API_ERR_INVALID_ARGUMENT); /* captures do not nest */
  CHECK_OK(pg_tensor_mul(x, three, &y));
  CHECK_OK(pg_tensor_realize(y));
  float out[4] = {0};
  CHECK(pg_tensor_to_host(y, out, sizeof out) == PG_API_ERR_INVALID_ARGUMENT);
  CHECK(strstr(pg_last_error(), "while capturing") != NULL);
  CHECK_OK(pg_capture_end(&cap));
  CHECK_OK(pg_capture_active(&active));
  CHECK(active == 0);
  size_t kernels = 0;
  CHECK_OK(pg_capture_kernel_count(cap, &kernels));
  CHECK(kernels == 1);

  for (int run = 0; run < 3; ++run) {
    for (int i = 0; i < 4; ++i) data[i] = (float)(10 * run + i);
    CHECK_OK(pg_capture_run(cap));
    read_floats(y, out, 4);
    for (int i = 0; i < 4; ++i) CHECK_NEAR(out[i], 3 * data[i], 0);
  }

  /* another input in x's place, without writing into x's memory */
  _Alignas(64) float other[4] = {-1, -2, -3, -4};
  pg_tensor_t x2 = NULL;
  CHECK_OK(pg_tensor_from_data(other, PG_DTYPE_FLOAT32, dims, 1, "cpu", &x2));
  CHECK_OK(pg_capture_run_with(cap, &x, &x2, 1));
  read_floats(y, out, 4);
  for (int i = 0; i < 4; ++i) CHECK_NEAR(out[i], 3 * other[i], 0);
  CHECK(pg_capture_run_with(cap, &x, &three, 1) == PG_API_ERR_INVALID_ARGUMENT);
  CHECK(strstr(pg_last_error(), "shape") != NULL);
  /* x given twice: one replacement twice is x2's run, two different ones an error */
  const pg_tensor_t twice_in[2] = {x, x}, twice_re[2] = {x2, x2}, mixed_re[2] = {x2, x};
  CHECK_OK(pg_capture_run_with(cap, twice_in, twice_re, 2));
  read_floats(y, out, 4);
  for (int i = 0; i < 4; ++i) CHECK_NEAR(out[i], 3 * other[i], 0);
  CHECK(pg_capture_run_with(cap, twice_in, mixed_re, 2) == PG_API_ERR_INVALID_ARGUMENT);
  CHECK(strstr(pg_last_error(), "different replacements") != NULL);
  CHECK_OK(pg_capture_run(cap)); /* back to x's memory */
  read_floats(y, out, 4);
  for (int i = 0; i < 4; ++i) CHECK_NEAR(out[i], 3 * data[i], 0);
  pg_tensor_free(x2);

  /* outside a capture everything runs at once again */
  CHECK_OK(pg_tensor_sum(y, NULL, 0, 0, &s));
  double total = 0;
  CHECK_OK(pg_tensor_item(s, &total));
  CHECK_NEAR(total, 3 * (20 + 21 + 22 + 23), 1e-4);

  CHECK(pg_capture_end(&cap) == PG_API_ERR_INVALID_ARGUMENT); /* none open; cap untouched */
  CHECK(cap != NULL);
  CHECK(strstr(pg_last_error(), "pg_capture_end") != NULL);
  CHECK(pg_capture_run(NULL) == PG_API_ERR_INVALID_ARGUMENT);
  /* a NULL out still ends the recording: values read back again afterwards */
  CHECK_OK(pg_capture_begin());
  CHECK(pg_capture_end(NULL) == PG_API_ERR_INVALID_ARGUMENT);
  total = 0;
  CHECK_OK(pg_tensor_item(s, &total));
  CHECK_NEAR(total, 3 * (20 + 21 + 22 + 23), 1e-4);
  pg_capture_t none = NULL;
  CHECK(pg_capture_end(&none) == PG_API_ERR_INVALID_ARGUMENT && none == NULL);
  pg_capture_free(cap);
  pg_capture_free(NULL);
  pg_tensor_free(s);
  pg_tensor_free(y);
  pg_tensor_free(three);
  pg_tensor_free(x);
  return check_report("capi.capture");
}
