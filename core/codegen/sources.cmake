# The codegen: kernel AST -> SDK kernel program (see codegen/lower.hpp).
target_sources(polygrad_compiler PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/affine.cpp
  ${CMAKE_CURRENT_LIST_DIR}/check.cpp
  ${CMAKE_CURRENT_LIST_DIR}/cpu_strategy.cpp
  ${CMAKE_CURRENT_LIST_DIR}/dot_form.cpp
  ${CMAKE_CURRENT_LIST_DIR}/group/narrow.cpp
  ${CMAKE_CURRENT_LIST_DIR}/group/plan.cpp
  ${CMAKE_CURRENT_LIST_DIR}/group/tiles.cpp
  ${CMAKE_CURRENT_LIST_DIR}/group/tuning.cpp
  ${CMAKE_CURRENT_LIST_DIR}/group/wmma.cpp
  ${CMAKE_CURRENT_LIST_DIR}/linearize.cpp
  ${CMAKE_CURRENT_LIST_DIR}/linearize_reduce.cpp
  ${CMAKE_CURRENT_LIST_DIR}/loop_order.cpp
  ${CMAKE_CURRENT_LIST_DIR}/lower.cpp
  ${CMAKE_CURRENT_LIST_DIR}/optimize.cpp
  ${CMAKE_CURRENT_LIST_DIR}/panels.cpp
  ${CMAKE_CURRENT_LIST_DIR}/rebuild.cpp
  ${CMAKE_CURRENT_LIST_DIR}/stash.cpp
  ${CMAKE_CURRENT_LIST_DIR}/transcendental.cpp
  ${CMAKE_CURRENT_LIST_DIR}/unroll.cpp
  ${CMAKE_CURRENT_LIST_DIR}/upcast_parts.cpp)
