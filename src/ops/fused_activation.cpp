#include "ops/fused_activation.h"

#include <fmt/format.h>

#include "graph/fuse_activations.h"
#include "graph/model_error.h"

namespace onda::ops {

FusedActivation fused_activation_of(const Node& node) {
  FusedActivation fused;
  const std::string name = node.attribute_string(kFusedActivationAttribute, "");
  if (name.empty()) return fused;
  for (auto a : {kernels::gemm::Activation::relu, kernels::gemm::Activation::leaky_relu,
                 kernels::gemm::Activation::sigmoid, kernels::gemm::Activation::tanh}) {
    if (kernels::gemm::activation_name(a) == name) fused.activation = a;
  }
  if (fused.activation == kernels::gemm::Activation::none)
    throw ModelError(fmt::format("{}: unknown fused activation '{}'", node.describe(), name));
  fused.alpha = node.attribute_float(kFusedActivationAlphaAttribute, 0.01f);
  return fused;
}

kernels::gemm::GemmEpilogue fused_epilogue(const Node& node) {
  const FusedActivation fused = fused_activation_of(node);
  kernels::gemm::GemmEpilogue epilogue;
  epilogue.activation = fused.activation;
  epilogue.activation_alpha = fused.alpha;
  return epilogue;
}

}  // namespace onda::ops
