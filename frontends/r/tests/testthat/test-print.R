test_that("format shows values as torch for R does", {
  m <- pg_tensor(matrix(c(1, 2, 3, 4, 5, 6), 2))
  expect_identical(format(m), c("polygrad_tensor", "1 3 5", "2 4 6", "[ float32{2,3} on cpu:0 ]"))
  v <- pg_tensor(c(0.5, 10), dtype = "float64", requires_grad = TRUE)
  expect_identical(format(v), c("polygrad_tensor", " 0.5", "10.0",
                                "[ float64{2} on cpu:0 ][ requires_grad = TRUE ]"))
  a <- pg_tensor(array(1:8, c(2, 2, 2)), dtype = "int32")
  expect_identical(format(a), c("polygrad_tensor", "(1,.,.) = ", "1 5", "3 7", "",
                                "(2,.,.) = ", "2 6", "4 8", "[ int32{2,2,2} on cpu:0 ]"))
  expect_identical(format(pg_tensor(c(TRUE, FALSE), dtype = "bool"))[2:3], c(" TRUE", "FALSE"))
  expect_identical(format(pg_full(NULL, 7)), c("polygrad_tensor", "7", "[ float32{} on cpu:0 ]"))
  expect_identical(format(pg_zeros(0, 3))[2], "[ empty ]")
  expect_match(format(pg_zeros(2000))[2], "2000 elements")
  expect_output(print(m), "float32\\{2,3\\}")
})
