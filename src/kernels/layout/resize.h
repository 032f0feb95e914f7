// ONNX Resize (opset 11-19): modes nearest, linear and cubic over the last two dims of any rank >= 1
// (rank 1: the only dim), e.g. UVR's bilinear align_corners upsampling of NCHW feature maps.
// Antialias, roi (tf_crop_and_resize), keep_aspect_ratio and resizing leading dims are not
// supported and throw.
#pragma once
#include <vector>

#include "kernels/kernel_context.h"
#include "tensor/tensor.h"

namespace onda::kernels {

enum class ResizeMode { Nearest, Linear, Cubic };
// TfHalfPixelForNn: (x + 1/2) / scale, opset 11-12 (TensorFlow 1 exports).
enum class ResizeCoordinates { HalfPixel, Asymmetric, AlignCorners, PytorchHalfPixel, TfHalfPixelForNn };
enum class ResizeNearestMode { RoundPreferFloor, RoundPreferCeil, Floor, Ceil };

struct ResizeAttributes {
  ResizeMode mode = ResizeMode::Nearest;
  ResizeCoordinates coordinates = ResizeCoordinates::HalfPixel;
  ResizeNearestMode nearest = ResizeNearestMode::RoundPreferFloor;
  // One per input dim when the model gives `scales` (the output size is then floor(in * scale) and
  // the coordinate transform uses the scale itself); empty when it gives `sizes` (scale = out / in).
  // Coordinates are computed exactly from the scale as a fraction (out / in, or the float scale's
  // own value when it is a fraction with denominator <= 2^16), so nearest-mode ties resolve as the
  // ONNX definition says on every adapter, independent of float division accuracy.
  std::vector<float> scales;
  // Cubic: the kernel's coefficient A (Keys' cubic convolution; -0.75 as PyTorch, -0.5 as
  // TensorFlow) and whether taps outside the input get weight 0 (the rest renormalized) instead of
  // repeating the edge.
  float cubic_a = -0.75f;
  bool exclude_outside = false;
};

// Output dims from scales: floor(in * scale) (ONNX).
Shape resize_output_shape(const Shape& input, const std::vector<float>& scales);

// Linear and cubic need a float dtype; nearest takes any dtype. Leading dims must keep their size (scale 1).
void record_resize(const KernelContext& kc, gpu::CommandRecorder& recorder, const Tensor& input,
                   const ResizeAttributes& attributes, const Tensor& output);

}  // namespace onda::kernels
