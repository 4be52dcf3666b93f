/* pg_all_reduce_devices: a float32 tensor on cpu and one on the GPU emulator (emu, another
 * plugin), reduced naive and ring, sum, max and mean, against values worked out here; each
 * result on its input's device; bad arguments are errors that name them. */
#include "check.h"

#define N 10

int main(void) {
  float a[N], b[N], out[N];
  for (int i = 0; i < N; ++i) {
    a[i] = (float)(i * 3 - 7);
    b[i] = (float)(11 - 2 * i);
  }
  const int64_t dims[1] = {N};
  pg_tensor_t in[2] = {NULL, NULL}, res[2] = {NULL, NULL};
  CHECK_OK(pg_tensor_from_data(a, PG_DTYPE_FLOAT32, dims, 1, "cpu", &in[0]));
  CHECK_OK(pg_tensor_from_data(b, PG_DTYPE_FLOAT32, dims, 1, "emu", &in[1]));
  const int algorithms[2] = {PG_DEVICE_REDUCE_NAIVE, PG_DEVICE_REDUCE_RING};
  const int ops[3] = {PG_COMM_SUM, PG_COMM_MAX, PG_COMM_MEAN};
  for (int g = 0; g < 2; ++g)
    for (int o = 0; o < 3; ++o) {
      CHECK_OK(pg_all_reduce_devices(in, 2, ops[o], algorithms[g], 0, res));
      for (int k = 0; k < 2; ++k) {
        const char *got = NULL, *want = NULL;
        CHECK_OK(pg_tensor_device(res[k], &got));
        CHECK_OK(pg_tensor_device(in[k], &want));
        CHECK(got && want && strcmp(got, want) == 0);
        read_floats(res[k], out, N);
        for (int i = 0; i < N; ++i) {
          const double s = (double)a[i] + b[i], m = a[i] > b[i] ? a[i] : b[i];
          CHECK_NEAR(out[i], ops[o] == PG_COMM_SUM ? s : ops[o] == PG_COMM_MAX ? m : s / 2, 0);
        }
        pg_tensor_free(res[k]);
        res[k] = NULL;
      }
    }

  CHECK(pg_all_reduce_devices(in, 2, PG_COMM_SUM, 7, 0, res) == PG_API_ERR_INVALID_ARGUMENT);
  CHECK(strstr(pg_last_error(), "algorithm") != NULL);
  CHECK(pg_all_reduce_devices(in, 2, 9, PG_DEVICE_REDUCE_AUTO, 0, res) ==
        PG_API_ERR_INVALID_ARGUMENT);
  CHECK(strstr(pg_last_error(), "'op'") != NULL);
  CHECK(pg_all_reduce_devices(in, 2, PG_COMM_SUM, PG_DEVICE_REDUCE_AUTO, 0, NULL) ==
        PG_API_ERR_INVALID_ARGUMENT);
  CHECK(pg_all_reduce_devices(NULL, 2, PG_COMM_SUM, PG_DEVICE_REDUCE_AUTO, 0, res) ==
        PG_API_ERR_INVALID_ARGUMENT);
  CHECK(pg_all_reduce_devices(in, 0, PG_COMM_SUM, PG_DEVICE_REDUCE_AUTO, 0, res) ==
        PG_API_ERR_INVALID_ARGUMENT);
  CHECK(strstr(pg_last_error(), "no tensors") != NULL);
  pg_tensor_free(in[0]);
  pg_tensor_free(in[1]);
  return check_report("capi_device_collectives_test");
}
