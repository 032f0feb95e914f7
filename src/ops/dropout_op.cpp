// ONNX Dropout at inference: the output is the input (no copy) and the optional mask is all true.
// training_mode = true draws a random mask, which an inference engine has no use for: refused,
// except with ratio 0 (nothing dropped, the same identity).
#include <fmt/format.h>

#include "graph/model_error.h"
#include "ops/op_inputs.h"
#include "ops/op_registry.h"

namespace onda::ops {
namespace {

std::vector<Value> dropout(const Node& node, OpContext&, const std::vector<Value>& inputs) {
  const Value& x = inputs.at(0);
  bool training = false;
  double ratio = node.attribute_float("ratio", 0.5f);
  if (const Value& r = input_or_empty(inputs, 1); r.defined())
    ratio = constant_doubles(node, r, "ratio").at(0);
  if (const Value& t = input_or_empty(inputs, 2); t.defined())
    training = constant_ints(node, t, "training_mode").at(0) != 0;
  if (training && ratio != 0.0) {
    throw ModelError(
        fmt::format("{}: training_mode=1 with ratio {} draws a random mask; onda is an inference engine "
                    "(inference Dropout is the identity)",
                    node.describe(), ratio));
  }
  std::vector<Value> outputs(node.outputs.size());
  outputs[0] = x;
  if (outputs.size() > 1 && !node.outputs[1].empty()) {
    outputs[1].host =
        HostTensor::from_int64(DType::boolean, x.shape(), std::vector<int64_t>(shape_numel(x.shape()), 1));
  }
  return outputs;
}

}  // namespace

void register_dropout_ops(std::vector<OpEntry>& ops) {
  ops.push_back({"", "Dropout", 1, dropout,
                 "inference: the identity (no copy), mask all true; training_mode only with ratio 0"});
}

}  // namespace onda::ops
