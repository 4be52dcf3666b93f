# polygrad_add_plugin(<name> SOURCES <files...> [OUTPUT_DIRECTORY <dir>])
#
# Builds a device plugin as a MODULE library named polygrad_<name>.so that links only the SDK,
# exports nothing but the entry point (hidden visibility, and a version script for the symbols
# C++ templates from system headers would otherwise export), and refuses undefined symbols at
# link time.
#
# polygrad_add_ccl_plugin(<name> SOURCES <files...> [OUTPUT_DIRECTORY <dir>]) does the same for
# a collective-communication plugin (sdk ccl.h): polygrad_ccl_<name>.so exporting only
# pg_ccl_entry.
function(polygrad_add_plugin name)
  cmake_parse_arguments(ARG "" "OUTPUT_DIRECTORY;_FILE;_MAP" "SOURCES" ${ARGN})
  if(NOT ARG__FILE)
    set(ARG__FILE "polygrad_${name}")
    set(ARG__MAP plugin_exports.map)
  endif()
  add_library(${name} MODULE ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE polygrad::sdk)
  set_target_properties(${name} PROPERTIES
    PREFIX ""
    OUTPUT_NAME "${ARG__FILE}"
    CXX_VISIBILITY_PRESET hidden
    C_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON)
  # Sanitizer runtimes may leave __asan_* symbols for the executable to provide; sanitizers can
  # arrive through CMAKE_CXX_FLAGS or add_compile_options, so look at both.
  get_property(_pg_dir_options DIRECTORY PROPERTY COMPILE_OPTIONS)
  if(NOT "${CMAKE_CXX_FLAGS} ${_pg_dir_options}" MATCHES "-fsanitize")
    target_link_options(${name} PRIVATE -Wl,--no-undefined)
  endif()
  if(CMAKE_SYSTEM_NAME STREQUAL "Linux")
    set(_pg_map ${CMAKE_CURRENT_FUNCTION_LIST_DIR}/${ARG__MAP})
    target_link_options(${name} PRIVATE -Wl,--version-script=${_pg_map})
    set_property(TARGET ${name} APPEND PROPERTY LINK_DEPENDS ${_pg_map})
  endif()
  if(ARG_OUTPUT_DIRECTORY)
    set_target_properties(${name} PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${ARG_OUTPUT_DIRECTORY})
  endif()
endfunction()

function(polygrad_add_ccl_plugin name)
  cmake_parse_arguments(ARG "" "OUTPUT_DIRECTORY" "SOURCES" ${ARGN})
  set(_pg_out "")
  if(ARG_OUTPUT_DIRECTORY)
    set(_pg_out OUTPUT_DIRECTORY ${ARG_OUTPUT_DIRECTORY})
  endif()
  polygrad_add_plugin(ccl_${name} SOURCES ${ARG_SOURCES} ${_pg_out}
    _FILE "polygrad_ccl_${name}" _MAP ccl_exports.map)
endfunction()
