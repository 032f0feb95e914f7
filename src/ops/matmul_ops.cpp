// ONNX MatMul (numpy.matmul broadcasting, 1-D operands) and Gemm (transA/transB, alpha, beta,
// C broadcast) onto the GEMM core. A constant 2-D B (a weight initializer) is prepacked once per
// node into the layout the kernels read fastest and reused in every run.
#include <fmt/format.h>

#include "graph/model_error.h"
#include "kernels/gemm/gemm.h"
#include "ops/op_inputs.h"
#include "ops/op_registry.h"

namespace onda::ops {
namespace {

namespace gemm = kernels::gemm;

struct MatmulState {
  std::optional<gemm::PackedB> packed_b;
};

// The packed B of this node, packing it on first use when B is a constant 2-D float matrix.
const gemm::PackedB* packed_constant_b(OpContext& context, const Value& b, bool transpose_b) {
  if (!b.constant || b.shape().size() != 2 || !is_float(b.dtype()) || !context.node_state) return nullptr;
  auto& state = *context.node_state;
  if (!state) {
    auto s = std::make_shared<MatmulState>();
    s->packed_b = gemm::prepack_b(context.kernels.gpu, context.pool, context.kernels.pipelines, context.recorder,
                                  context.to_device(b), transpose_b);
    state = s;
  }
  return &*std::static_pointer_cast<MatmulState>(state)->packed_b;
}

Value run_gemm(const Node& node, OpContext& context, const Value& a, bool transpose_a, const Value& b, bool transpose_b,
               const Value* addend, gemm::GemmEpilogue epilogue) {
  if (!is_float(a.dtype()) || !is_float(b.dtype())) {
    throw ModelError(fmt::format("{}: float16/float32 operands required, got {} and {}", node.describe(),
                                 dtype_name(a.dtype()), dtype_name(b.dtype())));
  }
  try {
    const gemm::PackedB* packed = packed_constant_b(context, b, transpose_b);
    gemm::GemmProblem problem;
    if (packed) {
      problem = gemm::GemmProblem::with_packed_b(a.shape(), a.dtype(), transpose_a, *packed);
    } else {
      problem.a_shape = a.shape();
      problem.a_dtype = a.dtype();
      problem.transpose_a = transpose_a;
      problem.b_shape = b.shape();
      problem.b_dtype = b.dtype();
      problem.transpose_b = transpose_b;
    }
    if (addend) {
      problem.addend_shape = addend->shape();
      problem.addend_dtype = addend->dtype();
    }
    problem.out_dtype = a.dtype();
    problem.epilogue = epilogue;
    gemm::Gemm plan(context.kernels.gpu, problem);
    gemm::GemmTensors tensors;
    tensors.a = context.to_device(a);
    if (packed) {
      tensors.packed_b = packed;
    } else {
      tensors.b = context.to_device(b);
    }
    if (addend) tensors.addend = context.to_device(*addend);
    Value out;
    out.device = context.allocate(problem.out_dtype, plan.output_shape());
    tensors.out = out.device;
    plan.record(context.kernels.gpu, context.kernels.pipelines, context.recorder, tensors);
    return out;
  } catch (const std::invalid_argument& e) {
    throw ModelError(fmt::format("{}: {}", node.describe(), e.what()));
  }
}

std::vector<Value> matmul(const Node& node, OpContext& context, const std::vector<Value>& inputs) {
  return {run_gemm(node, context, inputs.at(0), false, inputs.at(1), false, nullptr, {})};
}

std::vector<Value> gemm_op(const Node& node, OpContext& context, const std::vector<Value>& inputs) {
  gemm::GemmEpilogue epilogue;
  epilogue.alpha = node.attribute_float("alpha", 1.0f);
  epilogue.beta = node.attribute_float("beta", 1.0f);
  const bool transpose_a = node.attribute_int("transA", 0) != 0;
  const bool transpose_b = node.attribute_int("transB", 0) != 0;
  if (inputs.at(0).shape().size() != 2 || inputs.at(1).shape().size() != 2) {
    throw ModelError(node.describe() + ": A and B must be 2-D");
  }
  const Value& c = input_or_empty(inputs, 2);
  return {run_gemm(node, context, inputs[0], transpose_a, inputs[1], transpose_b, c.defined() ? &c : nullptr, epilogue)};
}

}  // namespace

void register_matmul_ops(std::vector<OpEntry>& ops) {
  ops.push_back({"", "MatMul", 1, matmul, "tiled / skinny GEMM, numpy batch broadcasting; constant B prepacked"});
  ops.push_back({"", "Gemm", 1, gemm_op, "alpha, beta, transA/B, C broadcast fused into the epilogue"});
}

}  // namespace onda::ops
