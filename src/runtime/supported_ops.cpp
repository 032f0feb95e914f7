#include <fmt/format.h>

#include <algorithm>

#include "onda/ops.h"
#include "ops/op_registry.h"

namespace onda {

std::vector<SupportedOp> supported_ops() {
  std::vector<SupportedOp> result;
  for (const auto& entry : ops::all_ops()) result.push_back({entry.domain, entry.op_type, entry.first_opset, entry.notes});
  std::sort(result.begin(), result.end(), [](const auto& a, const auto& b) { return a.op_type < b.op_type; });
  return result;
}

std::string supported_ops_markdown() {
  std::string text =
      "# Supported ONNX ops\n\n"
      "Generated from the op registry (`src/ops/`) by `build/onda ops --markdown > docs/supported-ops.md`;\n"
      "a test checks that this file is current. Every op runs on the GPU; shape arithmetic whose inputs\n"
      "are known before the run (Shape, Gather, Concat, ... on constants) is also evaluated on the host.\n\n"
      "| op | domain | from opset | notes |\n| --- | --- | --- | --- |\n";
  for (const auto& op : supported_ops()) {
    text += fmt::format("| {} | {} | {} | {} |\n", op.op_type, op.domain.empty() ? "ai.onnx" : op.domain,
                        op.first_opset, op.notes);
  }
  return text;
}

}  // namespace onda
