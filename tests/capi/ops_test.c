/* C API ops against hand-derived values on the cpu device. */
#include "check.h"

static pg_tensor_t floats(const float* v, const int64_t* dims, size_t ndim) {
  pg_tensor_t t = NULL;
  CHECK_OK(pg_tensor_from_data(v, PG_DTYPE_FLOAT32, dims, ndim, "cpu", &t));
  return t;
}

int main(void) {
  const float av[6] = {1, 2, 3, 4, 5, 6}, bv[3] = {10, 20, 30}, cv[6] = {1, 0, 0, 1, 1, 1};
  const int64_t s23[2] = {2, 3}, s3[1] = {3}, s32[2] = {3, 2};
  pg_tensor_t a = floats(av, s23, 2), b = floats(bv, s3, 1), c = floats(cv, s32, 2);

  /* properties */
  int64_t dims[4] = {0};
  size_t ndim = 0;
  pg_dtype dt = PG_DTYPE_VOID;
  int64_t numel = 0;
  const char* dev = NULL;
  CHECK_OK(pg_tensor_shape(a, dims, 4, &ndim));
  CHECK(ndim == 2 && dims[0] == 2 && dims[1] == 3);
  CHECK_OK(pg_tensor_dtype(a, &dt));
  CHECK(dt == PG_DTYPE_FLOAT32);
  CHECK_OK(pg_tensor_numel(a, &numel));
  CHECK(numel == 6);
  CHECK_OK(pg_tensor_device(a, &dev));
  CHECK(dev != NULL && strcmp(dev, "cpu:0") == 0);

  /* broadcasting add: (2, 3) + (3,) */
  pg_tensor_t sum = NULL;
  float out6[6];
  CHECK_OK(pg_tensor_add(a, b, &sum));
  read_floats(sum, out6, 6);
  const float want_add[6] = {11, 22, 33, 14, 25, 36};
  for (int i = 0; i < 6; ++i) CHECK_NEAR(out6[i], want_add[i], 0);

  /* matmul: [[1,2,3],[4,5,6]] @ [[1,0],[0,1],[1,1]] = [[4,5],[10,11]] */
  pg_tensor_t mm = NULL;
  float out4[4];
  CHECK_OK(pg_tensor_matmul(a, c, &mm));
  read_floats(mm, out4, 4);
  CHECK_NEAR(out4[0], 4, 1e-6);
  CHECK_NEAR(out4[1], 5, 1e-6);
  CHECK_NEAR(out4[2], 10, 1e-6);
  CHECK_NEAR(out4[3], 11, 1e-6);

  /* reductions: row sums, mean of all */
  pg_tensor_t rows = NULL, mean = NULL;
  const int64_t axis1 = 1;
  float out2[2];
  double item = 0;
  CHECK_OK(pg_tensor_sum(a, &axis1, 1, 0, &rows));
  read_floats(rows, out2, 2);
  CHECK_NEAR(out2[0], 6, 1e-6);
  CHECK_NEAR(out2[1], 15, 1e-6);
  CHECK_OK(pg_tensor_mean(a, NULL, 0, 0, &mean));
  CHECK_OK(pg_tensor_item(mean, &item));
  CHECK_NEAR(item, 3.5, 1e-6);

  /* scalar operands: an int scalar keeps int32, a float scalar gives float32 */
  const int32_t iv[3] = {1, 2, 3};
  pg_tensor_t ints = NULL, twice = NULL, half = NULL;
  int32_t iout[3];
  float fout[3];
  CHECK_OK(pg_tensor_from_data(iv, PG_DTYPE_INT32, s3, 1, NULL, &ints));
  CHECK_OK(pg_tensor_mul_scalar(ints, pg_scalar_int(2), &twice));
  CHECK_OK(pg_tensor_dtype(twice, &dt));
  CHECK(dt == PG_DTYPE_INT32);
  CHECK_OK(pg_tensor_to_host(twice, iout, sizeof iout));
  CHECK(iout[0] == 2 && iout[1] == 4 && iout[2] == 6);
  CHECK_OK(pg_tensor_mul_scalar(ints, pg_scalar_float(0.5), &half));
  CHECK_OK(pg_tensor_dtype(half, &dt));
  CHECK(dt == PG_DTYPE_FLOAT32);
  read_floats(half, fout, 3);
  CHECK_NEAR(fout[2], 1.5, 0);

  /* clamp: whole double bounds keep an int tensor int; scalar bounds follow the scalar rule
     (a float one, even 0.0, gives float32) and keep int64 values beyond 2^53 exact */
  pg_tensor_t cl = NULL, clf = NULL, i64 = NULL, clb = NULL;
  const double lo = 2.0;
  CHECK_OK(pg_tensor_clamp(ints, &lo, NULL, &cl));
  CHECK_OK(pg_tensor_dtype(cl, &dt));
  CHECK(dt == PG_DTYPE_INT32);
  CHECK_OK(pg_tensor_to_host(cl, iout, sizeof iout));
  CHECK(iout[0] == 2 && iout[1] == 2 && iout[2] == 3);
  const pg_scalar zero = pg_scalar_float(0.0), two = pg_scalar_float(2.0);
  CHECK_OK(pg_tensor_clamp_scalar(ints, &zero, &two, &clf));
  CHECK_OK(pg_tensor_dtype(clf, &dt));
  CHECK(dt == PG_DTYPE_FLOAT32);
  read_floats(clf, fout, 3);
  CHECK(fout[0] == 1.0f && fout[1] == 2.0f && fout[2] == 2.0f);
  const int64_t lv[3] = {(int64_t)1 << 62, ((int64_t)1 << 62) + 3, ((int64_t)1 << 62) + 9};
  int64_t bout[3];
  const pg_scalar blo = pg_scalar_int(((int64_t)1 << 62) + 1);
  const pg_scalar bhi = pg_scalar_int(((int64_t)1 << 62) + 5);
  CHECK_OK(pg_tensor_from_data(lv, PG_DTYPE_INT64, s3, 1, NULL, &i64));
  CHECK_OK(pg_tensor_clamp_scalar(i64, &blo, &bhi, &clb));
  CHECK_OK(pg_tensor_to_host(clb, bout, sizeof bout));
  CHECK(bout[0] == blo.int_value && bout[1] == lv[1] && bout[2] == bhi.int_value);
  pg_tensor_free(cl);
  pg_tensor_free(clf);
  pg_tensor_free(i64);
  pg_tensor_free(clb);

  /* movement: reshape (3, 2) then transpose back to (2, 3) */
  pg_tensor_t r = NULL, tr = NULL;
  CHECK_OK(pg_tensor_reshape(a, s32, 2, &r));
  CHECK_OK(pg_tensor_transpose(r, 0, 1, &tr));
  read_floats(tr, out6, 6);
  const float want_tr[6] = {1, 3, 5, 2, 4, 6};
  for (int i = 0; i < 6; ++i) CHECK_NEAR(out6[i], want_tr[i], 0);

  /* getitem a[1, ::2] = [4, 6] */
  pg_index idx[2];
  memset(idx, 0, sizeof idx);
  idx[0].kind = PG_INDEX_INTEGER;
  idx[0].value = 1;
  idx[1].kind = PG_INDEX_SLICE;
  idx[1].step = 2;
  pg_tensor_t picked = NULL;
  CHECK_OK(pg_tensor_getitem(a, idx, 2, &picked));
  read_floats(picked, out2, 2);
  CHECK_NEAR(out2[0], 4, 0);
  CHECK_NEAR(out2[1], 6, 0);

  /* unary ops: relu, exp */
  const float uv[2] = {-1, 2};
  const int64_t s2[1] = {2};
  pg_tensor_t u = floats(uv, s2, 1), relu = NULL, ex = NULL;
  CHECK_OK(pg_tensor_relu(u, &relu));
  read_floats(relu, out2, 2);
  CHECK_NEAR(out2[0], 0, 0);
  CHECK_NEAR(out2[1], 2, 0);
  CHECK_OK(pg_tensor_exp(u, &ex));
  read_floats(ex, out2, 2);
  CHECK_NEAR(out2[0], exp(-1.0), 1e-6);
  CHECK_NEAR(out2[1], exp(2.0), 1e-5);

  /* split (2, 3) along axis 1 in pieces of 2: widths 2 and 1 */
  pg_tensor_t pieces[2] = {NULL, NULL};
  size_t count = 0;
  CHECK_OK(pg_tensor_split(a, 2, 1, pieces, 2, &count));
  CHECK(count == 2);
  CHECK_OK(pg_tensor_shape(pieces[1], dims, 4, &ndim));
  CHECK(ndim == 2 && dims[0] == 2 && dims[1] == 1);

  /* realize */
  int realized = 1;
  CHECK_OK(pg_tensor_is_realized(sum, &realized));
  CHECK(realized == 1); /* to_host realised it */
  pg_tensor_t lazy = NULL;
  CHECK_OK(pg_tensor_neg(a, &lazy));
  CHECK_OK(pg_tensor_is_realized(lazy, &realized));
  CHECK(realized == 0);
  CHECK_OK(pg_tensor_realize(lazy));
  CHECK_OK(pg_tensor_is_realized(lazy, &realized));
  CHECK(realized == 1);

  /* int64 beyond 2^53 (no double holds 2^60 + 1): full_int, a scalar operand, item_int64,
     arange_int; a scalar written as {value, is_int} without int_value still counts as value */
  const int64_t big = ((int64_t)1 << 60) + 1;
  pg_tensor_t fi = NULL, fi2 = NULL, fi3 = NULL, ar = NULL, ar_sum = NULL;
  int64_t total = 0;
  CHECK_OK(pg_tensor_full_int(s2, 1, big, PG_DTYPE_INT64, "cpu", &fi));
  CHECK_OK(pg_tensor_add_scalar(fi, pg_scalar_int(big), &fi2));
  int64_t got2[2] = {0, 0};
  CHECK_OK(pg_tensor_to_host(fi2, got2, sizeof got2));
  CHECK(got2[0] == 2 * big && got2[1] == 2 * big);
  pg_scalar three; /* as a client built before int_value filled it: zero */
  three.value = 3.0;
  three.is_int = 1;
  three.int_value = 0;
  CHECK_OK(pg_tensor_sub_scalar(fi, three, &fi3));
  CHECK_OK(pg_tensor_to_host(fi3, got2, sizeof got2));
  CHECK(got2[0] == big - 3);
  CHECK_OK(pg_tensor_arange_int(big, big + 3, 1, PG_DTYPE_INT64, "cpu", &ar));
  CHECK_OK(pg_tensor_sum(ar, NULL, 0, 0, &ar_sum));
  CHECK_OK(pg_tensor_item_int64(ar_sum, &total));
  CHECK(total == 3 * big + 3);

  /* PG_DTYPE_VOID fills take the value's dtype, as Tensor::full without one (tinygrad's) */
  const int64_t s1[1] = {1};
  pg_tensor_t vi = NULL, vbig = NULL, vf = NULL;
  CHECK_OK(pg_tensor_full_int(s1, 1, 3, PG_DTYPE_VOID, NULL, &vi));
  CHECK_OK(pg_tensor_full_int(s1, 1, big, PG_DTYPE_VOID, NULL, &vbig));
  CHECK_OK(pg_tensor_full(s1, 1, 3.0, PG_DTYPE_VOID, NULL, &vf));
  CHECK_OK(pg_tensor_dtype(vi, &dt));
  CHECK(dt == PG_DTYPE_INT32);
  CHECK_OK(pg_tensor_dtype(vbig, &dt));
  CHECK(dt == PG_DTYPE_INT64);
  CHECK_OK(pg_tensor_item_int64(vbig, &total));
  CHECK(total == big);
  CHECK_OK(pg_tensor_dtype(vf, &dt));
  CHECK(dt == PG_DTYPE_FLOAT32);
  pg_tensor_free(vi);
  pg_tensor_free(vbig);
  pg_tensor_free(vf);

  /* bool host bytes other than 0 are true and read back as 1 (numpy's and torch's bools are
     0 or 1): a byte 2 read back as 2, its logical_not as 3 and a sum counted it twice */
  const unsigned char bytes[4] = {0, 2, 255, 1};
  const int64_t s4[1] = {4};
  unsigned char bgot[4] = {9, 9, 9, 9};
  int64_t trues = 0;
  pg_tensor_t bl = NULL, nb = NULL, bsum = NULL;
  CHECK_OK(pg_tensor_from_data(bytes, PG_DTYPE_BOOL, s4, 1, NULL, &bl));
  CHECK_OK(pg_tensor_to_host(bl, bgot, sizeof bgot));
  CHECK(bgot[0] == 0 && bgot[1] == 1 && bgot[2] == 1 && bgot[3] == 1);
  CHECK_OK(pg_tensor_logical_not(bl, &nb));
  CHECK_OK(pg_tensor_to_host(nb, bgot, sizeof bgot));
  CHECK(bgot[0] == 1 && bgot[1] == 0 && bgot[2] == 0 && bgot[3] == 0);
  CHECK_OK(pg_tensor_sum(bl, NULL, 0, 0, &bsum));
  CHECK_OK(pg_tensor_item_int64(bsum, &trues));
  CHECK(trues == 3);
  pg_tensor_free(bl);
  pg_tensor_free(nb);
  pg_tensor_free(bsum);

  /* pad modes: [1 2 3; 4 5 6] padded (0, 1) rows, (2, 1) columns (torch's F.pad values) */
  const int64_t pads[4] = {0, 1, 2, 1};
  const int want_modes[3][18] = {{3, 2, 1, 2, 3, 2, 6, 5, 4, 5, 6, 5, 3, 2, 1, 2, 3, 2},
                                 {1, 1, 1, 2, 3, 3, 4, 4, 4, 5, 6, 6, 4, 4, 4, 5, 6, 6},
                                 {2, 3, 1, 2, 3, 1, 5, 6, 4, 5, 6, 4, 2, 3, 1, 2, 3, 1}};
  const int modes[3] = {PG_PAD_REFLECT, PG_PAD_REPLICATE, PG_PAD_CIRCULAR};
  for (int m = 0; m < 3; ++m) {
    pg_tensor_t padded = NULL;
    float got[18];
    CHECK_OK(pg_tensor_pad_mode(a, pads, 2, modes[m], 0.0, &padded));
    CHECK_OK(pg_tensor_shape(padded, dims, 4, &ndim));
    CHECK(ndim == 2 && dims[0] == 3 && dims[1] == 6);
    CHECK_OK(pg_tensor_to_host(padded, got, sizeof got));
    for (int i = 0; i < 18; ++i) CHECK_NEAR(got[i], want_modes[m][i], 0);
    pg_tensor_free(padded);
  }

  pg_tensor_t all[] = {a,         b,         c,    sum, mm,     rows, mean, ints,
                       twice,     half,      r,    tr,  picked, u,    relu, ex,
                       pieces[0], pieces[1], lazy, fi,  fi2,    fi3,  ar,   ar_sum};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; ++i) pg_tensor_free(all[i]);
  return check_report("capi.ops");
}
