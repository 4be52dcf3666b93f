/* C API autograd against hand-derived gradients. */
#include "check.h"

int main(void) {
  const float xv[3] = {1, -2, 3};
  const int64_t s3[1] = {3};
  pg_tensor_t x = NULL, sq = NULL, loss = NULL, g = NULL;
  float out[3];

  /* d/dx sum(x * x) = 2x; a second backward accumulates to 4x */
  CHECK_OK(pg_tensor_from_data(xv, PG_DTYPE_FLOAT32, s3, 1, "cpu", &x));
  CHECK_OK(pg_tensor_set_requires_grad(x, 1));
  CHECK_OK(pg_tensor_mul(x, x, &sq));
  CHECK_OK(pg_tensor_sum(sq, NULL, 0, 0, &loss));
  CHECK_OK(pg_tensor_backward(loss, NULL));
  CHECK_OK(pg_tensor_grad(x, &g));
  CHECK(g != NULL);
  read_floats(g, out, 3);
  for (int i = 0; i < 3; ++i) CHECK_NEAR(out[i], 2 * xv[i], 1e-6);
  pg_tensor_free(g);
  CHECK_OK(pg_tensor_backward(loss, NULL));
  CHECK_OK(pg_tensor_grad(x, &g));
  read_floats(g, out, 3);
  for (int i = 0; i < 3; ++i) CHECK_NEAR(out[i], 4 * xv[i], 1e-6);
  pg_tensor_free(g);
  CHECK_OK(pg_tensor_set_grad(x, NULL));
  CHECK_OK(pg_tensor_grad(x, &g));
  CHECK(g == NULL);

  /* gradient of sum(a @ w) w.r.t. w: dw[i][j] = sum over rows r of a[r][i] */
  const float av[6] = {1, 2, 3, 4, 5, 6}, wv[6] = {1, -1, 2, 0, 0.5f, 3};
  const int64_t s23[2] = {2, 3}, s32[2] = {3, 2};
  pg_tensor_t a = NULL, w = NULL, mm = NULL, total = NULL, grads[2] = {NULL, NULL};
  float gw[6], ga[6];
  CHECK_OK(pg_tensor_from_data(av, PG_DTYPE_FLOAT32, s23, 2, NULL, &a));
  CHECK_OK(pg_tensor_from_data(wv, PG_DTYPE_FLOAT32, s32, 2, NULL, &w));
  CHECK_OK(pg_tensor_matmul(a, w, &mm));
  CHECK_OK(pg_tensor_sum(mm, NULL, 0, 0, &total));
  pg_tensor_t targets[2] = {w, a};
  CHECK_OK(pg_tensor_gradient(total, targets, 2, NULL, grads));
  read_floats(grads[0], gw, 6);
  read_floats(grads[1], ga, 6);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 2; ++j) CHECK_NEAR(gw[i * 2 + j], av[i] + av[3 + i], 1e-5);
  /* d/da[r][i] = sum_j w[i][j] */
  for (int r = 0; r < 2; ++r)
    for (int i = 0; i < 3; ++i) CHECK_NEAR(ga[r * 3 + i], wv[i * 2] + wv[i * 2 + 1], 1e-5);

  /* second order: d/dx sum(x^3) = 3x^2, d/dx sum(3x^2) = 6x */
  pg_tensor_t cube = NULL, cube_sum = NULL, g1 = NULL, g1_sum = NULL, g2 = NULL;
  CHECK_OK(pg_tensor_mul(sq, x, &cube));
  CHECK_OK(pg_tensor_sum(cube, NULL, 0, 0, &cube_sum));
  /* (g1 is read only after g1_sum is built: reading realises it, which cuts its graph) */
  CHECK_OK(pg_tensor_gradient(cube_sum, &x, 1, NULL, &g1));
  CHECK_OK(pg_tensor_sum(g1, NULL, 0, 0, &g1_sum));
  CHECK_OK(pg_tensor_gradient(g1_sum, &x, 1, NULL, &g2));
  read_floats(g1, out, 3);
  for (int i = 0; i < 3; ++i) CHECK_NEAR(out[i], 3 * xv[i] * xv[i], 1e-5);
  read_floats(g2, out, 3);
  for (int i = 0; i < 3; ++i) CHECK_NEAR(out[i], 6 * xv[i], 1e-5);

  /* an explicit root gradient: d/dx (x * x) weighted by [1, 0, 2] */
  const float wv3[3] = {1, 0, 2};
  pg_tensor_t weights = NULL, gw3 = NULL;
  CHECK_OK(pg_tensor_from_data(wv3, PG_DTYPE_FLOAT32, s3, 1, NULL, &weights));
  CHECK_OK(pg_tensor_gradient(sq, &x, 1, weights, &gw3));
  read_floats(gw3, out, 3);
  for (int i = 0; i < 3; ++i) CHECK_NEAR(out[i], 2 * xv[i] * wv3[i], 1e-6);

  /* The gradient of a mean squared error over (batch, 2) outputs for three batch sizes:
   * dw[i][j] = sum_r 2 * (x[r] . w[:, j] - y[r][j]) * x[r][i] / (2 * batch). The batch is a
   * launch variable (its 1/(2 * batch) too): the later sizes compile nothing. */
  size_t compiled = 0, now = 0;
  for (int64_t batch = 5; batch <= 13; batch += 4) {
    float xb[13 * 3], yb[13 * 2], gb[6];
    for (int64_t i = 0; i < batch * 3; ++i) xb[i] = (float)((i * 7 + batch) % 11) / 4 - 1;
    for (int64_t i = 0; i < batch * 2; ++i) yb[i] = (float)((i * 5 + batch) % 7) / 3 - 1;
    const int64_t sx[2] = {batch, 3}, sy[2] = {batch, 2};
    pg_tensor_t xt = NULL, yt = NULL, pred = NULL, err = NULL, err2 = NULL, mse = NULL, gwt = NULL;
    CHECK_OK(pg_tensor_from_data(xb, PG_DTYPE_FLOAT32, sx, 2, NULL, &xt));
    CHECK_OK(pg_tensor_from_data(yb, PG_DTYPE_FLOAT32, sy, 2, NULL, &yt));
    CHECK_OK(pg_tensor_matmul(xt, w, &pred));
    CHECK_OK(pg_tensor_sub(pred, yt, &err));
    CHECK_OK(pg_tensor_mul(err, err, &err2));
    CHECK_OK(pg_tensor_mean(err2, NULL, 0, 0, &mse));
    CHECK_OK(pg_tensor_gradient(mse, &w, 1, NULL, &gwt));
    read_floats(gwt, gb, 6);
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 2; ++j) {
        double want = 0;
        for (int64_t r = 0; r < batch; ++r) {
          double p = 0;
          for (int q = 0; q < 3; ++q) p += (double)xb[r * 3 + q] * wv[q * 2 + j];
          want += 2 * (p - yb[r * 2 + j]) * xb[r * 3 + i] / (2.0 * (double)batch);
        }
        CHECK_NEAR(gb[i * 2 + j], want, 1e-5);
      }
    CHECK_OK(pg_compiled_kernel_count(&now));
    if (batch == 5) compiled = now;
    CHECK(now == compiled);
    pg_tensor_t mine[] = {xt, yt, pred, err, err2, mse, gwt};
    for (size_t i = 0; i < sizeof mine / sizeof mine[0]; ++i) pg_tensor_free(mine[i]);
  }
  CHECK(pg_compiled_kernel_count(NULL) == PG_API_ERR_INVALID_ARGUMENT);

  pg_tensor_t all[] = {x,        sq,   loss,     a,  w,      mm, total,   grads[0],
                       grads[1], cube, cube_sum, g1, g1_sum, g2, weights, gw3};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; ++i) pg_tensor_free(all[i]);
  return check_report("capi.grad");
}
