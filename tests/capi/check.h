/* Minimal assertions for the C API tests: a failed check prints where and why and marks the
 * run failed; CHECK_OK also prints pg_last_error(). */
#ifndef POLYGRAD_TESTS_CAPI_CHECK_H
#define POLYGRAD_TESTS_CAPI_CHECK_H

#include <polygrad/polygrad.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

static int check_failures = 0;

#define CHECK(cond)                                                            \
  do {                                                                         \
    if (!(cond)) {                                                             \
      fprintf(stderr, "%s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #cond); \
      ++check_failures;                                                        \
    }                                                                          \
  } while (0)

#define CHECK_OK(call)                                                          \
  do {                                                                          \
    pg_api_status check_status_ = (call);                                       \
    if (check_status_ != PG_API_OK) {                                           \
      fprintf(stderr, "%s:%d: %s returned %d: %s\n", __FILE__, __LINE__, #call, \
              (int)check_status_, pg_last_error());                             \
      ++check_failures;                                                         \
    }                                                                           \
  } while (0)

#define CHECK_NEAR(got, want, tol)                                                       \
  do {                                                                                   \
    double check_got_ = (got), check_want_ = (want);                                     \
    if (!(fabs(check_got_ - check_want_) <= (tol))) {                                    \
      fprintf(stderr, "%s:%d: %s = %g, want %g\n", __FILE__, __LINE__, #got, check_got_, \
              check_want_);                                                              \
      ++check_failures;                                                                  \
    }                                                                                    \
  } while (0)

/* The float32 values of `t` (n of them) into `out`. */
static inline void read_floats(pg_tensor_t t, float* out, size_t n) {
  CHECK_OK(pg_tensor_to_host(t, out, n * sizeof(float)));
}

static inline int check_report(const char* name) {
  if (check_failures)
    fprintf(stderr, "%s: %d check(s) failed\n", name, check_failures);
  else
    printf("%s: all checks passed\n", name);
  return check_failures ? 1 : 0;
}

#endif
