#include "kernels/conv/conv_uniforms.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <stdexcept>
#include <utility>

namespace onda::kernels::conv::detail {

uint32_t u32(int64_t v, const char* what) {
  if (v < 0 || v > 0xFFFFFFFFll)
    throw std::invalid_argument(fmt::format("conv: {} = {} out of range", what, v));
  return static_cast<uint32_t>(v);
}

ConvUniforms make_uniforms(const ConvGeometry& g) {
  ConvUniforms u{};
  const int64_t rank = g.spatial_rank();
  for (int d = 0; d < 3; ++d) {
    const int64_t r = d - (3 - rank);  // real dimension, or < 0 for a padding dimension
    u.in_size[d] = r < 0 ? 1 : u32(g.in_size[r], "input size");
    u.out_size[d] = r < 0 ? 1 : u32(g.out_size[r], "output size");
    u.kernel[d] = r < 0 ? 1 : u32(g.kernel[r], "kernel");
    u.stride[d] = r < 0 ? 1 : u32(g.strides[r], "stride");
    u.dilation[d] = r < 0 ? 1 : u32(g.dilations[r], "dilation");
    if (r >= 0 && (g.pads_begin[r] > (1 << 30) || g.pads_begin[r] < -(1 << 30)))
      throw std::invalid_argument("conv: pad out of range");
    u.pad[d] = r < 0 ? 0 : static_cast<int32_t>(g.pads_begin[r]);
    u.tap_step[d] = u.stride[d] / static_cast<uint32_t>(std::gcd(u.stride[d], u.dilation[d]));
  }
  u.in_size[3] = u32(g.in_channels, "C_in");
  u.out_size[3] = u32(g.out_channels, "C_out");
  u.kernel[3] = u32(g.group, "group");
  u.stride[3] = u32(g.batch, "batch");
  u.chunk[0] = 0;
  u.chunk[1] = u32(g.batch, "batch");
  u.chunk[2] = 0;
  u.chunk[3] = u32(g.in_positions(), "input positions");
  u.region[0] = 0;
  u.region[1] = u32(g.out_positions(), "output positions");
  return u;
}

void add_activation(TemplateValues& values, gemm::Activation activation) {
  using gemm::Activation;
  static const std::pair<Activation, const char*> kFlags[] = {{Activation::none, "ACT_NONE"},
                                                              {Activation::relu, "ACT_RELU"},
                                                              {Activation::leaky_relu, "ACT_LEAKY_RELU"},
                                                              {Activation::sigmoid, "ACT_SIGMOID"},
                                                              {Activation::tanh, "ACT_TANH"},
                                                              {Activation::gelu_erf, "ACT_GELU_ERF"}};
  for (const auto& [act, name] : kFlags)
    values.insert_or_assign(name, std::string(act == activation ? "1" : "0"));
}

void dispatch(const KernelContext& kc, gpu::CommandRecorder& recorder, const wgpu::ComputePipeline& pipeline,
              std::span<const gpu::BufferBinding> bindings, ConvUniforms& u, int64_t invocations,
              const char* name) {
  if (invocations <= 0) return;
  u.dilation[3] = u32(invocations, "invocations");
  const uint64_t groups = (static_cast<uint64_t>(invocations) + kWorkgroupSize - 1) / kWorkgroupSize;
  recorder.dispatch(pipeline, bindings, &u, sizeof(u), gpu::split_workgroups(groups, kc.gpu.limits()), name);
}

ChunkLimits chunk_limits(const KernelContext& kc, const ConvOptions& options) {
  // By default at most 256 MiB of columns at a time even where bindings may be larger: beyond
  // that the GEMM is already saturated and the scratch memory would only grow.
  constexpr uint64_t kDefaultCap = uint64_t{256} << 20;
  const uint64_t device = kc.gpu.limits().maxStorageBufferBindingSize;
  ChunkLimits limits;
  limits.binding = options.max_binding_bytes == 0 ? device : std::min(options.max_binding_bytes, device);
  limits.slack = kc.gpu.limits().minStorageBufferOffsetAlignment + 16;
  // The GEMM keeps its operands `slack` below the binding limit (they may be views).
  const uint64_t columns = limits.binding - std::min(limits.binding, limits.slack);
  limits.columns = options.max_chunk_bytes == 0 ? std::min(columns, kDefaultCap)
                                                : std::min(options.max_chunk_bytes, columns);
  return limits;
}

int64_t ChunkLimits::window_elements(DType dtype) const {
  if (binding <= slack) return 0;
  // Two elements spare: a float16 window is widened to even bounds.
  const int64_t elements = static_cast<int64_t>((binding - slack) / device_element_size(dtype)) - 2;
  return std::max<int64_t>(elements, 0);
}

Window window(const KernelContext& kc, const Tensor& t, int64_t begin, int64_t end,
              const ChunkLimits& limits) {
  const int64_t n = t.numel();
  begin = std::clamp<int64_t>(begin, 0, n);
  end = std::clamp<int64_t>(end, begin, n);
  if (t.dtype() == DType::f16) {
    begin &= ~int64_t{1};
    end = std::min(n, (end + 1) & ~int64_t{1});
  }
  Window w{t.reshape({n}).slice_outer(begin, end), begin};
  const uint64_t bytes = w.view.binding(kc.gpu).size;
  if (bytes > limits.binding) {
    throw std::logic_error(fmt::format("conv: a window of {} elements binds {} bytes, over the limit of {}",
                                       end - begin, bytes, limits.binding));
  }
  return w;
}

Tensor placeholder(gpu::BufferPool& pool) {
  return Tensor::empty(pool, DType::f32, {1});
}

}  // namespace onda::kernels::conv::detail
