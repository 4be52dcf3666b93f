# The C API (core/include/polygrad/polygrad.h), compiled into polygrad_compiler (linked whole
# into libpolygrad, which exports its entry points).
target_sources(polygrad_compiler PRIVATE
  capi/status.cpp
  capi/create.cpp
  capi/ops.cpp
  capi/shape.cpp
  capi/grad.cpp
  capi/device_api.cpp
  capi/capture.cpp
  capi/comm_api.cpp
  capi/safetensors.cpp
  capi/symbolic.cpp
  capi/gpt2.cpp
  capi/tokenizer.cpp)
