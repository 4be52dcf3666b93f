test_that("pg_devices lists the cpu device of the cpu_clang plugin", {
  d <- pg_devices()
  expect_s3_class(d, "data.frame")
  expect_identical(names(d), c("name", "type", "index", "plugin", "default"))
  cpu <- d[d$name == "cpu:0", ]
  expect_identical(nrow(cpu), 1L)
  expect_identical(cpu$plugin, "cpu_clang")
  expect_identical(cpu$index, 0L)
  expect_true(cpu$default)
})

test_that("pg_load_report says where each plugin was found and whether it loaded", {
  r <- pg_load_report()
  row <- r[r$plugin %in% "cpu_clang", ]
  expect_identical(nrow(row), 1L)
  expect_identical(row$status, "loaded")
  expect_identical(row$device_count, 1L)
  expect_true(file.exists(row$path))
})

test_that("a plugin that cannot load is a device error with the loader's reason", {
  bad <- tempfile(fileext = ".so")
  writeLines("not an ELF file", bad)
  on.exit(unlink(bad))
  expect_error(pg_load_plugin(bad), basename(bad), class = "polygrad_device_error")
  r <- pg_load_report()
  row <- r[r$path == normalizePath(bad) | r$path == bad, ]
  expect_identical(nrow(row), 1L)
  expect_true(nzchar(row$reason))
  expect_identical(pg_load_plugin("cpu_clang"), "cpu_clang")
})

test_that("devices are chosen by name; an unknown one carries the load report", {
  old <- pg_default_device()
  expect_identical(old, "cpu")
  prev <- pg_default_device("cpu")
  expect_identical(prev, "cpu")
  expect_identical(pg_default_device(), "cpu:0")
  expect_identical(pg_tensor(1)$device, "cpu:0")
  pg_default_device(NULL)
  expect_identical(pg_default_device(), old)
  e <- tryCatch(pg_default_device("nodev"), polygrad_error = function(e) e)
  expect_s3_class(e, "polygrad_device_error")
  expect_match(conditionMessage(e), "unknown device 'nodev'")
  expect_match(conditionMessage(e), "Plugin load report:")
  expect_match(conditionMessage(e), "cpu_clang")
  expect_error(pg_tensor(1)$to("nodev:3"), "available: cpu:0", class = "polygrad_device_error")
  expect_error(pg_zeros(2, device = "nosuch"), "nosuch", class = "polygrad_value_error")
  expect_identical(pg_tensor(2)$to("cpu:0")$device, "cpu:0")
  skip_if(any(pg_devices()$type == "cuda"), "a cuda device is loaded")
  expect_error(pg_tensor(1)$cuda(), "Plugin load report", class = "polygrad_device_error")
})

run_r <- function(code, env = character()) {
  script <- tempfile(fileext = ".R")
  on.exit(unlink(script))
  writeLines(code, script)
  libs <- paste(.libPaths(), collapse = .Platform$path.sep)
  suppressWarnings(system2(file.path(R.home("bin"), "Rscript"), script, stdout = TRUE,
                           stderr = TRUE, env = c(paste0("R_LIBS=", libs), env)))
}

test_that("the config file is honoured as in Python", {
  dir <- tempfile()
  dir.create(dir)
  on.exit(unlink(dir, recursive = TRUE))
  good <- file.path(dir, "good.yaml")
  writeLines(c("default_device: cpu:0", "devices:", "  cpu:", "    threads: 1"), good)
  out <- run_r(c("library(polygrad)", "cat(pg_default_device(), pg_tensor(1)$device, '\\n')",
                 "cat(attr(pg_load_report(), 'config'), '\\n')"),
               paste0("POLYGRAD_CONFIG=", good))
  expect_identical(trimws(out[[length(out) - 1]]), "cpu:0 cpu:0")
  expect_match(out[[length(out)]], "good.yaml")
  bad <- file.path(dir, "bad.yaml")
  writeLines(c("default_device: cpu", "no_such_key: 1"), bad)
  out <- run_r(c("library(polygrad)",
                 "r <- tryCatch(pg_devices(), polygrad_error = function(e) conditionMessage(e))",
                 "cat(if (is.character(r)) r else attr(pg_load_report(), 'config_error'), '\\n')"),
               paste0("POLYGRAD_CONFIG=", bad))
  expect_match(paste(out, collapse = "\n"), "no_such_key")
  expect_match(paste(out, collapse = "\n"), "bad.yaml")
})

test_that("POLYGRAD_LIB that does not exist stops the package from loading, naming it", {
  out <- run_r("library(polygrad)", "POLYGRAD_LIB=/nonexistent/libpolygrad.so")
  expect_match(paste(out, collapse = "\n"), "/nonexistent/libpolygrad.so \\(missing\\)")
})
