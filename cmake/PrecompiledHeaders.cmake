# Build time (CI builds a fresh clone on 2 cores): the headers nearly every source of a target parses,
# compiled once per target. fmt and the standard containers are in 127 and ~100 of the layers' sources;
# Dawn's webgpu_cpp.h (2 s to parse) reaches nearly every source of the GPU-aware layers through
# gpu/context.h. Layers that must not know the GPU (graph, onnx: docs/architecture.md) take no Dawn
# header, so a stray GPU include there still fails to compile; and the fuzz build (clang, graph and
# onnx only) compiles without any, so that a source relying on the precompiled standard headers for
# its own includes fails there.
function(onda_precompile_common_headers target)
  if(ONDA_FUZZ)
    return()
  endif()
  set(headers <algorithm> <cstdint> <map> <memory> <optional> <stdexcept> <string> <string_view> <vector>
              <fmt/format.h>)
  if("WEBGPU" IN_LIST ARGN)
    list(APPEND headers <webgpu/webgpu_cpp.h>)
  endif()
  target_precompile_headers(${target} PRIVATE ${headers})
endfunction()
