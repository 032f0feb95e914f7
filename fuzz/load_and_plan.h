// What the model-loader fuzz target does with each input, shared with the regression test that
// replays fuzz/regressions/ (tests/onnx/test_fuzz_regressions.cpp): parse the bytes as an ONNX model,
// bind every dynamic input dimension to a fixed size, simplify (shape inference, constant
// folding, If inlining, dead-node removal) and compute the liveness plan. The contract: return
// normally or throw onda::ModelError; anything else is a bug.
#pragma once
#include <map>
#include <string>
#include <string_view>

#include "graph/liveness.h"
#include "graph/simplify.h"
#include "onnx/onnx_loader.h"

namespace onda::fuzz {

// Every dynamic dimension of a graph input is bound to this, as a runtime binds it from a concrete
// input; inputs of unknown rank stay unbound.
constexpr int64_t kBoundDimension = 3;

inline std::map<std::string, Shape> fixed_input_binding(const Graph& graph) {
  std::map<std::string, Shape> shapes;
  for (const std::string& input : graph.inputs) {
    const ValueInfo* info = graph.find_value(input);
    if (!info || !info->shape) continue;
    Shape shape = *info->shape;
    for (int64_t& dim : shape)
      if (dim < 0) dim = kBoundDimension;
    shapes[input] = shape;
  }
  return shapes;
}

// External data resolves in a folder that does not exist: every reference is a missing file.
inline void load_and_plan(std::string_view bytes) {
  Graph graph = parse_onnx_model(bytes, "/nonexistent/onda-fuzz", "fuzz input");
  simplify_graph(graph, fixed_input_binding(graph));
  values_released_after(graph);
}

}  // namespace onda::fuzz
