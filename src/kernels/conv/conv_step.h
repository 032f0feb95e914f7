// Internal to the conv family: one planned path of a ConvPlan (conv_plan.h). Each path's file
// plans its step from the geometry, operands and options once and records it per run.
#pragma once
#include <memory>

#include "kernels/conv/conv_plan.h"
#include "kernels/conv/conv_uniforms.h"

namespace onda::kernels::conv::detail {

class ConvStep {
 public:
  virtual ~ConvStep() = default;
  virtual void record(gpu::CommandRecorder& recorder, gpu::BufferPool& pool, const ConvTensors& t) const = 0;
  // Whether record() reads the weight tensor: not once the step records from a derived form of it
  // kept in the node's ConvWeightCache (the implicit GEMM's packed weight).
  virtual bool reads_weight() const { return true; }
};

// What every step is planned from.
struct StepInputs {
  const KernelContext& kc;
  const ConvGeometry& g;
  const ConvOperands& operands;
  const ConvOptions& options;
  const ChunkLimits& limits;
};

// Checks the tensors of one run against the geometry (std::invalid_argument naming what is wrong;
// conv_plan.cpp). `weight_required` false: a Conv's weight may be left out (ConvPlan::reads_weight).
void check_tensors(const ConvGeometry& g, const ConvTensors& t, bool weight_required = true);

// Direct kernels (conv_direct.cpp); `slice`: cut into batches / groups / row windows where X, Y or W
// exceed a binding (false: bound whole, as the gemm path's empty-input fallback does).
std::unique_ptr<ConvStep> plan_direct(const StepInputs& in, bool slice);
// The overlap-add of a windowed-identity ConvTranspose (overlap_add.cpp).
std::unique_ptr<ConvStep> plan_overlap_add(const StepInputs& in);
// im2col + GEMM (conv_gemm.cpp), GEMM + col2im (conv_transpose_gemm.cpp), the implicit GEMM
// (conv_implicit.cpp).
std::unique_ptr<ConvStep> plan_conv_gemm(const StepInputs& in);
std::unique_ptr<ConvStep> plan_conv_transpose_gemm(const StepInputs& in);
std::unique_ptr<ConvStep> plan_implicit(const StepInputs& in);
// The GPU check of a [C, 1, C] weight (overlap_add.cpp): its diagonal and the flag.
WindowedIdentityCheck record_identity_check(const KernelContext& kc, gpu::CommandRecorder& recorder,
                                            gpu::BufferPool& pool, const Tensor& w);
// A group-1 weight over one binding: a plan per part of the output channels (conv_weight_parts.cpp).
std::unique_ptr<ConvStep> plan_weight_parts(const StepInputs& in);

}  // namespace onda::kernels::conv::detail
