#include "ops/kernel_plans.h"

namespace onda::ops {
namespace {

// Calls record(plan) with the node's kept plan for `problem` from `list` (built on first use), or
// with a plan for this call alone when the op runs outside a plan.
template <class Plan, class Problem, class Record>
void with_plan(OpContext& context, KeptPlans<Plan> KernelPlans::*list, const Problem& problem,
               Record&& record) {
  KernelPlans* kept = node_kernel_plans(context);
  if (!kept) {
    record(Plan(context.kernels, problem));
    return;
  }
  record((kept->*list).find_or_plan(problem, [&] { return Plan(context.kernels, problem); }));
}

}  // namespace

KernelPlans* node_kernel_plans(OpContext& context) {
  if (!context.node_state) return nullptr;
  auto& state = *context.node_state;
  if (!state) state = std::make_shared<KernelPlans>();
  return static_cast<KernelPlans*>(state.get());
}

void record_elementwise(OpContext& context, kernels::ElementwiseOp op, std::span<const Tensor> inputs,
                        const Tensor& output, const kernels::ElementwiseAttributes& attributes) {
  with_plan(context, &KernelPlans::elementwise, kernels::ElementwiseProblem::of(op, inputs, attributes),
            [&](const kernels::Elementwise& plan) { plan.record(context.recorder, inputs, output); });
}

void record_layout(OpContext& context, const kernels::LayoutProblem& problem, std::span<const Tensor> inputs,
                   std::span<const Tensor> outputs) {
  with_plan(context, &KernelPlans::layout, problem,
            [&](const kernels::LayoutPlan& plan) { plan.record(context.recorder, inputs, outputs); });
}

void record_gather(OpContext& context, const Tensor& data, const Tensor& indices, int64_t axis,
                   const Tensor& output, std::optional<std::span<const int64_t>> host_indices) {
  const kernels::GatherProblem problem{data.shape(), data.dtype(), indices.shape(), indices.dtype(), axis};
  with_plan(context, &KernelPlans::gather, problem, [&](const kernels::Gather& plan) {
    plan.record(context.recorder, data, indices, output, host_indices);
  });
}

void record_softmax(OpContext& context, const Tensor& x, int64_t axis, bool log_softmax, const Tensor& y) {
  const kernels::SoftmaxProblem problem{x.shape(), x.dtype(), axis, log_softmax};
  with_plan(context, &KernelPlans::softmax, problem,
            [&](const kernels::Softmax& plan) { plan.record(context.recorder, x, y); });
}

void record_normalize(OpContext& context, const Tensor& x, const Tensor& scale, const Tensor& bias,
                      const Tensor& y, const kernels::NormalizeSpec& spec,
                      const kernels::FusedEpilogue& epilogue, const Tensor& slope) {
  const kernels::NormalizeProblem problem{x.shape(),
                                          x.dtype(),
                                          spec,
                                          kernels::NormalizeAffine::of(scale),
                                          kernels::NormalizeAffine::of(bias),
                                          epilogue,
                                          kernels::NormalizeAffine::of(slope)};
  with_plan(context, &KernelPlans::normalize, problem, [&](const kernels::Normalize& plan) {
    plan.record(context.recorder, context.pool, x, scale, bias, y, slope);
  });
}

void record_reduce(OpContext& context, kernels::ReduceOp op, const Tensor& x,
                   const std::vector<int64_t>& axes, const Tensor& y) {
  const kernels::ReduceProblem problem{op, x.shape(), x.dtype(), axes};
  with_plan(context, &KernelPlans::reduce, problem,
            [&](const kernels::Reduce& plan) { plan.record(context.recorder, context.pool, x, y); });
}

}  // namespace onda::ops
