// The kernel plans an op keeps for its node across runs (in its node_state), so a second run records
// with the plans of the first instead of planning again. An op may call a kernel several times per
// run on different problems (a chain of elementwise ops, the slices of a tensor larger than one
// binding): each distinct problem keeps its own plan, found again by comparing problems.
//
// Only for ops that keep nothing else in node_state (matmul, conv, rnn, spectral and layer
// normalization keep their own state there): node_state is per node, so another op of the same file
// may use these.
#pragma once
#include <cstddef>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "kernels/elementwise/elementwise_kernel.h"
#include "kernels/layout/gather.h"
#include "kernels/layout/layout_plan.h"
#include "kernels/norm/normalize_kernel.h"
#include "kernels/reduce/reduce_kernel.h"
#include "kernels/softmax/softmax_kernel.h"
#include "ops/op_context.h"

namespace onda::ops {

template <class Plan>
class KeptPlans {
 public:
  // The plan whose problem() equals `problem`, made by make() (returning a Plan) when there is none.
  template <class Problem, class Make>
  const Plan& find_or_plan(const Problem& problem, Make&& make) {
    for (const auto& plan : plans_) {
      if (plan->problem() == problem) return *plan;
    }
    // A node whose shapes change from run to run would otherwise keep every plan it ever met.
    if (plans_.size() >= kMaxPlans) plans_.clear();
    plans_.push_back(std::make_unique<Plan>(make()));
    ++plans_built_;
    return *plans_.back();
  }

  size_t size() const { return plans_.size(); }
  size_t plans_built() const { return plans_built_; }

 private:
  static constexpr size_t kMaxPlans = 16;
  std::vector<std::unique_ptr<Plan>> plans_;
  size_t plans_built_ = 0;
};

// What a node keeps: one list per kernel family it calls.
struct KernelPlans {
  KeptPlans<kernels::Elementwise> elementwise;
  KeptPlans<kernels::Reduce> reduce;
  KeptPlans<kernels::LayoutPlan> layout;
  KeptPlans<kernels::Gather> gather;
  KeptPlans<kernels::Softmax> softmax;
  KeptPlans<kernels::Normalize> normalize;
};

// The node's KernelPlans (created on first use), or nullptr when the op runs outside a plan (no
// node_state): then the helpers below plan for one call.
KernelPlans* node_kernel_plans(OpContext& context);

// Records `op` on `inputs` into `output` with the node's kept plan for this problem.
void record_elementwise(OpContext& context, kernels::ElementwiseOp op, std::span<const Tensor> inputs,
                        const Tensor& output, const kernels::ElementwiseAttributes& attributes = {});

// Records a layout op (Transpose, Slice, Concat, Split, Expand, Tile, Pad) with the node's kept plan.
void record_layout(OpContext& context, const kernels::LayoutProblem& problem, std::span<const Tensor> inputs,
                   std::span<const Tensor> outputs);

// Records a Gather with the node's kept plan (host_indices as for kernels::record_gather).
void record_gather(OpContext& context, const Tensor& data, const Tensor& indices, int64_t axis,
                   const Tensor& output, std::optional<std::span<const int64_t>> host_indices = {});

// Records Softmax / LogSoftmax of `x` along `axis` into `y` with the node's kept plan.
void record_softmax(OpContext& context, const Tensor& x, int64_t axis, bool log_softmax, const Tensor& y);

// Records a normalisation (kernels::record_normalize) with the node's kept plan; `slope` (or none):
// a PRelu fused after it (kernels::NormalizeProblem::slope).
void record_normalize(OpContext& context, const Tensor& x, const Tensor& scale, const Tensor& bias,
                      const Tensor& y, const kernels::NormalizeSpec& spec,
                      const kernels::FusedEpilogue& epilogue = {}, const Tensor& slope = Tensor());

// Records the reduction of `x` over `axes` into `y` with the node's kept plan for this problem.
void record_reduce(OpContext& context, kernels::ReduceOp op, const Tensor& x,
                   const std::vector<int64_t>& axes, const Tensor& y);

}  // namespace onda::ops
