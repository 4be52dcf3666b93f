rss_mb <- function() {
  status <- readLines("/proc/self/status")
  as.numeric(sub("[^0-9]*([0-9]+).*", "\\1", grep("^VmRSS", status, value = TRUE))) / 1024
}

test_that("tensors are freed when R collects them: 100,000 keep memory flat", {
  # (the R heap of a test run is large, so R's own collections are rare: the glue's run)
  skip_if_not(file.exists("/proc/self/status"), "no /proc/self/status to read memory from")
  live <- function() .Call(polygrad:::C_pgr_live_handles)
  old <- pg_gc_threshold(16)
  on.exit(pg_gc_threshold(old))
  v <- as.numeric(1:256)
  x <- NULL
  for (i in 1:20000) x <- pg_tensor(v) * 2  # warm-up: caches, allocator pools, the peak
  gc()
  base_live <- live()
  base_rss <- rss_mb()
  for (i in 1:100000) x <- pg_tensor(v) * 2
  gc()
  # every handle but the last two (x and its input) was finalised
  expect_lte(live() - base_live, 2)
  # without the finalizers 200,000 handles of 1 KiB of data and a graph node each stay; with
  # them the unreferenced ones never pass the threshold by much
  expect_lt(rss_mb() - base_rss, 24)
  expect_identical(as.numeric(x), v * 2)
})

test_that("a collected tensor's R object is reused only when nothing could still reach it", {
  # (the glue reuses a finalised tensor's R object for a later tensor: not one the user gave
  # another attribute, nor one another finalizer kept)
  make_marked <- function() {
    x <- pg_tensor(1)
    attr(x, "mark") <- "old"
    NULL
  }
  for (i in 1:50) make_marked()
  keep <- new.env()
  local({
    t <- pg_tensor(c(7, 8, 9))
    holder <- new.env()
    holder$t <- t
    reg.finalizer(holder, function(e) keep$t <- e$t)
  })
  gc()
  gc()
  fresh <- lapply(1:200, function(i) pg_tensor(i))
  expect_true(all(vapply(fresh, function(y) is.null(attr(y, "mark")), logical(1))))
  expect_identical(vapply(fresh, as.numeric, numeric(1)), as.numeric(1:200))
  # the tensor the finalizer kept is still the dead one, not one of the new tensors
  expect_true(is_pg_tensor(keep$t))
  expect_error(as.numeric(keep$t), class = "polygrad_error")
})
