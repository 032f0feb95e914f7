// ONNX names and attribute values turned into the kernels' enums and numbers: kernels know no ONNX
// (docs/architecture.md), so what an op spells as strings is parsed here.
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "kernels/conv/conv_geometry.h"
#include "kernels/reduce/reduce_kernel.h"
#include "kernels/rnn/rnn_spec.h"

namespace onda::ops {

// "ReduceMean" -> ReduceOp::Mean; std::invalid_argument for an op type that is not a reduction.
kernels::ReduceOp reduce_op_from_onnx(std::string_view op_type);

// Conv / ConvTranspose auto_pad: "NOTSET" (explicit pads), "SAME_UPPER", "SAME_LOWER", "VALID";
// std::invalid_argument naming any other value.
kernels::conv::AutoPad conv_auto_pad_from_onnx(std::string_view auto_pad);

// A recurrent op's `activations` names (case-insensitive) with its activation_alpha / activation_beta
// lists: the values are consumed in order by the functions that take them, an exhausted list giving
// the ONNX operator's default (as onnxruntime does). std::invalid_argument on an unknown name.
std::vector<kernels::rnn::ActivationSpec> rnn_activations_from_onnx(const std::vector<std::string>& names,
                                                                    const std::vector<float>& alpha,
                                                                    const std::vector<float>& beta);

}  // namespace onda::ops
