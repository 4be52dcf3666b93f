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
