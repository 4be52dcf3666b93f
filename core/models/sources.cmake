# Checkpoints and models (safetensors), compiled into polygrad_compiler; the C API's
# core/capi/safetensors.cpp exposes them.
target_sources(polygrad_compiler PRIVATE
  models/json_read.cpp
  models/safetensors_header.cpp
  models/safetensors_file.cpp
  models/safetensors_write.cpp
  models/gpt2_config.cpp
  models/gpt2_load.cpp
  models/gpt2_forward.cpp
  models/bpe_tokenizer.cpp)
target_link_libraries(polygrad_compiler PRIVATE nlohmann_json::nlohmann_json)
