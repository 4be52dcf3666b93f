/* C API errors: each kind returns its status, leaves the out parameter alone and records a
 * message that names the entry point and the op. */
#include "check.h"

/* The sentinel an out parameter must still hold after a failed call. */
static struct pg_tensor* const kUntouched = (struct pg_tensor*)(void*)&check_failures;

static void expect_error(pg_api_status got, pg_api_status want, const char* needle1,
                         const char* needle2, int line) {
  const char* msg = pg_last_error();
  if (got != want || !strstr(msg, needle1) || (needle2 && !strstr(msg, needle2))) {
    fprintf(stderr, "errors_test.c:%d: status %d (want %d), message \"%s\" (want \"%s\"%s%s)\n",
            line, (int)got, (int)want, msg, needle1, needle2 ? " and " : "",
            needle2 ? needle2 : "");
    ++check_failures;
  }
}
#define EXPECT_ERROR(call, want, n1, n2) expect_error((call), (want), (n1), (n2), __LINE__)

int main(void) {
  const float v[6] = {1, 2, 3, 4, 5, 6};
  const int64_t s23[2] = {2, 3}, s4[1] = {4};
  pg_tensor_t x = NULL, out = kUntouched;
  CHECK(strcmp(pg_last_error(), "") == 0);
  CHECK_OK(pg_tensor_from_data(v, PG_DTYPE_FLOAT32, s23, 2, NULL, &x));

  /* bad shape */
  EXPECT_ERROR(pg_tensor_reshape(x, s4, 1, &out), PG_API_ERR_INVALID_ARGUMENT,
               "pg_tensor_reshape: reshape", "(4,)");
  CHECK(out == kUntouched);

  /* bad axis */
  const int64_t axis5 = 5;
  EXPECT_ERROR(pg_tensor_sum(x, &axis5, 1, 0, &out), PG_API_ERR_INVALID_ARGUMENT,
               "pg_tensor_sum: sum", "5");
  CHECK(out == kUntouched);

  /* unknown device */
  EXPECT_ERROR(pg_tensor_zeros(s23, 2, PG_DTYPE_FLOAT32, "nosuchdev", &out),
               PG_API_ERR_INVALID_ARGUMENT, "pg_tensor_zeros", "nosuchdev");
  CHECK(out == kUntouched);

  /* NULL handles and out pointers */
  EXPECT_ERROR(pg_tensor_add(NULL, x, &out), PG_API_ERR_INVALID_ARGUMENT,
               "pg_tensor_add: argument 'a' is NULL", NULL);
  CHECK(out == kUntouched);
  EXPECT_ERROR(pg_tensor_neg(x, NULL), PG_API_ERR_INVALID_ARGUMENT, "pg_tensor_neg",
               "output pointer 'out' is NULL");
  EXPECT_ERROR(pg_tensor_realize(NULL), PG_API_ERR_INVALID_ARGUMENT, "pg_tensor_realize", "NULL");

  /* host transfer of the wrong size */
  float small[2];
  EXPECT_ERROR(pg_tensor_to_host(x, small, sizeof small), PG_API_ERR_INVALID_ARGUMENT,
               "pg_tensor_to_host", NULL);

  /* backward of a non-scalar root without a root gradient; gradient of an int root */
  EXPECT_ERROR(pg_tensor_backward(x, NULL), PG_API_ERR_INVALID_ARGUMENT,
               "pg_tensor_backward: backward", "(2, 3)");
  pg_tensor_t ints = NULL, s = NULL;
  const int32_t iv[4] = {1, 2, 3, 4};
  CHECK_OK(pg_tensor_from_data(iv, PG_DTYPE_INT32, s4, 1, NULL, &ints));
  CHECK_OK(pg_tensor_sum(ints, NULL, 0, 0, &s));
  EXPECT_ERROR(pg_tensor_gradient(s, &x, 1, NULL, &out), PG_API_ERR_INVALID_ARGUMENT,
               "pg_tensor_gradient: gradient", "int32");
  CHECK(out == kUntouched);

  /* an output array too small for the pieces: the count says how many are needed */
  pg_tensor_t piece = kUntouched;
  size_t count = 0;
  EXPECT_ERROR(pg_tensor_split(x, 1, 1, &piece, 1, &count), PG_API_ERR_INVALID_ARGUMENT,
               "pg_tensor_split", "3 pieces");
  CHECK(count == 3 && piece == kUntouched);

  /* a reduction that is no pg_reduction; floor division of bool tensors */
  EXPECT_ERROR(pg_tensor_binary_crossentropy(x, x, 7, &out), PG_API_ERR_INVALID_ARGUMENT,
               "pg_tensor_binary_crossentropy", "'reduction' is 7");
  CHECK(out == kUntouched);
  pg_tensor_t flags = NULL;
  CHECK_OK(pg_tensor_gt_scalar(x, pg_scalar_float(2.0), &flags));
  EXPECT_ERROR(pg_tensor_floordiv(flags, flags, &out), PG_API_ERR_INVALID_ARGUMENT,
               "pg_tensor_floordiv: floordiv", "bool");
  CHECK(out == kUntouched);
  pg_tensor_free(flags);

  /* a dtype that is no pg_dtype (any int a C caller passes), or void: a user error, not an
     internal one (nor, in C++, undefined behaviour on loading the enum) */
  EXPECT_ERROR(pg_tensor_zeros(s23, 2, (pg_dtype)99, NULL, &out), PG_API_ERR_INVALID_ARGUMENT,
               "pg_tensor_zeros", "99 is not a dtype");
  EXPECT_ERROR(pg_tensor_from_data(v, (pg_dtype)-1, s23, 2, NULL, &out),
               PG_API_ERR_INVALID_ARGUMENT, "pg_tensor_from_data", "-1 is not a dtype");
  EXPECT_ERROR(pg_tensor_cast(x, PG_DTYPE_COUNT, &out), PG_API_ERR_INVALID_ARGUMENT,
               "pg_tensor_cast", "is not a dtype");
  EXPECT_ERROR(pg_tensor_ones(s23, 2, PG_DTYPE_VOID, NULL, &out), PG_API_ERR_INVALID_ARGUMENT,
               "pg_tensor_ones", "void is not a tensor dtype");
  EXPECT_ERROR(pg_tensor_rand(s23, 2, (pg_dtype)1000, NULL, &out), PG_API_ERR_INVALID_ARGUMENT,
               "pg_tensor_rand", "1000 is not a dtype");
  CHECK(out == kUntouched);

  /* sizes past what an int64 counts or a host holds: user errors, not crashes or internal
     errors */
  const int64_t huge[2] = {(int64_t)1 << 62, 4};
  EXPECT_ERROR(pg_tensor_from_data(v, PG_DTYPE_FLOAT32, huge, 2, NULL, &out),
               PG_API_ERR_INVALID_ARGUMENT, "pg_tensor_from_data", "more than 2^62 elements");
  EXPECT_ERROR(pg_tensor_zeros(huge, 2, PG_DTYPE_FLOAT32, NULL, &out), PG_API_ERR_INVALID_ARGUMENT,
               "pg_tensor_zeros", "more than 2^62 elements");
  const int64_t pads[4] = {INT64_MAX, 0, 0, 0};
  EXPECT_ERROR(pg_tensor_pad(x, pads, 2, 0.0, &out), PG_API_ERR_INVALID_ARGUMENT, "pg_tensor_pad",
               "longer than 2^62");
  const int64_t wide[4] = {0, 0, 3, 0};
  EXPECT_ERROR(pg_tensor_pad_mode(x, wide, 2, PG_PAD_REFLECT, 0.0, &out),
               PG_API_ERR_INVALID_ARGUMENT, "pg_tensor_pad_mode: pad: reflect", "less than");
  EXPECT_ERROR(pg_tensor_pad_mode(x, wide, 2, 7, 0.0, &out), PG_API_ERR_INVALID_ARGUMENT,
               "pg_tensor_pad_mode", "not a pg_pad_mode");
  EXPECT_ERROR(pg_tensor_arange(0, 1e30, 1, PG_DTYPE_VOID, NULL, &out), PG_API_ERR_INVALID_ARGUMENT,
               "pg_tensor_arange", "more than host memory holds");
  EXPECT_ERROR(pg_tensor_eye(INT64_MAX, 1, PG_DTYPE_FLOAT32, NULL, &out),
               PG_API_ERR_INVALID_ARGUMENT, "pg_tensor_eye", "more than host memory holds");
  EXPECT_ERROR(pg_tensor_rand(s23, 2, PG_DTYPE_INT32, NULL, &out), PG_API_ERR_INVALID_ARGUMENT,
               "pg_tensor_rand", "not a float type");
  CHECK(out == kUntouched);

  /* an int scalar whose value no int64 holds (NaN, 1e300) is refused, not converted */
  pg_scalar nan_int = pg_scalar_int(0);
  nan_int.value = 0.0 / 0.0;
  EXPECT_ERROR(pg_tensor_add_scalar(x, nan_int, &out), PG_API_ERR_INVALID_ARGUMENT,
               "pg_tensor_add_scalar", "is no int64");
  nan_int.value = 1e300;
  EXPECT_ERROR(pg_tensor_mul_scalar(x, nan_int, &out), PG_API_ERR_INVALID_ARGUMENT,
               "pg_tensor_mul_scalar", "value 1.0000000000000001e+300 is no int64");
  /* a fractional one too: {2.5, 1} was truncated to 2 */
  nan_int.value = 2.5;
  EXPECT_ERROR(pg_tensor_add_scalar(x, nan_int, &out), PG_API_ERR_INVALID_ARGUMENT,
               "pg_tensor_add_scalar", "value 2.5 is no int64");
  CHECK(out == kUntouched);
  /* while -2^63, the least int64, written by value alone is one (it was refused) */
  nan_int.value = -0x1p63;
  pg_tensor_t least = NULL;
  CHECK_OK(pg_tensor_add_scalar(x, nan_int, &least));
  pg_tensor_free(least);

  /* device names: "" is the default device, as everywhere a device is named */
  const char* canon = NULL;
  char want[64];
  const char* dflt = NULL;
  CHECK_OK(pg_device_canonical("cpu", &canon));
  CHECK(strcmp(canon, "cpu:0") == 0);
  CHECK_OK(pg_device_default(&dflt));
  CHECK_OK(pg_device_canonical(dflt, &canon));
  snprintf(want, sizeof want, "%s", canon);
  CHECK_OK(pg_device_canonical("", &canon));
  CHECK(strcmp(canon, want) == 0);
  EXPECT_ERROR(pg_device_canonical("nosuchdev", &canon), PG_API_ERR_INVALID_ARGUMENT,
               "pg_device_canonical", "nosuchdev");
  /* the cpu's buffers are host memory, and it has no groups */
  uint32_t cpu_flags = 0;
  CHECK_OK(pg_device_flags("cpu", &cpu_flags));
  CHECK((cpu_flags & PG_CAP_HOST_MEMORY) != 0 && (cpu_flags & PG_CAP_GROUPS) == 0);
  EXPECT_ERROR(pg_device_flags("nosuchdev", &cpu_flags), PG_API_ERR_INVALID_ARGUMENT,
               "pg_device_flags", "nosuchdev");
  /* the cpu declares float32 and int64, never VOID */
  uint64_t cpu_dtypes = 0;
  CHECK_OK(pg_device_dtypes("cpu", &cpu_dtypes));
  CHECK((cpu_dtypes >> PG_DTYPE_FLOAT32 & 1) && (cpu_dtypes >> PG_DTYPE_INT64 & 1) &&
        !(cpu_dtypes >> PG_DTYPE_VOID & 1));
  EXPECT_ERROR(pg_device_dtypes("nosuchdev", &cpu_dtypes), PG_API_ERR_INVALID_ARGUMENT,
               "pg_device_dtypes", "nosuchdev");

  /* an empty plugin name is no name, even after a failed load left a record without one */
  const char* loaded = NULL;
  EXPECT_ERROR(pg_plugin_load("/nonexistent/plugin.so", &loaded), PG_API_ERR_DEVICE,
               "pg_plugin_load", NULL);
  EXPECT_ERROR(pg_plugin_load("", &loaded), PG_API_ERR_INVALID_ARGUMENT, "pg_plugin_load",
               "empty plugin name");

  /* an index outside its axis has its own status, so no frontend reads the message */
  pg_index row5 = {PG_INDEX_INTEGER, 5, 0, 0, 0, 0, 1};
  EXPECT_ERROR(pg_tensor_getitem(x, &row5, 1, &out), PG_API_ERR_INDEX, "pg_tensor_getitem",
               "index 5 out of range for axis 0");
  pg_tensor_t bad_index = NULL;
  const int32_t idx7[2] = {0, 7};
  const int64_t s21[2] = {2, 1};
  CHECK_OK(pg_tensor_from_data(idx7, PG_DTYPE_INT32, s21, 2, NULL, &bad_index));
  EXPECT_ERROR(pg_tensor_gather(x, 1, bad_index, &out), PG_API_ERR_INDEX, "pg_tensor_gather",
               "index 7 is out of bounds for axis 1");
  CHECK(out == kUntouched);
  pg_tensor_free(bad_index);

  /* rearrange: a size name given twice */
  pg_tensor_t re = NULL;
  const char* rnames[2] = {"a", "a"};
  const int64_t rsizes[2] = {2, 3};
  EXPECT_ERROR(pg_tensor_rearrange(x, "(a b) ... -> a b ...", rnames, rsizes, 2, &re),
               PG_API_ERR_INVALID_ARGUMENT, "pg_tensor_rearrange", "'a' given twice");
  CHECK(re == NULL);

  pg_tensor_free(x);
  pg_tensor_free(ints);
  pg_tensor_free(s);
  pg_tensor_free(NULL);
  return check_report("capi.errors");
}
