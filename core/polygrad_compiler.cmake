# polygrad_compiler: the compiler between the IR and the devices (codegen, scheduler, tensor
# graph, autograd, realize). A static PIC library linked into libpolygrad (PRIVATE) and directly
# into the compiler's tests. Each concern lists its own sources in <folder>/sources.cmake.
add_library(polygrad_compiler STATIC)
add_library(polygrad::compiler ALIAS polygrad_compiler)
target_include_directories(polygrad_compiler PUBLIC ${CMAKE_CURRENT_SOURCE_DIR}
                                                    ${CMAKE_CURRENT_SOURCE_DIR}/include)
target_link_libraries(polygrad_compiler PUBLIC polygrad_ir polygrad::sdk PRIVATE polygrad_warnings)
target_compile_definitions(polygrad_compiler PRIVATE POLYGRAD_BUILDING_LIBRARY)
set_target_properties(polygrad_compiler PROPERTIES
  POSITION_INDEPENDENT_CODE ON
  CXX_VISIBILITY_PRESET hidden
  VISIBILITY_INLINES_HIDDEN ON)
foreach(part codegen schedule tensor autograd runtime models)
  if(EXISTS ${CMAKE_CURRENT_SOURCE_DIR}/${part}/sources.cmake)
    include(${part}/sources.cmake)
  endif()
endforeach()
