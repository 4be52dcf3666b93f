# The C API (core/include/polygrad/polygrad.h), compiled into polygrad_compiler.
#
# Nothing inside libpolygrad calls the C API, so the linker would leave these objects in the
# static archive and libpolygrad.so would export none of them. Each file is listed with one of
# its entry points, and libpolygrad's link forces that symbol in (--undefined), which pulls in
# the whole object file. The call is deferred to the end of core/CMakeLists.txt, where the
# `polygrad` target exists (EVAL expands the list now: DEFER alone would expand it then).
set(polygrad_capi_files
  status.cpp:pg_last_error
  create.cpp:pg_tensor_from_data
  ops.cpp:pg_tensor_add
  shape.cpp:pg_tensor_reshape
  grad.cpp:pg_tensor_backward
  device_api.cpp:pg_device_list)
foreach(entry ${polygrad_capi_files})
  string(REPLACE ":" ";" parts ${entry})
  list(GET parts 0 file)
  list(GET parts 1 symbol)
  target_sources(polygrad_compiler PRIVATE capi/${file})
  list(APPEND polygrad_capi_anchors "LINKER:--undefined=${symbol}")
endforeach()
cmake_language(EVAL CODE
  "cmake_language(DEFER CALL target_link_options polygrad PRIVATE ${polygrad_capi_anchors})")
