// What an FFT computes and where its data lives: the request an ONNX DFT/STFT op (or any caller)
// hands to FftPlan. Nothing here touches the GPU.
//
// A batch of transforms along one axis of a tensor. The tensor is seen as (outer, axis, inner): transform
// b = outer * inner_count + inner reads sample n at scalar element
//     offset + outer * outer_stride + inner * inner_stride + n * axis_stride
// of its storage (one f32 or one f16 per scalar element). Complex values are interleaved (re at +0, im at
// +1). So a DFT along any axis of an ONNX tensor [..., signal, 1 or 2] needs no transpose, and an STFT's
// frames are an outer stride of `hop` over the signal.
#pragma once
#include <cstdint>
#include <string>

#include "tensor/dtype.h"

namespace onda::kernels::fft {

enum class FftDirection : uint8_t { forward, inverse };

enum class FftDomain : uint8_t {
  complex,          // complex input of N samples -> complex output of N bins
  real_to_complex,  // real input of N samples -> onesided output, bins 0..N/2 (N/2+1 values)
  complex_to_real,  // onesided Hermitian input, bins 0..N/2 -> real output of N samples
};

struct FftLayout {
  int64_t offset = 0;  // scalar elements, added to the tensor's own offset
  int64_t outer_stride = 0;
  int64_t inner_stride = 0;
  int64_t axis_stride = 0;
};

// The dense layout of a tensor (outer, axis_length, inner, components): components is 2 for
// interleaved complex values and 1 for real ones.
FftLayout contiguous_layout(int64_t axis_length, int64_t inner_count, int components);

struct FftDescription {
  int64_t length = 0;  // N, the transform length
  int64_t outer_count = 1;
  int64_t inner_count = 1;
  FftDomain domain = FftDomain::complex;
  FftDirection direction = FftDirection::forward;
  // Multiply the result by 1/N (ONNX DFT's inverse does). Inverse without it is the plain sum.
  bool normalize = false;
  DType dtype = DType::f32;  // of input and output; f16 is computed in f32
  // Samples present along the input axis (0: N). Fewer are zero-padded, more are truncated (ONNX
  // dft_length). Only for complex and real input; Hermitian input always holds N/2+1 bins.
  int64_t input_length = 0;
  FftLayout input;
  FftLayout output;
  // STFT: multiply input sample n by window[n] (a tensor of the same dtype given to record(), at least
  // min(N, input samples) long). Complex and real input only.
  bool windowed = false;

  int64_t batch() const { return outer_count * inner_count; }
  int64_t input_samples() const;   // values read along the axis
  int64_t output_samples() const;  // values written along the axis
  bool input_is_real() const { return domain == FftDomain::real_to_complex; }
  bool output_is_real() const { return domain == FftDomain::complex_to_real; }
  // Throws std::invalid_argument naming the first bad field.
  void validate() const;
  std::string summary() const;
};

// The device limits a plan must respect (read once from the context's wgpu::Limits).
struct FftDeviceLimits {
  uint64_t workgroup_storage_bytes = 16384;
  uint32_t max_invocations_per_workgroup = 256;
  uint64_t max_storage_binding_bytes = uint64_t{128} << 20;
  uint32_t max_workgroups_per_dimension = 65535;
  // Whole passes may hold their points in registers and exchange the real and the imaginary halves
  // through workgroup memory one after the other (StockhamPassPlan::split_exchange, unrolled code
  // path only): one transform of up to workgroup_storage_bytes / 4 points in one pass instead of
  // four-step's two.
  bool split_exchange = false;
  // Complex transforms of at least this many points run as three passes (PassShape::inner_columns)
  // where they split so; 0: never (the default; tests and sweeps pass limits that set it).
  int64_t three_pass_from = 0;
};

}  // namespace onda::kernels::fft
