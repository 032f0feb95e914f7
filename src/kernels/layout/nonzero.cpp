#include "kernels/layout/nonzero.h"

#include <fmt/format.h>

#include <stdexcept>

#include "kernels/layout/layout_common.h"
#include "kernels/shader_template.h"

namespace onda::kernels {
namespace {

constexpr int64_t kBlock = 256;  // elements per workgroup (nonzero_blocks.wgsl's workgroup size)
constexpr size_t kMaxRank = 8;

// Mirrors `Params` in nonzero_common.wgsl.
struct NonzeroUniforms {
  uint32_t numel, blocks, x_offset, offsets_offset;
  uint32_t count_offset, indices_offset, rank, count;
  uint32_t shape[kMaxRank];
};

NonzeroUniforms uniforms_for(const KernelContext& kc, const Tensor& x, const NonzeroCount& counted) {
  NonzeroUniforms u{};
  u.numel = static_cast<uint32_t>(x.numel());
  u.blocks = static_cast<uint32_t>(counted.blocks);
  u.x_offset = x.element_offset(kc.gpu);
  u.offsets_offset = counted.block_offsets.element_offset(kc.gpu);
  u.count_offset = counted.count.element_offset(kc.gpu);
  u.rank = static_cast<uint32_t>(std::max<int64_t>(x.rank(), 1));
  for (int64_t d = 0; d < x.rank(); ++d) u.shape[d] = static_cast<uint32_t>(x.shape()[d]);
  if (x.rank() == 0) u.shape[0] = 1;
  return u;
}

TemplateValues block_values(const Tensor& x, bool count) {
  const char* magnitude = x.dtype() == DType::f32   ? "0x7fffffffu"
                          : x.dtype() == DType::f16 ? "0x7fffu"
                                                    : "0xffffffffu";
  return {
      {"COUNT", count ? "1" : "0"}, {"HALF", x.dtype() == DType::f16 ? "1" : "0"}, {"MAGNITUDE", magnitude}};
}

}  // namespace

NonzeroCount record_nonzero_count(const KernelContext& kc, gpu::CommandRecorder& recorder,
                                  gpu::BufferPool& pool, const Tensor& x) {
  if (x.rank() > static_cast<int64_t>(kMaxRank))
    throw std::invalid_argument(fmt::format("NonZero: rank {} is above {}", x.rank(), kMaxRank));
  if (x.numel() >= INT32_MAX) throw std::invalid_argument("NonZero: 2^31 elements or more");
  NonzeroCount counted;
  counted.blocks = (x.numel() + kBlock - 1) / kBlock;
  counted.block_offsets = Tensor::empty(pool, DType::i32, {std::max<int64_t>(counted.blocks, 1)});
  counted.count = Tensor::empty(pool, DType::i64, {1});
  require_bindable(kc, x, "NonZero");
  require_bindable(kc, counted.block_offsets, "NonZero block offsets");
  NonzeroUniforms u = uniforms_for(kc, x, counted);
  if (counted.blocks > 0) {
    const auto& count_pipeline = shader_pipeline(kc.pipelines, "layout/nonzero_blocks.wgsl",
                                                 block_values(x, true), "layout NonZero count");
    recorder.dispatch(
        count_pipeline, {x.binding(kc.gpu), counted.block_offsets.binding(kc.gpu)}, &u, sizeof(u),
        gpu::split_workgroups(static_cast<uint64_t>(counted.blocks), kc.gpu.limits()), "NonZero count");
  }
  // With no blocks the scan writes a total of 0.
  const auto& scan_pipeline =
      shader_pipeline(kc.pipelines, "layout/nonzero_scan.wgsl", {}, "layout NonZero scan");
  recorder.dispatch(scan_pipeline, {counted.block_offsets.binding(kc.gpu), counted.count.binding(kc.gpu)}, &u,
                    sizeof(u), {1, 1, 1}, "NonZero scan");
  return counted;
}

void record_nonzero_indices(const KernelContext& kc, gpu::CommandRecorder& recorder, const Tensor& x,
                            const NonzeroCount& counted, const Tensor& indices) {
  const int64_t rank = std::max<int64_t>(x.rank(), 1);
  if (indices.rank() != 2 || indices.shape()[0] != rank || indices.dtype() != DType::i64)
    throw std::invalid_argument(fmt::format("NonZero: indices must be int64 [{}, count], got {} {}", rank,
                                            dtype_name(indices.dtype()), shape_string(indices.shape())));
  const int64_t count = indices.shape()[1];
  if (count > x.numel())
    throw std::invalid_argument(fmt::format("NonZero: {} indices for {} elements", count, x.numel()));
  if (count == 0) return;
  require_bindable(kc, indices, "NonZero indices");
  NonzeroUniforms u = uniforms_for(kc, x, counted);
  u.indices_offset = indices.element_offset(kc.gpu);
  u.count = static_cast<uint32_t>(count);
  const auto& pipeline = shader_pipeline(kc.pipelines, "layout/nonzero_blocks.wgsl", block_values(x, false),
                                         "layout NonZero scatter");
  recorder.dispatch(pipeline,
                    {x.binding(kc.gpu), counted.block_offsets.binding(kc.gpu), indices.binding(kc.gpu)}, &u,
                    sizeof(u), gpu::split_workgroups(static_cast<uint64_t>(counted.blocks), kc.gpu.limits()),
                    "NonZero scatter");
}

}  // namespace onda::kernels
