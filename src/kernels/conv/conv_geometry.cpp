#include "kernels/conv/conv_geometry.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <stdexcept>

namespace onda::kernels::conv {

const char* auto_pad_name(AutoPad auto_pad) {
  static constexpr const char* kNames[] = {"explicit", "same_upper", "same_lower", "valid"};  // enum order
  return kNames[static_cast<int>(auto_pad)];
}

namespace {

int64_t product(const std::vector<int64_t>& v) {
  int64_t p = 1;
  for (int64_t x : v) p *= x;
  return p;
}

// Per-dimension attribute with a default; a given one must have exactly `rank` entries.
std::vector<int64_t> per_dim(const std::vector<int64_t>& given, size_t rank, int64_t fallback,
                             const char* name) {
  if (given.empty()) return std::vector<int64_t>(rank, fallback);
  if (given.size() != rank) {
    throw std::invalid_argument(
        fmt::format("{} has {} entries, the input has {} spatial dimensions", name, given.size(), rank));
  }
  return given;
}

// What resolve_conv and resolve_conv_transpose share: ranks, channels, kernel, strides, dilations.
ConvGeometry common(const Shape& x, const Shape& w, const ConvAttributes& a, bool transpose) {
  if (x.size() < 3 || x.size() > 5) {
    throw std::invalid_argument(
        fmt::format("input X must be [N, C, spatial...] with 1 to 3 spatial dims, got {}", shape_string(x)));
  }
  if (w.size() != x.size()) {
    throw std::invalid_argument(
        fmt::format("weight {} must have the rank of X {}", shape_string(w), shape_string(x)));
  }
  const size_t rank = x.size() - 2;
  ConvGeometry g;
  g.transpose = transpose;
  g.batch = x[0];
  g.in_channels = x[1];
  g.group = a.group;
  if (g.group <= 0) throw std::invalid_argument(fmt::format("group must be positive, got {}", g.group));
  if (g.in_channels % g.group != 0) {
    throw std::invalid_argument(
        fmt::format("{} input channels are not divisible into {} groups", g.in_channels, g.group));
  }
  if (transpose) {
    if (w[0] != g.in_channels) {
      throw std::invalid_argument(
          fmt::format("weight {} must start with the {} input channels", shape_string(w), g.in_channels));
    }
    g.out_channels = w[1] * g.group;
  } else {
    if (w[1] * g.group != g.in_channels) {
      throw std::invalid_argument(
          fmt::format("weight {} has {} channels per group, X has {} channels in {} groups", shape_string(w),
                      w[1], g.in_channels, g.group));
    }
    if (w[0] % g.group != 0) {
      throw std::invalid_argument(
          fmt::format("{} output channels are not divisible into {} groups", w[0], g.group));
    }
    g.out_channels = w[0];
  }
  g.in_size.assign(x.begin() + 2, x.end());
  g.kernel.assign(w.begin() + 2, w.end());
  if (!a.kernel_shape.empty() && a.kernel_shape != g.kernel) {
    throw std::invalid_argument(
        fmt::format("kernel_shape {} does not match the weight {}", a.kernel_shape, shape_string(w)));
  }
  g.strides = per_dim(a.strides, rank, 1, "strides");
  g.dilations = per_dim(a.dilations, rank, 1, "dilations");
  for (size_t d = 0; d < rank; ++d) {
    if (g.strides[d] <= 0 || g.dilations[d] <= 0) {
      throw std::invalid_argument(
          fmt::format("strides {} and dilations {} must be positive", g.strides, g.dilations));
    }
    if (g.kernel[d] <= 0) throw std::invalid_argument(fmt::format("kernel {} must be positive", g.kernel));
    if (g.in_size[d] < 0) throw std::invalid_argument("negative input size");
  }
  return g;
}

// Explicit pads (NOTSET): [begin..., end...].
void explicit_pads(ConvGeometry& g, const std::vector<int64_t>& pads) {
  const size_t rank = g.in_size.size();
  if (pads.empty()) {
    g.pads_begin.assign(rank, 0);
    g.pads_end.assign(rank, 0);
    return;
  }
  if (pads.size() != 2 * rank) {
    throw std::invalid_argument(fmt::format("pads has {} entries, expected {}", pads.size(), 2 * rank));
  }
  g.pads_begin.assign(pads.begin(), pads.begin() + rank);
  g.pads_end.assign(pads.begin() + rank, pads.end());
}

int64_t dilated(const ConvGeometry& g, size_t d) {
  return (g.kernel[d] - 1) * g.dilations[d] + 1;
}

}  // namespace

int64_t ConvGeometry::kernel_elements() const {
  return product(kernel);
}
bool ConvGeometry::unit_dilations() const {
  return std::all_of(dilations.begin(), dilations.end(), [](int64_t d) { return d == 1; });
}
int64_t ConvGeometry::in_positions() const {
  return product(in_size);
}
int64_t ConvGeometry::out_positions() const {
  return product(out_size);
}

Shape ConvGeometry::output_shape() const {
  Shape s = {batch, out_channels};
  s.insert(s.end(), out_size.begin(), out_size.end());
  return s;
}

Shape ConvGeometry::weight_shape() const {
  Shape s = transpose ? Shape{in_channels, out_channels / group} : Shape{out_channels, in_channels / group};
  s.insert(s.end(), kernel.begin(), kernel.end());
  return s;
}

std::string ConvGeometry::describe() const {
  return fmt::format(
      "{} N={} C_in={} C_out={} group={} in={} out={} kernel={} strides={} dilations={} pads={}/{}",
      transpose ? "ConvTranspose" : "Conv", batch, in_channels, out_channels, group, in_size, out_size,
      kernel, strides, dilations, pads_begin, pads_end);
}

ConvGeometry resolve_conv(const Shape& x, const Shape& w, const ConvAttributes& a) {
  ConvGeometry g = common(x, w, a, false);
  const size_t rank = g.in_size.size();
  if (a.auto_pad == AutoPad::explicit_pads) {
    explicit_pads(g, a.pads);
  } else {
    g.pads_begin.assign(rank, 0);
    g.pads_end.assign(rank, 0);
  }
  g.out_size.resize(rank);
  for (size_t d = 0; d < rank; ++d) {
    const int64_t in = g.in_size[d], s = g.strides[d], k = dilated(g, d);
    if (a.auto_pad == AutoPad::same_upper || a.auto_pad == AutoPad::same_lower) {
      // out = ceil(in / s); total pad = (out - 1) * s + k - in, the odd pixel at the end (UPPER)
      // or at the beginning (LOWER).
      const int64_t out = (in + s - 1) / s;
      const int64_t total = std::max<int64_t>(0, (out - 1) * s + k - in);
      g.pads_begin[d] = a.auto_pad == AutoPad::same_upper ? total / 2 : total - total / 2;
      g.pads_end[d] = total - g.pads_begin[d];
    }
    if (g.pads_begin[d] < 0 || g.pads_end[d] < 0)
      throw std::invalid_argument("Conv pads must be non-negative");
    const int64_t span = in + g.pads_begin[d] + g.pads_end[d] - k;
    if (span < 0 && in > 0) {
      throw std::invalid_argument(
          fmt::format("dilated kernel {} is larger than the padded input {} (dimension {})", k,
                      in + g.pads_begin[d] + g.pads_end[d], d));
    }
    g.out_size[d] = span < 0 ? 0 : span / s + 1;
  }
  return g;
}

ConvGeometry resolve_conv_transpose(const Shape& x, const Shape& w, const ConvAttributes& a) {
  ConvGeometry g = common(x, w, a, true);
  const size_t rank = g.in_size.size();
  const std::vector<int64_t> output_padding = per_dim(a.output_padding, rank, 0, "output_padding");
  for (size_t d = 0; d < rank; ++d) {
    if (output_padding[d] < 0) throw std::invalid_argument("output_padding must be non-negative");
  }
  // Natural size with zero pads: s * (in - 1) + output_padding + dilated kernel.
  auto full = [&](size_t d) { return g.strides[d] * (g.in_size[d] - 1) + output_padding[d] + dilated(g, d); };
  std::vector<int64_t> wanted;
  if (!a.output_shape.empty()) {
    // Given with or without the [N, C] prefix.
    if (a.output_shape.size() == rank + 2) {
      wanted.assign(a.output_shape.begin() + 2, a.output_shape.end());
    } else if (a.output_shape.size() == rank) {
      wanted = a.output_shape;
    } else {
      throw std::invalid_argument(
          fmt::format("output_shape {} does not have {} spatial entries", a.output_shape, rank));
    }
  } else if (a.auto_pad == AutoPad::same_upper || a.auto_pad == AutoPad::same_lower) {
    for (size_t d = 0; d < rank; ++d) wanted.push_back(g.in_size[d] * g.strides[d]);
  }
  g.out_size.resize(rank);
  if (!wanted.empty()) {
    // total_padding = full - output_shape, split with the extra pixel at the beginning unless
    // auto_pad is SAME_UPPER (the ONNX ConvTranspose specification).
    g.pads_begin.resize(rank);
    g.pads_end.resize(rank);
    for (size_t d = 0; d < rank; ++d) {
      // Floor division as in the ONNX reference (Python //): a negative total (output_shape beyond
      // the natural size) puts the extra outputs at the end.
      const int64_t total = full(d) - wanted[d];
      const int64_t half = total >= 0 ? total / 2 : -((-total + 1) / 2);
      g.pads_begin[d] = a.auto_pad == AutoPad::same_upper ? half : total - half;
      g.pads_end[d] = total - g.pads_begin[d];
      g.out_size[d] = wanted[d];
    }
  } else {
    if (a.auto_pad == AutoPad::valid) {
      g.pads_begin.assign(rank, 0);
      g.pads_end.assign(rank, 0);
    } else {
      explicit_pads(g, a.pads);
    }
    for (size_t d = 0; d < rank; ++d) g.out_size[d] = full(d) - g.pads_begin[d] - g.pads_end[d];
  }
  for (size_t d = 0; d < rank; ++d) {
    if (g.out_size[d] < 0) {
      throw std::invalid_argument(
          fmt::format("output size {} of spatial dimension {} is negative", g.out_size[d], d));
    }
  }
  return g;
}

}  // namespace onda::kernels::conv
