test_that("tensors written by the Python package read back with their values", {
  f <- test_path("fixtures", "python.safetensors")
  st <- pg_load_safetensors(f)
  # the values of make_python_fixture.py, written again in base R
  expect_identical(sort(names(st)), sort(c("a", "b", "c", "d", "e", "lin.weight", "lin.bias")))
  expect_identical(st$a$dtype, "float32")
  expect_identical(as.array(st$a), from_row_major(0:23 / 4, c(2, 3, 4)))
  expect_identical(st$b$dtype, "int64")
  expect_identical(as.array(st$b), matrix(c(1, 3, -2, 2^40), 2))
  expect_identical(as.numeric(st$c), c(0.1, 0.2))
  expect_identical(as.logical(st$d), c(TRUE, FALSE, TRUE))
  expect_identical(st$e$dtype, "float16")
  expect_identical(as.numeric(st$e), c(1.5, -2.25))
  expect_identical(attr(st, "metadata"), list(writer = "python"))
  # into a module of the same shape
  lin <- nn_module("holder", initialize = function() self$lin <- nn_linear(2, 3))()
  lin$load_state_dict(st[c("lin.weight", "lin.bias")])
  expect_identical(as.array(lin$lin$weight), matrix(c(0, 2, 4, 1, 3, 5), 3))
  expect_identical(as.numeric(lin$lin$bias), c(0.5, -0.5, 1))
})

test_that("a file round-trips every dtype exactly", {
  f <- tempfile(fileext = ".safetensors")
  on.exit(unlink(f))
  a <- array(seq(-2, 3.5, length.out = 24), c(2, 3, 4))
  tensors <- list(
    f64 = pg_tensor(a, dtype = "float64"), f32 = pg_tensor(a), f16 = pg_tensor(a, dtype = "float16"),
    bf16 = pg_tensor(c(1.5, -3), dtype = "bfloat16"), i64 = pg_tensor(c(2^40, -1), dtype = "int64"),
    i8 = pg_tensor(c(-128, 127), dtype = "int8"), u8 = pg_tensor(c(0, 255), dtype = "uint8"),
    b = pg_tensor(c(TRUE, FALSE), dtype = "bool"), scalar = pg_full(NULL, 3),
    `weird "name"\n` = pg_tensor(1))
  pg_save_safetensors(tensors, f, metadata = list(format = "pt", note = "a \"quoted\" value"))
  back <- pg_load_safetensors(f)
  expect_identical(names(back), names(tensors))
  for (k in names(tensors)) {
    expect_identical(back[[k]]$dtype, tensors[[k]]$dtype)
    expect_identical(back[[k]]$shape, tensors[[k]]$shape)
    expect_identical(as.array(back[[k]]), as.array(tensors[[k]]))
  }
  expect_identical(as.array(back$f64), a)
  expect_identical(attr(back, "metadata"), list(format = "pt", note = "a \"quoted\" value"))
  # R arrays are converted
  pg_save_safetensors(list(m = matrix(1:6, 2)), f)
  expect_identical(as.array(pg_load_safetensors(f)$m), matrix(as.numeric(1:6), 2))
})

test_that("the Python package reads what R writes", {
  py <- Sys.getenv("POLYGRAD_PYTHON")
  skip_if(!nzchar(py), "POLYGRAD_PYTHON (a Python with the polygrad package) is not set")
  f <- tempfile(fileext = ".safetensors")
  on.exit(unlink(f))
  a <- array(1:24 / 8, c(2, 3, 4))
  pg_save_safetensors(list(a = pg_tensor(a), i = pg_tensor(c(7, -9), dtype = "int64")), f)
  script <- tempfile(fileext = ".py")
  on.exit(unlink(script), add = TRUE)
  writeLines(c(
    "import sys",
    "from polygrad.nn import safe_load",
    "t = safe_load(sys.argv[1])",
    "print(t['a'].dtype, list(t['a'].shape))",
    "print(' '.join(repr(float(v)) for v in t['a'].numpy().reshape(-1)))",
    "print(' '.join(str(int(v)) for v in t['i'].numpy()))"), script)
  out <- system2(py, c(script, f), stdout = TRUE)
  expect_identical(out[[1]], "float32 [2, 3, 4]")
  expect_identical(as.numeric(strsplit(out[[2]], " ")[[1]]), row_major(a))
  expect_identical(out[[3]], "7 -9")
})

test_that("bad files are errors naming the problem", {
  f <- tempfile()
  on.exit(unlink(f))
  writeBin(as.raw(c(255, 0, 0, 0, 0, 0, 0, 0, 1)), f)
  expect_error(pg_load_safetensors(f), "header length", class = "polygrad_value_error")
  expect_error(pg_load_safetensors(file.path(tempdir(), "none.safetensors")),
               "none.safetensors: cannot open: No such file", class = "polygrad_value_error")
  expect_error(pg_save_safetensors(list(pg_tensor(1)), f), "named list")
})

test_that("a sharded checkpoint loads through its index", {
  dir <- tempfile()
  dir.create(dir)
  on.exit(unlink(dir, recursive = TRUE))
  a <- matrix(c(1.5, -2, 3, 4.25), 2)
  pg_save_safetensors(list(a = pg_tensor(a)), file.path(dir, "part-1.safetensors"))
  pg_save_safetensors(list(b = pg_tensor(c(7, 8, 9), dtype = "int32")),
                      file.path(dir, "part-2.safetensors"))
  writeLines(c('{"metadata": {"total_size": 28},',
               ' "weight_map": {"b": "part-2.safetensors", "a": "part-1.safetensors"}}'),
             file.path(dir, "model.safetensors.index.json"))
  st <- pg_load_safetensors(file.path(dir, "model.safetensors.index.json"))
  expect_identical(names(st), c("b", "a"))  # the weight_map's order
  expect_identical(as.matrix(st$a), a)
  expect_identical(st$b$dtype, "int32")
  expect_identical(as.numeric(st$b), c(7, 8, 9))
  expect_identical(attr(st, "metadata"), list(total_size = "28"))
  # a shard that lacks what the index maps to it names the shard and the key
  writeLines('{"weight_map": {"c": "part-1.safetensors"}}', file.path(dir, "bad.index.json"))
  expect_error(pg_load_safetensors(file.path(dir, "bad.index.json")), "part-1.safetensors.*'c'|'c'.*part-1",
               class = "polygrad_error")
})
