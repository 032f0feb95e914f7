// A Conv or ConvTranspose planned once for one geometry and one set of operands, recorded many times
// (the shape of the GEMM's `Gemm` and the FFT's `FftKernel`). The constructor decides everything that
// does not depend on where the tensors lie: the path (conv.h lists them), how the column buffer is
// chunked and the tensors windowed under the binding limit, the implicit GEMM's tile and split K,
// the GEMM plans, the pipelines and the uniforms' fixed fields. record() fills in the tensors'
// offsets and records the dispatches. The ONNX ops keep one plan per node and input shape.
//
//   ConvPlan plan(kc, geometry, ConvOperands::of(kc, x, weights, bias, y));
//   plan.record(recorder, pool, {x, weights, bias, y});
#pragma once
#include <memory>
#include <optional>

#include "gpu/buffer_pool.h"
#include "gpu/command_recorder.h"
#include "kernels/conv/conv.h"
#include "kernels/conv/conv_geometry.h"
#include "kernels/gemm/packed_b.h"
#include "kernels/kernel_context.h"
#include "tensor/tensor.h"

namespace onda::kernels::conv {

// What a node whose weight is constant derives from it once and keeps across runs and plans (the
// ONNX op's node state): made by the first plan that needs it, in `pool` (a persistent pool).
struct ConvWeightCache {
  gpu::BufferPool* pool = nullptr;
  Tensor implicit_packed;                    // the implicit GEMM's [phases, C_in pad, taps, C_out pad] f32
  std::optional<gemm::PackedB> gemm_packed;  // a dense ConvTranspose weight prepacked for the GEMM
};

// Where a ConvTranspose's windowed-identity diagonal comes from (ConvTransposeWeights).
enum class ConvDiagonal {
  none,
  host,            // `diagonal`, uploaded every run
  device,          // `diagonal_device`, no flag
  device_checked,  // `diagonal_device` and `identity_flag` (checked once; the dense sum behind the flag)
  check_on_gpu,    // `check_windowed_identity`: the check recorded every run
};

// The operands a plan is built for besides the geometry: dtypes and the weight's form. The tensors of
// every record() must match them (a plan for another form is another plan).
struct ConvOperands {
  DType x = DType::f32, y = DType::f32;
  std::optional<DType> w;  // the weight tensor's dtype, when one comes
  bool w_fits_one_binding = true;
  std::optional<DType> bias;    // when a bias comes
  std::optional<DType> packed;  // ConvTranspose: the caller passes a PackedB (of this dtype)
  ConvDiagonal diagonal = ConvDiagonal::none;
  // A constant weight's derived forms, kept across runs; nullptr derives them every run.
  ConvWeightCache* weight_cache = nullptr;

  // The operands of these tensors (ConvTransposeWeights also carries a Conv's plain weight).
  static ConvOperands of(const KernelContext& kc, const Tensor& x, const ConvTransposeWeights& weights,
                         const Tensor& bias, const Tensor& y);
  bool operator==(const ConvOperands&) const = default;
};

// The tensors of one run (a Conv's weight in weights.w).
struct ConvTensors {
  Tensor x;
  ConvTransposeWeights weights;
  Tensor bias;
  Tensor y;
};

namespace detail {
class ConvStep;
}

class ConvPlan {
 public:
  // Chooses the path and plans it. std::invalid_argument when a forced path cannot run the geometry,
  // gpu::DeviceLimitError when no cut of it fits the device's bindings. The plan keeps kc (its device,
  // pipeline cache and tuning) and operands.weight_cache: they must outlive it.
  ConvPlan(const KernelContext& kc, const ConvGeometry& geometry, const ConvOperands& operands,
           const ConvOptions& options = {});
  ~ConvPlan();
  ConvPlan(ConvPlan&&) noexcept;
  ConvPlan& operator=(ConvPlan&&) noexcept;

  const ConvGeometry& geometry() const { return geometry_; }
  const ConvOperands& operands() const { return operands_; }
  // The path recorded; automatic where the plan records nothing (an empty output) or cuts a weight
  // larger than one binding into parts of its output channels, each part planned on its own.
  ConvPath path() const { return path_; }

  // Records the convolution. Checks the tensors against the geometry and the operands
  // (std::invalid_argument); a Conv's weight may be left out (undefined) where !reads_weight().
  void record(gpu::CommandRecorder& recorder, gpu::BufferPool& pool, const ConvTensors& tensors) const;
  // Whether record() still reads the weight tensor: not once it records from a derived form kept in
  // operands.weight_cache (filled by an earlier record()), nor when there is nothing to record. Then
  // the caller need not keep the weight on the GPU for this plan.
  bool reads_weight() const;

  // How many ConvPlans this process has constructed (tests check that runs reuse their plans).
  static int64_t constructed();

 private:
  ConvGeometry geometry_;
  ConvOperands operands_;
  ConvPath path_ = ConvPath::automatic;
  std::unique_ptr<const detail::ConvStep> step_;  // null when there is nothing to record (empty Y)
};

}  // namespace onda::kernels::conv
