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
      "Element types: FLOAT, FLOAT16, INT32, INT64, UINT8 and BOOL are onda's own. WebGPU has no 64-bit\n"
      "floats and no 8/16-bit integers, so DOUBLE is carried as float32, INT8 / INT16 / UINT16 as int32\n"
      "and UINT32 / UINT64 as int64: converted where they enter, computed in the carrier (a DOUBLE graph\n"
      "to float32 accuracy) and returned in it; `onda inspect` marks such inputs and outputs. Cast to\n"
      "INT8 / INT16 / UINT16 wraps as numpy's astype, BitShift on UINT16 wraps to 16 bits; other\n"
      "arithmetic past the narrow type's range is not wrapped. See docs/conformance.md.\n\n"
      "| op | domain | from opset | notes |\n| --- | --- | --- | --- |\n";
  for (const auto& op : supported_ops()) {
    text += fmt::format("| {} | {} | {} | {} |\n", op.op_type, op.domain.empty() ? "ai.onnx" : op.domain,
                        op.first_opset, op.notes);
  }
  return text;
}

}  // namespace onda
