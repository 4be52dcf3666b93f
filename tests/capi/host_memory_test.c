/* pg_tensor_from_host_memory: on the cpu device the tensor is the caller's 64-byte aligned
 * memory (reads see later changes to it, assign writes into it), other memory is copied, and
 * the release callback runs exactly once, when the last use is gone; on bad input it runs
 * before the error returns. */
#include "check.h"

static int released = 0;
static void on_release(void* context) {
  CHECK(context == (void*)&released);
  ++released;
}

int main(void) {
  _Alignas(64) float data[16] = {1, 2, 3, 4, 5, 6, 7, 8};
  const int64_t dims[2] = {2, 4};
  pg_tensor_t t = NULL, twice = NULL, sum = NULL, two = NULL, zero = NULL;
  int shared = -1;
  CHECK_OK(pg_tensor_from_host_memory(data, PG_DTYPE_FLOAT32, dims, 2, "cpu", on_release, &released,
                                      &shared, &t));
  CHECK(shared == 1);
  CHECK(released == 0);

  /* the lazy product reads the memory when it is realised, after this change */
  data[5] = 60;
  CHECK_OK(pg_tensor_scalar(2.0, PG_DTYPE_FLOAT32, "cpu", &two));
  CHECK_OK(pg_tensor_mul(t, two, &twice));
  float out[8];
  read_floats(twice, out, 8);
  for (int i = 0; i < 8; ++i) CHECK_NEAR(out[i], 2 * data[i], 0);

  /* assign writes into the caller's array */
  CHECK_OK(pg_tensor_add(t, t, &sum));
  CHECK_OK(pg_tensor_assign(t, sum));
  CHECK_OK(pg_tensor_realize(t));
  const float want[8] = {2, 4, 6, 8, 10, 120, 14, 16};
  for (int i = 0; i < 8; ++i) CHECK_NEAR(data[i], want[i], 0);

  /* an unrealised tensor keeps the memory in use after t's handle is gone (twice was
   * realised above: it holds its own buffer now) */
  pg_tensor_t pending = NULL;
  CHECK_OK(pg_tensor_mul(t, two, &pending));
  pg_tensor_free(t);
  pg_tensor_free(sum);
  pg_tensor_free(twice);
  CHECK(released == 0);
  data[0] = -1;
  read_floats(pending, out, 8);
  CHECK_NEAR(out[0], -2, 0);
  for (int i = 1; i < 8; ++i) CHECK_NEAR(out[i], 2 * want[i], 0);
  pg_tensor_free(pending);
  CHECK(released == 1);

  /* memory the cpu does not take in place (not 64-byte aligned, as its own buffers are) is
   * copied: not shared, released before the call returns, later writes do not show */
  float* odd = data + 9;
  for (int i = 0; i < 4; ++i) odd[i] = (float)(10 + i);
  const int64_t four[1] = {4};
  pg_tensor_t copied = NULL;
  CHECK_OK(pg_tensor_from_host_memory(odd, PG_DTYPE_FLOAT32, four, 1, "cpu", on_release, &released,
                                      &shared, &copied));
  CHECK(shared == 0);
  CHECK(released == 2);
  odd[0] = -5;
  read_floats(copied, out, 4);
  for (int i = 0; i < 4; ++i) CHECK_NEAR(out[i], 10 + i, 0);
  pg_tensor_free(copied);
  CHECK(released == 2);

  /* a bad shape: an error, and the memory is released before it returns */
  const int64_t bad[1] = {-3};
  CHECK(pg_tensor_from_host_memory(data, PG_DTYPE_FLOAT32, bad, 1, "cpu", on_release, &released,
                                   &shared, &zero) != PG_API_OK);
  CHECK(strstr(pg_last_error(), "from_host_memory") != NULL);
  CHECK(released == 3);
  /* an unknown device: likewise */
  CHECK(pg_tensor_from_host_memory(data, PG_DTYPE_FLOAT32, dims, 2, "tpu:9", on_release, &released,
                                   &shared, &zero) != PG_API_OK);
  CHECK(released == 4);
  pg_tensor_free(two);
  return check_report("capi.host_memory");
}
