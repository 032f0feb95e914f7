#include "ops/kernel_plans.h"

namespace onda::ops {

KernelPlans* node_kernel_plans(OpContext& context) {
  if (!context.node_state) return nullptr;
  auto& state = *context.node_state;
  if (!state) state = std::make_shared<KernelPlans>();
  return static_cast<KernelPlans*>(state.get());
}

void record_elementwise(OpContext& context, kernels::ElementwiseOp op, std::span<const Tensor> inputs,
                        const Tensor& output, const kernels::ElementwiseAttributes& attributes) {
  const kernels::ElementwiseProblem problem = kernels::ElementwiseProblem::of(op, inputs, attributes);
  KernelPlans* kept = node_kernel_plans(context);
  if (!kept) {
    kernels::Elementwise(context.kernels, problem).record(context.recorder, inputs, output);
    return;
  }
  const auto& plan =
      kept->elementwise.find_or_plan(problem, [&] { return kernels::Elementwise(context.kernels, problem); });
  plan.record(context.recorder, inputs, output);
}

void record_reduce(OpContext& context, kernels::ReduceOp op, const Tensor& x,
                   const std::vector<int64_t>& axes, const Tensor& y) {
  const kernels::ReduceProblem problem{op, x.shape(), x.dtype(), axes};
  KernelPlans* kept = node_kernel_plans(context);
  if (!kept) {
    kernels::Reduce(context.kernels, problem).record(context.recorder, context.pool, x, y);
    return;
  }
  const auto& plan =
      kept->reduce.find_or_plan(problem, [&] { return kernels::Reduce(context.kernels, problem); });
  plan.record(context.recorder, context.pool, x, y);
}

void record_layout(OpContext& context, const kernels::LayoutProblem& problem, std::span<const Tensor> inputs,
                   std::span<const Tensor> outputs) {
  KernelPlans* kept = node_kernel_plans(context);
  if (!kept) {
    kernels::LayoutPlan(context.kernels, problem).record(context.recorder, inputs, outputs);
    return;
  }
  const auto& plan =
      kept->layout.find_or_plan(problem, [&] { return kernels::LayoutPlan(context.kernels, problem); });
  plan.record(context.recorder, inputs, outputs);
}

void record_gather(OpContext& context, const Tensor& data, const Tensor& indices, int64_t axis,
                   const Tensor& output, std::optional<std::span<const int64_t>> host_indices) {
  const kernels::GatherProblem problem{data.shape(), data.dtype(), indices.shape(), indices.dtype(), axis};
  KernelPlans* kept = node_kernel_plans(context);
  if (!kept) {
    kernels::Gather(context.kernels, problem).record(context.recorder, data, indices, output, host_indices);
    return;
  }
  const auto& plan =
      kept->gather.find_or_plan(problem, [&] { return kernels::Gather(context.kernels, problem); });
  plan.record(context.recorder, data, indices, output, host_indices);
}

void record_softmax(OpContext& context, const Tensor& x, int64_t axis, bool log_softmax, const Tensor& y) {
  const kernels::SoftmaxProblem problem{x.shape(), x.dtype(), axis, log_softmax};
  KernelPlans* kept = node_kernel_plans(context);
  if (!kept) {
    kernels::Softmax(context.kernels, problem).record(context.recorder, x, y);
    return;
  }
  const auto& plan =
      kept->softmax.find_or_plan(problem, [&] { return kernels::Softmax(context.kernels, problem); });
  plan.record(context.recorder, x, y);
}

}  // namespace onda::ops
