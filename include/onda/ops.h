// Which ONNX ops onda runs on the GPU (generated documentation and tools read this).
#pragma once
#include <string>
#include <vector>

namespace onda {

struct SupportedOp {
  std::string domain;  // "" = ai.onnx
  std::string op_type;
  int64_t first_opset = 1;
  std::string notes;
};

std::vector<SupportedOp> supported_ops();

// docs/supported-ops.md's text: a markdown table of supported_ops().
std::string supported_ops_markdown();

}  // namespace onda
