# ONDA_FUZZ: only the layers the model loader needs (src/graph, src/onnx) and fuzz/, every object
# instrumented for libFuzzer's coverage feedback and built with AddressSanitizer (and its leak
# checker) and UndefinedBehaviorSanitizer, so an out-of-bounds read, a leak or a signed overflow in
# shape arithmetic is a finding, not silent garbage.
if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
  message(FATAL_ERROR "ONDA_FUZZ needs clang (libFuzzer): configure with -DCMAKE_CXX_COMPILER=clang++")
endif()
add_library(onda_warnings INTERFACE)
target_compile_options(onda_warnings INTERFACE -Wall -Wextra -fno-strict-aliasing)
set(ONDA_SANITIZERS -fsanitize=address,undefined -fno-sanitize-recover=undefined)
add_compile_options(-g -O1 -fno-omit-frame-pointer -fsanitize=fuzzer-no-link ${ONDA_SANITIZERS})
add_link_options(${ONDA_SANITIZERS})
find_package(fmt REQUIRED)
include(cmake/PrecompiledHeaders.cmake)  # no-op here: see there
add_subdirectory(src/graph)
add_subdirectory(src/onnx)
add_subdirectory(fuzz)
