// Internal to the conv family: the uniform block of conv_common.wgsl and the helpers every conv
// kernel file uses to fill it and dispatch.
#pragma once
#include <cstdint>
#include <span>
#include <string>

#include "gpu/buffer_pool.h"
#include "kernels/conv/conv.h"
#include "kernels/conv/conv_geometry.h"
#include "kernels/gemm/packed_b.h"
#include "kernels/kernel_context.h"
#include "kernels/shader_template.h"
#include "tensor/tensor.h"

namespace onda::kernels::conv::detail {

// Mirrors ConvParams in conv_common.wgsl.
struct ConvUniforms {
  uint32_t in_size[4];
  uint32_t out_size[4];
  uint32_t kernel[4];
  uint32_t stride[4];
  uint32_t dilation[4];  // [3]: invocations of the dispatch
  int32_t pad[4];
  uint32_t offsets[4];   // x, w, bias, y
  uint32_t chunk[4];     // first batch, batches, flat positions [begin, end)
  uint32_t region[4];    // flat output positions [begin, end), column width
  uint32_t tap_step[4];  // s / gcd(s, d) per dimension
  float activation_alpha;
  uint32_t x_base;     // first flat element of X (im2col) the X binding window starts at
  uint32_t first_row;  // im2col: first column row written; scatter: first output channel
  uint32_t y_base;     // scatter: first flat element of Y the Y binding window starts at
};

constexpr uint32_t kWorkgroupSize = 256;

uint32_t u32(int64_t v, const char* what);

// The geometry padded to 3 spatial dims (leading size-1 dims); chunk = all batches, region = all
// output positions, offsets zero.
ConvUniforms make_uniforms(const ConvGeometry& g);

// The ACT_* template values of gemm/activation.wgsl for `activation`.
void add_activation(TemplateValues& values, gemm::Activation activation);

// Records one dispatch of `invocations` invocations (sets dilation[3]).
void dispatch(const KernelContext& kc, gpu::CommandRecorder& recorder, const wgpu::ComputePipeline& pipeline,
              std::span<const gpu::BufferBinding> bindings, ConvUniforms& u, int64_t invocations,
              const char* name);

// Byte limits of one run: `columns` for a column-buffer chunk (options.max_chunk_bytes, else the
// device binding limit capped at 256 MiB), `binding` for any binding of X / Y (a view of them:
// options.max_binding_bytes, else maxStorageBufferBindingSize), `slack` the bytes a view's binding
// may add (it starts up to one offset alignment early and ends on a 16-byte boundary).
struct ChunkLimits {
  uint64_t columns = 0, binding = 0, slack = 0;
  // Elements of `dtype` a view may span so that its binding fits `binding` (even, for float16 words).
  int64_t window_elements(DType dtype) const;
};
ChunkLimits chunk_limits(const KernelContext& kc, const ConvOptions& options);

// A view of the flat elements [begin, end) of `t` (widened to even bounds for float16) that a
// kernel binds in place of `t`, subtracting `base` from its flat indices. Throws std::logic_error
// if its binding exceeds limits.binding (a planning error, never silently an oversized binding).
struct Window {
  Tensor view;
  int64_t base = 0;
};
Window window(const KernelContext& kc, const Tensor& t, int64_t begin, int64_t end,
              const ChunkLimits& limits);

// A 4-byte scratch tensor bound in place of an empty one (WebGPU bindings cannot be empty).
Tensor placeholder(gpu::BufferPool& pool);

// Whether the direct path can run `g` in slices within the binding limit (conv_direct.cpp).
bool direct_fits(const ConvGeometry& g, DType x_dtype, DType y_dtype, const ChunkLimits& limits);
// One group of one batch (g.batch == 1, g.group == 1) larger than a binding: windows of output rows
// and the input rows they read (conv_direct_windows.cpp); DeviceLimitError where one row of one
// channel, or the group's weight, does not fit.
void record_direct_windows(const KernelContext& kc, gpu::CommandRecorder& recorder, gpu::BufferPool& pool,
                           const ConvGeometry& g, const Tensor& x, const Tensor& w, const Tensor& bias,
                           const Tensor& y, const ConvOptions& options, const ChunkLimits& limits);

// A windowed-identity weight [C, 1, C] larger than one storage binding (overlap_add_windows.cpp): its
// check (into `diagonal`, `flag`) and the checked overlap-add, each over windows of W.
void record_identity_check_windows(const KernelContext& kc, gpu::CommandRecorder& recorder, const Tensor& w,
                                   const Tensor& diagonal, const Tensor& flag);
void record_overlap_add_windows(const KernelContext& kc, gpu::CommandRecorder& recorder, gpu::BufferPool& pool,
                                const ConvGeometry& g, const Tensor& w, const Tensor& diagonal, const Tensor& flag,
                                const Tensor& x, const Tensor& bias, const Tensor& y, const ConvOptions& options);

// The GEMM paths (conv_gemm.cpp, conv_transpose_gemm.cpp): whether one column chunk fits the limits.
bool conv_gemm_fits(const ConvGeometry& g, DType x_dtype, DType y_dtype, const ChunkLimits& limits);
bool conv_transpose_gemm_fits(const ConvGeometry& g, DType x_dtype, DType y_dtype, const ChunkLimits& limits);
// The implicit-GEMM Conv and ConvTranspose (conv_implicit.cpp; ConvTranspose: dilation 1, per stride
// phase): its tile (BM = 8 wg_y output channels, BN = 64 nv positions, bk input channels per K step, K
// split among `splits` slices), and whether it can run a problem (group 1, rank <= 2, X, W and Y bound
// whole, workgroup counts within the device limits).
// splits > 1: split K, the channel chunks divided among that many slices (then a reduce pass).
struct ImplicitTile {
  uint32_t wg_y = 2, nv = 2, bk = 8, splits = 1;
};
ImplicitTile choose_implicit_tile(const ConvGeometry& g, int nv_override, int splits_override = 0);
// The GEMM problem one stride phase of a ConvTranspose poses (a Conv: g itself): kernel J = ceil(K / s)
// taps, ceil(out / s) positions per dimension, stride 1, batch N x phases. The implicit path tiles it.
ConvGeometry phase_geometry(const ConvGeometry& g);
// A ConvTranspose whose every kernel dimension equals its stride (dilation 1, group 1) and whose outputs
// all have an input (out + pad_begin <= in * s, pad_begin >= 0): each output is one tap of one
// input, phase r = o + pad mod s. The implicit path then runs it as one GEMM ("pixel shuffle"):
// rows = phases x C_out (each phase's channels padded to a multiple of 4), K = C_in, columns = the
// input positions, each result stored at its phase's output (shuffle_geometry poses that problem).
bool shuffle_applies(const ConvGeometry& g);
ConvGeometry shuffle_geometry(const ConvGeometry& g);
bool conv_implicit_applies(const KernelContext& kc, const ConvGeometry& g, DType x, DType w, DType y,
                           const ChunkLimits& limits);

}  // namespace onda::kernels::conv::detail
