#include "kernels/reduce/reduce_kernel.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "gpu/gpu_error.h"
#include "kernels/common/binding_window.h"
#include "kernels/common/tensor_access.h"
#include "kernels/shader_template.h"

namespace onda::kernels {
namespace {

constexpr int64_t kThreads = 256;
constexpr int64_t kChunk = kThreads * 32;

struct ReduceUniforms {
  uint32_t outer, reduce, inner, chunk_size, chunks, x_offset, y_offset;
  float final_count;
};

struct OpExpressions {
  const char* pre;
  const char* combine;
  const char* final;
  const char* identity;
};

OpExpressions expressions(ReduceOp op) {
  switch (op) {
    case ReduceOp::Sum:
      return {"x", "a + b", "acc", "0.0"};
    case ReduceOp::Mean:
      return {"x", "a + b", "acc / n", "0.0"};
    case ReduceOp::Max:
      return {"x", "max(a, b)", "acc", "-0x1.fffffep+127"};
    case ReduceOp::Min:
      return {"x", "min(a, b)", "acc", "0x1.fffffep+127"};
    case ReduceOp::Prod:
      return {"x", "a * b", "acc", "1.0"};
    case ReduceOp::L1:
      return {"abs(x)", "a + b", "acc", "0.0"};
    case ReduceOp::L2:
      return {"x * x", "a + b", "sqrt(acc)", "0.0"};
    case ReduceOp::SumSquare:
      return {"x * x", "a + b", "acc", "0.0"};
    case ReduceOp::LogSumExp:
      break;
  }
  throw std::invalid_argument("ReduceLogSumExp is not supported by the GPU reduce kernel");
}

struct Pass {
  int64_t outer, reduce, inner;
};

}  // namespace

Shape reduced_shape(const Shape& shape, const std::vector<int64_t>& axes, bool keepdims) {
  Shape out;
  for (int64_t d = 0; d < static_cast<int64_t>(shape.size()); ++d) {
    const bool reduced = std::find(axes.begin(), axes.end(), d) != axes.end();
    if (!reduced) {
      out.push_back(shape[d]);
    } else if (keepdims) {
      out.push_back(1);
    }
  }
  return out;
}

namespace {

// An input larger than one storage binding: the dims before the first reduced axis are kept, so the
// input and output split into independent slices of them (views). A reduction over the leading dim
// itself would need partial results combined across slices: refused.
void record_in_leading_slices(const KernelContext& kc, gpu::CommandRecorder& recorder, gpu::BufferPool& pool,
                              ReduceOp op, const Tensor& x, const std::vector<int64_t>& axes,
                              const Tensor& y) {
  const Shape& shape = x.shape();
  const int64_t first = axes.empty() ? static_cast<int64_t>(shape.size()) : axes.front();
  int64_t leading = 1;
  for (int64_t d = 0; d < first; ++d) leading *= shape[d];
  const int64_t row = x.numel() / std::max<int64_t>(leading, 1),
                out_row = y.numel() / std::max<int64_t>(leading, 1);
  int64_t per_slice = window_capacity(kc.gpu, x.dtype()) / std::max<int64_t>(row, 1);
  if (x.dtype() == DType::f16 && (row % 2 != 0 || out_row % 2 != 0)) per_slice &= ~int64_t{1};
  if (leading == 1 || per_slice < 1) {
    throw gpu::DeviceLimitError(
        fmt::format("reduce: {} of {} bytes exceeds the storage binding limit of {} bytes, and no "
                    "leading kept dims split it into slices that fit",
                    shape_string(shape), x.device_bytes(), kc.gpu.limits().maxStorageBufferBindingSize));
  }
  Shape slice_shape(shape.begin() + first, shape.end());
  slice_shape.insert(slice_shape.begin(), leading);
  std::vector<int64_t> slice_axes;
  for (int64_t a : axes) slice_axes.push_back(a - first + 1);
  const Tensor xs = x.reshape(slice_shape), ys = y.reshape({leading, out_row});
  for (int64_t r0 = 0; r0 < leading; r0 += per_slice) {
    const int64_t r1 = std::min(leading, r0 + per_slice);
    record_reduce(kc, recorder, pool, op, xs.slice_outer(r0, r1), slice_axes, ys.slice_outer(r0, r1));
  }
}

}  // namespace

void record_reduce(const KernelContext& kc, gpu::CommandRecorder& recorder, gpu::BufferPool& pool,
                   ReduceOp op, const Tensor& x, const std::vector<int64_t>& axes, const Tensor& y) {
  const OpExpressions e = expressions(op);
  const Shape& shape = x.shape();
  for (size_t i = 0; i < axes.size(); ++i) {
    if (axes[i] < 0 || axes[i] >= static_cast<int64_t>(shape.size()) || (i > 0 && axes[i] <= axes[i - 1])) {
      throw std::invalid_argument("reduce: axes must be sorted, unique and within the rank");
    }
  }
  if (y.numel() != element_count(reduced_shape(shape, axes, false)) || y.dtype() != x.dtype()) {
    throw std::invalid_argument(fmt::format("reduce: output {} does not match {} reduced over the axes",
                                            shape_string(y.shape()), shape_string(shape)));
  }
  if (y.numel() == 0) return;
  if (!fits_one_binding(kc.gpu, x)) {
    record_in_leading_slices(kc, recorder, pool, op, x, axes, y);
    return;
  }
  double total_reduced = 1;
  for (int64_t a : axes) total_reduced *= static_cast<double>(shape[a]);

  // Runs of neighbouring reduced axes, innermost run first; each pass shrinks the tensor.
  std::vector<Pass> passes;
  Shape current = shape;
  std::vector<bool> reduced(shape.size(), false);
  for (int64_t a : axes) reduced[a] = true;
  for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0;) {
    if (!reduced[d]) {
      --d;
      continue;
    }
    int64_t begin = d;
    while (begin > 0 && reduced[begin - 1]) --begin;
    Pass p{1, 1, 1};
    for (int64_t i = 0; i < begin; ++i) p.outer *= current[i];
    for (int64_t i = begin; i <= d; ++i) p.reduce *= current[i];
    for (int64_t i = d + 1; i < static_cast<int64_t>(current.size()); ++i) p.inner *= current[i];
    passes.push_back(p);
    current.erase(current.begin() + begin, current.begin() + d + 1);
    current.insert(current.begin() + begin, 1);
    d = begin - 1;
  }
  if (passes.empty()) passes.push_back({x.numel(), 1, 1});
  if (x.numel() == 0) throw std::invalid_argument("reduce: empty input with a non-empty output");

