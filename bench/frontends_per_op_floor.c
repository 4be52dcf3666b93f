/* The C API's own cost of bench/frontends_per_op.sh's op, the floor under both frontends: a + b
 * on two realised 16x16 float32 tensors (pg_tensor_add, optionally pg_tensor_realize), each
 * result freed at once (as Python's reference counting does) or `batch` at a time (as R's
 * collector does). Prints the median of 9 rounds after 3 warm-up rounds, in us per op, of
 * process CPU time.
 *   frontends_per_op_floor <realize 0|1> <ops per round> <batch> */
#include <polygrad/polygrad.h>

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double cpu(void) {
  struct timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int cmp(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

int main(int argc, char** argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: %s <realize 0|1> <ops per round> <batch>\n", argv[0]);
    return 2;
  }
  int realize = atoi(argv[1]), n = atoi(argv[2]), batch = atoi(argv[3]);
  if (n < 1 || batch < 1) return 2;
  int64_t dims[2] = {16, 16};
  pg_tensor_t a = NULL, b = NULL;
  if (pg_tensor_rand(dims, 2, PG_DTYPE_FLOAT32, NULL, &a) != PG_API_OK ||
      pg_tensor_rand(dims, 2, PG_DTYPE_FLOAT32, NULL, &b) != PG_API_OK ||
      pg_tensor_realize(a) != PG_API_OK || pg_tensor_realize(b) != PG_API_OK) {
    fprintf(stderr, "polygrad: %s\n", pg_last_error());
    return 1;
  }
  pg_tensor_t* pending = malloc(sizeof(pg_tensor_t) * (size_t)batch);
  int np = 0;
  double rounds[12];
  for (int r = 0; r < 12; ++r) {
    double t0 = cpu();
    for (int i = 0; i < n; ++i) {
      pg_tensor_t out = NULL;
      if (pg_tensor_add(a, b, &out) != PG_API_OK ||
          (realize && pg_tensor_realize(out) != PG_API_OK)) {
        fprintf(stderr, "polygrad: %s\n", pg_last_error());
        return 1;
      }
      pending[np++] = out;
      if (np == batch) {
        for (int k = 0; k < np; ++k) pg_tensor_free(pending[k]);
        np = 0;
      }
    }
    rounds[r] = (cpu() - t0) / n;
  }
  qsort(rounds + 3, 9, sizeof(double), cmp);
  printf("%.3f\n", rounds[3 + 4] * 1e6);
  for (int k = 0; k < np; ++k) pg_tensor_free(pending[k]);
  free(pending);
  pg_tensor_free(a);
  pg_tensor_free(b);
  return 0;
}
