# Out-of-tree build of the template plugin against an installed SDK, run as a ctest:
#   cmake -DBUILD_DIR=<polygrad build> -DSOURCE_DIR=<polygrad source> -DWORK_DIR=<scratch>
#         -DCXX=<compiler> -P out_of_tree_template.cmake
# Installs the build's `sdk` component into WORK_DIR/prefix, configures sdk/template with
# CMAKE_PREFIX_PATH pointing there and no build type (the template must default to Release),
# builds it and runs the installed polygrad-conformance on the result.
foreach(var BUILD_DIR SOURCE_DIR WORK_DIR CXX)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "out_of_tree_template.cmake: -D${var}=... is required")
  endif()
endforeach()

function(step)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT rc EQUAL 0)
    string(REPLACE ";" " " cmd "${ARGN}")
    message(FATAL_ERROR "step failed (${rc}): ${cmd}\n${out}")
  endif()
  message(STATUS "${out}")
endfunction()

file(REMOVE_RECURSE ${WORK_DIR})
set(prefix ${WORK_DIR}/prefix)
step(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix} --component sdk)
step(${CMAKE_COMMAND} -S ${SOURCE_DIR}/sdk/template -B ${WORK_DIR}/build
     -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_CXX_COMPILER=${CXX})
file(STRINGS ${WORK_DIR}/build/CMakeCache.txt build_type REGEX "^CMAKE_BUILD_TYPE:")
if(NOT build_type MATCHES "=Release$")
  message(FATAL_ERROR "the template configured without a build type is not Release: ${build_type}")
endif()
step(${CMAKE_COMMAND} --build ${WORK_DIR}/build)
step(${prefix}/bin/polygrad-conformance ${WORK_DIR}/build/polygrad_template.so)
