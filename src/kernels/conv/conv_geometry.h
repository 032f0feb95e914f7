// The geometry of one Conv or ConvTranspose: every attribute (auto_pad, pads, strides,
// dilations, group, kernel_shape, output_padding, output_shape) resolved into explicit begin/end
// pads and output sizes, following the formulas of the ONNX operator specification (the same as
// onnx/reference/ops/op_conv.py and op_conv_transpose.py). Host-only: every kernel path reads this.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "tensor/tensor.h"

namespace onda::kernels::conv {

// How the pads are chosen: as given (`pads`, ONNX's NOTSET), so that the output is ceil(in / stride)
// with the odd pad at the end (same_upper) or the start (same_lower), or none at all (valid).
enum class AutoPad { explicit_pads, same_upper, same_lower, valid };

// "explicit", "same_upper", ... (for messages).
const char* auto_pad_name(AutoPad auto_pad);

// The node's attributes as numbers (ops/ parses ONNX's); empty vectors mean "not given" (defaults apply).
struct ConvAttributes {
  AutoPad auto_pad = AutoPad::explicit_pads;
  std::vector<int64_t> kernel_shape, strides, dilations, pads;
  int64_t group = 1;
  std::vector<int64_t> output_padding, output_shape;  // ConvTranspose only
};

struct ConvGeometry {
  bool transpose = false;
  int64_t batch = 0, in_channels = 0, out_channels = 0, group = 1;
  // One entry per spatial dimension (1 to 3).
  std::vector<int64_t> in_size, out_size, kernel, strides, dilations, pads_begin, pads_end;

  int64_t spatial_rank() const { return static_cast<int64_t>(in_size.size()); }
  int64_t kernel_elements() const;  // prod(kernel)
  bool unit_dilations() const;      // every dilation 1
  int64_t in_positions() const;     // prod(in_size)
  int64_t out_positions() const;    // prod(out_size)
  Shape output_shape() const;       // [batch, out_channels, out_size...]
  // The weight shape this geometry expects: Conv [C_out, C_in/group, k...],
  // ConvTranspose [C_in, C_out/group, k...].
  Shape weight_shape() const;
  std::string describe() const;
};

// Throw std::invalid_argument naming the inconsistency (rank, channels vs group, kernel_shape vs
// the weight, non-positive strides/dilations, an empty output, ...).
ConvGeometry resolve_conv(const Shape& x_shape, const Shape& w_shape, const ConvAttributes& attributes);
ConvGeometry resolve_conv_transpose(const Shape& x_shape, const Shape& w_shape,
                                    const ConvAttributes& attributes);

}  // namespace onda::kernels::conv
