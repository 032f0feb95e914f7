// Sampling at given points (ONNX GridSample, opset 16 and 20; PyTorch's grid_sample): input
// [N, C, D1..Dr] and grid [N, O1..Or, r] of normalized coordinates in [-1, 1] (last component
// first: x along Dr, y along Dr-1, ...) give output [N, C, O1..Or], for r = 1, 2 or 3. Each point is
// unnormalized per dim (align_corners: -1 and 1 are the centres of the corner elements, else their
// outer edges), padded when outside (border: clamped; reflection: mirrored off the edges), then
// read by one of three interpolations: nearest (round half to even), linear (2^r taps), cubic
// (4^r taps, Keys' kernel with A = -0.75). Taps outside the input read zero (zeros), the edge
// (border) or their mirror image (reflection), as the ONNX reference implementation does.
#pragma once

#include "kernels/kernel_context.h"
#include "tensor/tensor.h"

namespace onda::kernels {

enum class GridSampleMode { Nearest, Linear, Cubic };
enum class GridSamplePadding { Zeros, Border, Reflection };

struct GridSampleAttributes {
  GridSampleMode mode = GridSampleMode::Linear;
  GridSamplePadding padding = GridSamplePadding::Zeros;
  bool align_corners = false;
};

// The output shape, [N, C, O1..Or]; throws std::invalid_argument for ranks or sizes that disagree.
Shape grid_sample_output_shape(const Shape& input, const Shape& grid);

// Float input, grid and output (f32 or f16).
void record_grid_sample(const KernelContext& kc, gpu::CommandRecorder& recorder, const Tensor& input,
                        const Tensor& grid, const GridSampleAttributes& attributes, const Tensor& output);

}  // namespace onda::kernels
