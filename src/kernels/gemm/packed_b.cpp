#include "kernels/gemm/packed_b.h"

#include <fmt/format.h>

#include <stdexcept>

#include "gpu/gpu_error.h"
#include "kernels/shader_template.h"

namespace onda::kernels::gemm {

namespace {
struct PackParams {
  uint32_t k, n, k_pad, src_offset, words;
  uint32_t pad[3];
};
}  // namespace

PackedB prepack_b(gpu::Context& context, gpu::BufferPool& pool, gpu::PipelineCache& pipelines,
                  gpu::CommandRecorder& recorder, const Tensor& b, bool transpose_b) {
  if (!b.defined() || b.rank() != 2) {
    throw std::invalid_argument("prepack_b: B must be a 2-D tensor, got " + shape_string(b.shape()));
  }
  if (!is_float(b.dtype())) {
    throw std::invalid_argument(
        fmt::format("prepack_b: B must be float32 or float16, got {}", dtype_name(b.dtype())));
  }
  PackedB packed;
  packed.k = transpose_b ? b.shape()[1] : b.shape()[0];
  packed.n = transpose_b ? b.shape()[0] : b.shape()[1];
  packed.data = Tensor::empty(pool, b.dtype(), {packed.n, packed.k_pad()});
  const int64_t per_word = b.dtype() == DType::f16 ? 2 : 1;
  const int64_t words = packed.n * packed.k_pad() / per_word;  // k_pad is a multiple of 4
  if (words == 0) return packed;
  if (b.numel() + b.element_offset(context) > UINT32_MAX || words * per_word > UINT32_MAX) {
    throw gpu::DeviceLimitError("prepack_b: B " + shape_string(b.shape()) + " exceeds 32-bit shader indices");
  }

  const auto& pipeline = shader_pipeline(
      pipelines, "gemm/pack_b.wgsl",
      {{"F16", b.dtype() == DType::f16 ? "1" : "0"}, {"B_TRANS", transpose_b ? "1" : "0"}}, "gemm pack B");
  PackParams params{};
  params.k = static_cast<uint32_t>(packed.k);
  params.n = static_cast<uint32_t>(packed.n);
  params.k_pad = static_cast<uint32_t>(packed.k_pad());
  params.src_offset = b.element_offset(context);
  params.words = static_cast<uint32_t>(words);
  recorder.dispatch(pipeline, {b.binding(context), packed.data.binding(context)}, &params, sizeof(params),
                    gpu::split_workgroups((words + 255) / 256, context.limits()), "gemm pack B");
  return packed;
}

}  // namespace onda::kernels::gemm
