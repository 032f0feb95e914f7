#include "ops/onnx_vocabulary.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <stdexcept>

namespace onda::ops {
namespace {

using kernels::rnn::Activation;
using kernels::rnn::ActivationSpec;

// Name, how many alpha / beta values it takes, and the defaults of the ONNX operator of that name.
struct ActivationInfo {
  const char* name;
  Activation kind;
  int alphas, betas;
  float default_alpha, default_beta;
};

constexpr ActivationInfo kActivations[] = {
    {"sigmoid", Activation::sigmoid, 0, 0, 0.0f, 0.0f},
    {"tanh", Activation::tanh, 0, 0, 0.0f, 0.0f},
    {"relu", Activation::relu, 0, 0, 0.0f, 0.0f},
    {"hardsigmoid", Activation::hard_sigmoid, 1, 1, 0.2f, 0.5f},
    {"affine", Activation::affine, 1, 1, 1.0f, 0.0f},
    {"leakyrelu", Activation::leaky_relu, 1, 0, 0.01f, 0.0f},
    {"thresholdedrelu", Activation::thresholded_relu, 1, 0, 1.0f, 0.0f},
    {"scaledtanh", Activation::scaled_tanh, 1, 1, 1.0f, 1.0f},
    {"elu", Activation::elu, 1, 0, 1.0f, 0.0f},
    {"softsign", Activation::softsign, 0, 0, 0.0f, 0.0f},
    {"softplus", Activation::softplus, 0, 0, 0.0f, 0.0f},
};

}  // namespace

kernels::conv::AutoPad conv_auto_pad_from_onnx(std::string_view auto_pad) {
  using kernels::conv::AutoPad;
  if (auto_pad == "NOTSET") return AutoPad::explicit_pads;
  if (auto_pad == "SAME_UPPER") return AutoPad::same_upper;
  if (auto_pad == "SAME_LOWER") return AutoPad::same_lower;
  if (auto_pad == "VALID") return AutoPad::valid;
  throw std::invalid_argument("unknown auto_pad '" + std::string(auto_pad) + "'");
}

kernels::ReduceOp reduce_op_from_onnx(std::string_view op_type) {
  using kernels::ReduceOp;
  if (op_type == "ReduceSum") return ReduceOp::Sum;
  if (op_type == "ReduceMean") return ReduceOp::Mean;
  if (op_type == "ReduceMax") return ReduceOp::Max;
  if (op_type == "ReduceMin") return ReduceOp::Min;
  if (op_type == "ReduceProd") return ReduceOp::Prod;
  if (op_type == "ReduceL1") return ReduceOp::L1;
  if (op_type == "ReduceL2") return ReduceOp::L2;
  if (op_type == "ReduceSumSquare") return ReduceOp::SumSquare;
  if (op_type == "ReduceLogSumExp") return ReduceOp::LogSumExp;
  throw std::invalid_argument(fmt::format("'{}' is not a reduction", op_type));
}

std::vector<ActivationSpec> rnn_activations_from_onnx(const std::vector<std::string>& names,
                                                      const std::vector<float>& alpha,
                                                      const std::vector<float>& beta) {
  std::vector<ActivationSpec> specs;
  size_t next_alpha = 0, next_beta = 0;
  for (const std::string& name : names) {
    std::string lower = name;
    std::transform(lower.begin(), lower.end(), lower.begin(),
                   [](unsigned char c) { return std::tolower(c); });
    const ActivationInfo* info = nullptr;
    for (const ActivationInfo& a : kActivations) {
      if (lower == a.name) info = &a;
    }
    if (!info) throw std::invalid_argument(fmt::format("unsupported activation '{}'", name));
    ActivationSpec spec{info->kind, info->default_alpha, info->default_beta};
    if (info->alphas && next_alpha < alpha.size()) spec.alpha = alpha[next_alpha++];
    if (info->betas && next_beta < beta.size()) spec.beta = beta[next_beta++];
    specs.push_back(spec);
  }
  return specs;
}

}  // namespace onda::ops
