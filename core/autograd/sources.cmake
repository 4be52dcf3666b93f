target_sources(polygrad_compiler PRIVATE autograd/backward.cpp autograd/gradient.cpp
                                         autograd/rules.cpp)
# The C API (core/capi) joins polygrad_compiler through this file.
if(EXISTS ${CMAKE_CURRENT_SOURCE_DIR}/capi/sources.cmake)
  include(${CMAKE_CURRENT_SOURCE_DIR}/capi/sources.cmake)
endif()
