#include "kernels/layout/concat_blocks.h"

#include <stdexcept>

#include "gpu/command_recorder.h"
#include "kernels/shader_template.h"

namespace onda::kernels {
namespace {

constexpr uint64_t kPerWorkgroup = 256 * 4;  // concat_blocks.wgsl: 256 invocations x PER_THREAD

// Mirrors Params in concat_blocks.wgsl.
struct ConcatUniforms {
  uint32_t total, out_offset, pad0, pad1;
  uint32_t ends[8];
  uint32_t in_offsets[8];
};

}  // namespace

std::optional<ConcatBlocks> ConcatBlocks::plan(const KernelContext& kc, std::span<const Shape> inputs, DType dtype,
                                               int64_t axis) {
  if (inputs.size() < 2 || inputs.size() > kMaxConcatBlocks || device_element_size(dtype) != 4) return std::nullopt;
  std::vector<uint64_t> ends;
  uint64_t end = 0;
  for (const Shape& shape : inputs) {
    if (axis < 0 || axis >= static_cast<int64_t>(shape.size())) return std::nullopt;
    for (int64_t d = 0; d < axis; ++d)
      if (shape[d] != 1) return std::nullopt;
    if (element_count(shape) == 0) return std::nullopt;  // no binding of an empty block
    end += static_cast<uint64_t>(element_count(shape));
    if (end > 0xFFFFFFFFull) return std::nullopt;
    ends.push_back(end);
  }
  const std::string count = std::to_string(inputs.size());
  const auto& pipeline = shader_pipeline(kc.pipelines, "layout/concat_blocks.wgsl",
                                         {{"INPUTS", count}, {"PARAMS_BINDING", std::to_string(inputs.size() + 1)}},
                                         "layout Concat blocks");
  return ConcatBlocks(kc, std::move(ends), pipeline);
}

ConcatBlocks::ConcatBlocks(const KernelContext& kc, std::vector<uint64_t> ends, const wgpu::ComputePipeline& pipeline)
    : kc_(kc), ends_(std::move(ends)), pipeline_(&pipeline) {}

void ConcatBlocks::record(gpu::CommandRecorder& recorder, std::span<const Tensor> inputs, const Tensor& output) const {
  if (inputs.size() != ends_.size() || static_cast<uint64_t>(output.numel()) != ends_.back())
    throw std::invalid_argument("Concat: the tensors differ from the planned blocks");
  ConcatUniforms u{};
  u.total = static_cast<uint32_t>(ends_.back());
  u.out_offset = output.element_offset(kc_.gpu);
  std::vector<gpu::BufferBinding> bindings;
  for (size_t k = 0; k < inputs.size(); ++k) {
    u.ends[k] = static_cast<uint32_t>(ends_[k]);
    u.in_offsets[k] = inputs[k].element_offset(kc_.gpu);
    bindings.push_back(inputs[k].binding(kc_.gpu));
  }
  bindings.push_back(output.binding(kc_.gpu));
  recorder.dispatch(*pipeline_, bindings, &u, sizeof(u),
                    gpu::split_workgroups((u.total + kPerWorkgroup - 1) / kPerWorkgroup, kc_.gpu.limits()),
                    "layout Concat blocks");
}

}  // namespace onda::kernels
