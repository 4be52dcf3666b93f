target_sources(polygrad_compiler PRIVATE tensor/lazy.cpp)