  Tensor source = x;
  for (size_t p = 0; p < passes.size(); ++p) {
    const bool last_axis_pass = p + 1 == passes.size();
    Pass pass = passes[p];
    // A contiguous row longer than one chunk: split it, then combine the partials in one more step.
    const bool inner_one = pass.inner == 1;
    const int64_t chunks = inner_one ? (pass.reduce + kChunk - 1) / kChunk : 1;
    const int steps = chunks > 1 ? 2 : 1;
    for (int step = 0; step < steps; ++step) {
      const bool is_final = last_axis_pass && step == steps - 1;
      const bool partial_input = p > 0 || step > 0;
      ReduceUniforms u{};
      if (step == 0) {
        u = {static_cast<uint32_t>(pass.outer),
             static_cast<uint32_t>(pass.reduce),
             static_cast<uint32_t>(pass.inner),
             static_cast<uint32_t>(kChunk),
             static_cast<uint32_t>(chunks),
             0,
             0,
             0};
      } else {  // combine [outer, chunks] partials
        u = {static_cast<uint32_t>(pass.outer),
             static_cast<uint32_t>(chunks),
             1,
             static_cast<uint32_t>(kChunk),
             1,
             0,
             0,
             0};
      }
      u.final_count = static_cast<float>(total_reduced);
      const int64_t outputs = step == 0 && chunks > 1 ? pass.outer * chunks : pass.outer * pass.inner;
      Tensor target = is_final ? y : Tensor::empty(pool, DType::f32, {outputs});
      u.x_offset = source.element_offset(kc.gpu);
      u.y_offset = target.element_offset(kc.gpu);
      const bool row_mode = step == 1 || inner_one;
      TemplateValues v = {
          {"X_ACCESS", tensor_access("x", 0, source.dtype(), false)},
          {"Y_ACCESS", tensor_access("y", 1, target.dtype(), true)},
          {"PRE", e.pre},
          {"COMBINE", e.combine},
          {"FINAL", e.final},
          {"IDENTITY", e.identity},
          {"PARTIAL_INPUT", partial_input ? "1" : "0"},
          {"APPLY_FINAL", is_final ? "1" : "0"},
          {"INNER_ONE", row_mode ? "1" : "0"},
      };
      const auto& pipeline = shader_pipeline(kc.pipelines, "reduce/reduce.wgsl", v, "reduce");
      const int64_t groups =
          row_mode ? static_cast<int64_t>(u.outer) * u.chunks : (outputs + kThreads - 1) / kThreads;
      recorder.dispatch(pipeline, {source.binding(kc.gpu), target.binding(kc.gpu)}, &u, sizeof(u),
                        gpu::split_workgroups(groups, kc.gpu.limits()), "reduce");
      source = target;
    }
  }
}

}  // namespace onda::kernels
