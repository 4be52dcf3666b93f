# Out-of-tree use of an installed polygrad, run as a ctest (tests/install/CMakeLists.txt):
#   cmake -DBUILD_DIR=<polygrad build> -DSOURCE_DIR=<polygrad source> -DWORK_DIR=<scratch>
#         -DLIBDIR=<CMAKE_INSTALL_LIBDIR> -DGENERATOR=<generator> -DCXX=<c++> -DCC=<cc>
#         -DPKG_CONFIG=<pkg-config> -P install_test.cmake
# 1. `cmake --install` the whole build into WORK_DIR/prefix;
# 2. configure and build readme_example/ (find_package(polygrad)) with main.cpp made from
#    main.cpp.in and README.md's ```cpp block, and run it;
# 3. compile c_api_example.c with `pkg-config --cflags --libs polygrad` and run it: its
#    values are checked, and that it ran on the installed cpu plugin;
# 4. run the installed `polygrad devices`, which must find libpolygrad and list cpu:0 from the
#    installed plugin.
# Every program runs in WORK_DIR with no polygrad environment variables and no user config,
# so plugins are found only through the library's own directory.
foreach(var BUILD_DIR SOURCE_DIR WORK_DIR LIBDIR GENERATOR CXX CC PKG_CONFIG)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "install_test.cmake: -D${var}=... is required")
  endif()
endforeach()

set(clean_env ${CMAKE_COMMAND} -E env --unset=POLYGRAD_PLUGIN_PATH --unset=POLYGRAD_CONFIG
    --unset=POLYGRAD_DEVICE --unset=LD_LIBRARY_PATH XDG_CONFIG_HOME=${WORK_DIR}/config)

# Runs a command in WORK_DIR; stops the test with its output when it fails. OUTPUT <var>
# keeps its standard output.
function(step)
  cmake_parse_arguments(ARG "" "OUTPUT" "" ${ARGN})
  execute_process(COMMAND ${ARG_UNPARSED_ARGUMENTS} WORKING_DIRECTORY ${WORK_DIR}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  string(REPLACE ";" " " cmd "${ARG_UNPARSED_ARGUMENTS}")
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "step failed (${rc}): ${cmd}\n${out}${err}")
  endif()
  message(STATUS "${cmd}\n${out}${err}")
  if(ARG_OUTPUT)
    string(STRIP "${out}" out)
    set(${ARG_OUTPUT} "${out}" PARENT_SCOPE)
  endif()
endfunction()

file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR}/config ${WORK_DIR}/readme_example)
set(prefix ${WORK_DIR}/prefix)
step(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix})
set(plugin ${prefix}/${LIBDIR}/polygrad/plugins/polygrad_cpu_clang.so)
if(NOT EXISTS ${plugin})
  message(FATAL_ERROR "the install has no cpu plugin at ${plugin}")
endif()
file(REAL_PATH ${plugin} plugin)  # the load report names canonical paths

# 2. The README's C++ example through find_package(polygrad).
file(READ ${SOURCE_DIR}/README.md readme)
if(NOT readme MATCHES "```cpp\n([^`]*)```")
  message(FATAL_ERROR "README.md has no ```cpp block")
endif()
set(README_EXAMPLE "${CMAKE_MATCH_1}")
configure_file(${CMAKE_CURRENT_LIST_DIR}/readme_example/main.cpp.in
               ${WORK_DIR}/readme_example/main.cpp @ONLY)
configure_file(${CMAKE_CURRENT_LIST_DIR}/readme_example/CMakeLists.txt
               ${WORK_DIR}/readme_example/CMakeLists.txt COPYONLY)
step(${CMAKE_COMMAND} -S ${WORK_DIR}/readme_example -B ${WORK_DIR}/readme_example/build
     -G ${GENERATOR} -DCMAKE_CXX_COMPILER=${CXX} -DCMAKE_BUILD_TYPE=Release
     -DCMAKE_PREFIX_PATH=${prefix})
step(${CMAKE_COMMAND} --build ${WORK_DIR}/readme_example/build)
step(${clean_env} ${WORK_DIR}/readme_example/build/readme_example)

# 3. A C program through pkg-config.
set(pc_env ${CMAKE_COMMAND} -E env PKG_CONFIG_PATH=${prefix}/${LIBDIR}/pkgconfig)
step(${pc_env} ${PKG_CONFIG} --cflags --libs polygrad OUTPUT flags)
step(${pc_env} ${PKG_CONFIG} --variable=libdir polygrad OUTPUT libdir)
separate_arguments(flags UNIX_COMMAND "${flags}")
step(${CC} -std=c11 -Wall -Wextra -Werror -pedantic ${CMAKE_CURRENT_LIST_DIR}/c_api_example.c
     ${flags} -Wl,-rpath,${libdir} -o ${WORK_DIR}/c_api_example)
step(${clean_env} ${WORK_DIR}/c_api_example ${plugin})

# 4. The installed command line finds its library (install RPATH) and the installed plugin.
step(${clean_env} ${prefix}/bin/polygrad devices OUTPUT devices)
string(FIND "${devices}" "${plugin}" plugin_at)
string(FIND "${devices}" "cpu:0" cpu_at)
if(plugin_at EQUAL -1 OR cpu_at EQUAL -1)
  message(FATAL_ERROR "installed `polygrad devices` lists no cpu:0 from ${plugin}:\n${devices}")
endif()
