# The Tensor API (core/include/polygrad/tensor.hpp), compiled into polygrad_compiler.
#
# Nothing else in libpolygrad calls the Tensor class, so the linker would leave these objects in
# the static archive and libpolygrad.so would export none of them. Each file is listed with one
# of its (Itanium-mangled) entry points, and libpolygrad's link forces that symbol in
# (--undefined), which pulls in the whole object file (as core/capi/sources.cmake does).
target_sources(polygrad_compiler PRIVATE tensor/lazy.cpp)
set(polygrad_tensor_files
  support.cpp:_ZN8polygrad6detail5stateERKNS_6TensorEPKc
  tensor.cpp:_ZNK8polygrad6Tensor5shapeEv
  construction.cpp:_ZN8polygrad6Tensor11manual_seedEm
  elementwise.cpp:_ZNK8polygrad6Tensor3negEv
  math.cpp:_ZNK8polygrad6Tensor3expEv
  activations.cpp:_ZNK8polygrad6Tensor4reluEv
  reduce.cpp:_ZNK8polygrad6Tensor6cumsumEl
  movement.cpp:_ZNK8polygrad6Tensor7permuteERKSt6vectorIlSaIlEE
  autograd.cpp:_ZNK8polygrad6Tensor8backwardEv
  indexing.cpp:_ZNK8polygrad6Tensor5chunkEll
  nn_ops.cpp:_ZNK8polygrad6Tensor7softmaxEl
  conv.cpp:_ZNK8polygrad6Tensor6conv2dERKS0_RKSt8optionalIS0_ElNS_5Size2ES7_S7_
  einsum.cpp:_ZN8polygrad6Tensor6einsumERKNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEERKSt6vectorIS0_SaIS0_EE)
foreach(entry ${polygrad_tensor_files})
  string(REPLACE ":" ";" parts ${entry})
  list(GET parts 0 file)
  list(GET parts 1 symbol)
  target_sources(polygrad_compiler PRIVATE tensor/${file})
  # EVAL expands ${symbol} now: a deferred call reads variables only when it runs.
  cmake_language(EVAL CODE
    "cmake_language(DEFER CALL target_link_options polygrad PRIVATE LINKER:--undefined=${symbol})")
endforeach()
