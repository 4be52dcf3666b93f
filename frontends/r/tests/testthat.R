library(testthat)
library(polygrad)

test_check("polygrad")
