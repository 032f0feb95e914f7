// libFuzzer target for the model loader: bytes -> parse_onnx_model -> simplify_graph (shape
// inference and constant folding) for a fixed input binding -> liveness plan.
//
// The loader's contract (src/onnx/onnx_loader.h): any input either loads or throws onda::ModelError
// naming the problem. So ModelError is caught here and everything else is a finding: another
// exception type (std::terminate aborts), a crash, an AddressSanitizer or UndefinedBehaviorSanitizer
// report, a leak, a timeout (-timeout) or a runaway allocation (-malloc_limit_mb).
//
// Run by scripts/fuzz.sh on the seed corpus written by make_seed_models.
#include <cstddef>
#include <cstdint>
#include <map>
#include <string_view>

#include "graph/liveness.h"
#include "graph/model_error.h"
#include "graph/simplify.h"
#include "onnx/onnx_loader.h"

namespace {

// Every dynamic dimension of a graph input is bound to this, as a runtime would bind it from a
// concrete input; inputs of unknown rank stay unbound.
constexpr int64_t kBoundDimension = 3;

std::map<std::string, onda::Shape> fixed_input_binding(const onda::Graph& graph) {
  std::map<std::string, onda::Shape> shapes;
  for (const std::string& input : graph.inputs) {
    const onda::ValueInfo* info = graph.find_value(input);
    if (!info || !info->shape) continue;
    onda::Shape shape = *info->shape;
    for (int64_t& dim : shape)
      if (dim < 0) dim = kBoundDimension;
    shapes[input] = shape;
  }
  return shapes;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  try {
    // External data resolves in a folder that does not exist: every reference is a missing file.
    onda::Graph graph = onda::parse_onnx_model(bytes, "/nonexistent/onda-fuzz", "fuzz input");
    onda::simplify_graph(graph, fixed_input_binding(graph));
    onda::values_released_after(graph);
  } catch (const onda::ModelError&) {
    // The documented outcome for a malformed model.
  }
  return 0;
}
