// Normalization layers as two reads of the input at most: x viewed as [rows, row_size] is
// normalized per row to zero mean and unit variance, then an optional affine scale/bias is applied.
// The ONNX ops map onto it (see normalize_spec_for_*):
//   LayerNormalization: rows = prod(shape[:axis]), row_size = prod(shape[axis:]), affine index = k;
//   InstanceNormalization: rows = N*C, row_size = spatial, affine index = r % C;
//   GroupNormalization: rows = N*G, row_size = C/G*spatial, affine index per channel (opset 21)
//   or per group (opset 18);
//   a fused L2 normalization (NormalizeSpec::l2): LayerNormalization's rows, divided by their norm.
// Rows up to 4096 elements (32768 where the device allows workgroups of 1024 invocations): one fused
// kernel (one read). Longer rows: chunked partial statistics (Chan's parallel merge), then an apply
// pass whose workgroups each merge their row's chunks (two reads), so that a few long rows
// (InstanceNorm over a whole spectrogram, GroupNorm(1) over a whole layer) still fill the GPU.
#pragma once
#include <memory>
#include <optional>
#include <vector>

#include "gpu/buffer_pool.h"
#include "kernels/elementwise/fused_elementwise.h"
#include "kernels/kernel_context.h"
#include "tensor/tensor.h"

namespace onda::kernels {

struct NormalizeSpec {
  int64_t rows = 1;
  int64_t row_size = 1;
  // Affine parameter index of element (r, k): (r % row_mod) * row_mul + (k / k_div) % k_mod.
  int64_t row_mod = 1, row_mul = 0, k_div = 1, k_mod = 1;
  float epsilon = 1e-5f;
  // Each row over its Euclidean norm instead of standardized: x / max(||x||, epsilon), no centering
  // (PyTorch's F.normalize, as RMSNorm layers export it: graph/fuse_l2_norm.h).
  bool l2 = false;
  bool operator==(const NormalizeSpec&) const = default;
};

// An optional scale or bias tensor as a problem sees it.
struct NormalizeAffine {
  bool defined = false;
  DType dtype = DType::f32;
  int64_t numel = 0;
  static NormalizeAffine of(const Tensor& t) {
    return t.defined() ? NormalizeAffine{true, t.dtype(), t.numel()} : NormalizeAffine{};
  }
  bool operator==(const NormalizeAffine&) const = default;
};

// What one normalisation computes: shapes, dtypes and the spec, no buffers.
struct NormalizeProblem {
  Shape shape;  // of x and y
  DType dtype = DType::f32;
  NormalizeSpec spec;
  NormalizeAffine scale, bias;
  FusedEpilogue epilogue;  // elementwise ops applied to each output element (none by default)
  // PRelu's slope, indexed as scale and bias are: y = v >= 0 ? v : v * slope[a] after the affine map,
  // before the epilogue (an InstanceNorm -> PRelu pair, graph/fuse_norm_prelu.h).
  NormalizeAffine slope;
  bool operator==(const NormalizeProblem&) const = default;
};

// A normalisation planned once per problem (checks, path, uniforms but the offsets, pipelines;
// inputs larger than one binding run as row slices, each slice problem planned once) and recorded
// per run.
class Normalize {
 public:
  // Throws std::invalid_argument when the shape does not hold spec.rows rows of spec.row_size or a
  // scale / bias has another size than the affine index needs.
  Normalize(const KernelContext& kc, NormalizeProblem problem);
  ~Normalize();
  Normalize(Normalize&&) noexcept;

  const NormalizeProblem& problem() const { return problem_; }

  // The tensors must match the problem (undefined scale / bias / slope where it has none). Scratch
  // comes from `pool` and is kept alive by the recorder until its submit completes.
  void record(gpu::CommandRecorder& recorder, gpu::BufferPool& pool, const Tensor& x, const Tensor& scale,
              const Tensor& bias, const Tensor& y, const Tensor& slope = Tensor()) const;

 private:
  struct Pipelines;
  void check_tensors(const Tensor& x, const Tensor& scale, const Tensor& bias, const Tensor& y,
                     const Tensor& slope) const;
  void record_in_row_slices(gpu::CommandRecorder& recorder, gpu::BufferPool& pool, const Tensor& x,
                            const Tensor& scale, const Tensor& bias, const Tensor& y, const Tensor& slope) const;
  const Normalize& slice_plan(const NormalizeProblem& slice) const;

  KernelContext kc_;
  NormalizeProblem problem_;
  std::unique_ptr<Pipelines> pipelines_;  // none for an empty x
  mutable std::vector<std::unique_ptr<Normalize>> slice_plans_;
};

// The longest row one dispatch normalizes on a device with these limits (4096, or 32768 with
// workgroups of 1024 invocations); longer rows take two dispatches.
int64_t fused_row_capacity(const wgpu::Limits& limits);

NormalizeSpec layer_norm_spec(const Shape& shape, int64_t axis, float epsilon);
NormalizeSpec instance_norm_spec(const Shape& shape, float epsilon);
// `per_channel_affine`: opset 21 (scale/bias of C); false: opset 18 (scale/bias of num_groups).
NormalizeSpec group_norm_spec(const Shape& shape, int64_t num_groups, bool per_channel_affine, float epsilon);

// Plans and records in one call. `scale` and `bias` may be undefined Tensors (no scale / no bias). Scratch
// comes from `pool` and is kept alive by the recorder until its submit completes. Throws
// std::invalid_argument on mismatch.
void record_normalize(const KernelContext& kc, gpu::CommandRecorder& recorder, gpu::BufferPool& pool,
                      const Tensor& x, const Tensor& scale, const Tensor& bias, const Tensor& y,
                      const NormalizeSpec& spec);

}  // namespace onda::kernels
