# polygrad_ir: the compiler core's IR (UOp, dtypes, ops), rewrite engine and symbolic engine,
# and what every layer above may use (support/): the phase timing, jobs side by side.
# A static PIC library linked into libpolygrad (PRIVATE) and directly into the IR tests.
add_library(polygrad_ir STATIC
  ir/arg.cpp
  ir/dtype.cpp
  ir/graph.cpp
  ir/intern.cpp
  ir/uop.cpp
  ir/verify.cpp
  rewrite/graph_rewrite.cpp
  rewrite/pattern.cpp
  rewrite/rule_set.cpp
  symbolic/bounds.cpp
  symbolic/fold.cpp
  symbolic/rules_algebra.cpp
  symbolic/rules_divmod.cpp
  symbolic/rules_fold.cpp
  symbolic/simplify.cpp
  support/phase_timing.cpp
  support/side_by_side.cpp)
add_library(polygrad::ir ALIAS polygrad_ir)
target_include_directories(polygrad_ir PUBLIC ${CMAKE_CURRENT_SOURCE_DIR})
target_link_libraries(polygrad_ir PUBLIC polygrad::sdk PRIVATE polygrad_warnings)
set_target_properties(polygrad_ir PROPERTIES
  POSITION_INDEPENDENT_CODE ON
  CXX_VISIBILITY_PRESET hidden
  VISIBILITY_INLINES_HIDDEN ON)
