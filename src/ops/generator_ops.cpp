// ONNX ops whose output depends only on shapes and constants, evaluated on the host when the run is
// planned (the values are small and the same every run): EyeLike and the window functions
// (HannWindow, HammingWindow, BlackmanWindow, in float64 then rounded to the output type) and
// MelWeightMatrix.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numbers>

#include "graph/model_error.h"
#include "graph/onnx_data_type.h"
#include "ops/op_inputs.h"
#include "ops/op_registry.h"

namespace onda::ops {
namespace {

DType output_dtype(const Node& node, const char* attribute, DType fallback) {
  if (!node.has_attribute(attribute)) return fallback;
  const std::optional<DType> dtype = dtype_from_onnx(node.attribute_int(attribute));
  if (!dtype) {
    throw ModelError(fmt::format("{}: {} {} is not a type onda supports", node.describe(), attribute,
                                 node.attribute_int(attribute)));
  }
  return *dtype;
}

std::vector<Value> eye_like(const Node& node, OpContext&, const std::vector<Value>& inputs) {
  const Value& x = inputs.at(0);
  if (x.shape().size() != 2) throw ModelError(fmt::format("{}: input must be 2-D", node.describe()));
  const DType dtype = output_dtype(node, "dtype", x.dtype());
  const int64_t k = node.attribute_int("k", 0), rows = x.shape()[0], cols = x.shape()[1];
  std::vector<double> values(static_cast<size_t>(rows * cols), 0.0);
  for (int64_t i = 0; i < rows; ++i)
    if (i + k >= 0 && i + k < cols) values[i * cols + i + k] = 1.0;
  Value y;
  y.host = is_float(dtype)
               ? HostTensor::from_double(dtype, x.shape(), values)
               : HostTensor::from_int64(dtype, x.shape(), std::vector<int64_t>(values.begin(), values.end()));
  return {y};
}

std::vector<Value> window(const Node& node, OpContext&, const std::vector<Value>& inputs) {
  const std::vector<int64_t> sizes = constant_ints(node, inputs.at(0), "size");
  if (sizes.size() != 1 || sizes[0] < 0 || sizes[0] > (int64_t{1} << 26)) {
    throw ModelError(fmt::format("{}: size must be one non-negative value (at most 2^26)", node.describe()));
  }
  const int64_t n = sizes[0];
  const bool periodic = node.attribute_int("periodic", 1) != 0;
  const DType dtype = output_dtype(node, "output_datatype", DType::f32);
  const double denominator = static_cast<double>(periodic ? n : n - 1);
  std::vector<double> w(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    const double angle =
        denominator > 0 ? 2.0 * std::numbers::pi * static_cast<double>(i) / denominator : 0.0;
    if (node.op_type == "HannWindow") w[i] = 0.5 - 0.5 * std::cos(angle);
    if (node.op_type == "HammingWindow") w[i] = 25.0 / 46.0 - 21.0 / 46.0 * std::cos(angle);
    if (node.op_type == "BlackmanWindow") w[i] = 0.42 - 0.5 * std::cos(angle) + 0.08 * std::cos(2.0 * angle);
  }
  Value y;
  y.host = is_float(dtype) ? HostTensor::from_double(dtype, {n}, w)
                           : HostTensor::from_int64(dtype, {n}, std::vector<int64_t>(w.begin(), w.end()));
  return {y};
}

// MelWeightMatrix (opset 17): [dft_length / 2 + 1, num_mel_bins] triangular filters on the mel scale
// (mel = 2595 log10(1 + hz / 700)), exactly as ONNX defines it (its reference op): num_mel_bins + 2
// points spaced by (high - low) / (num_mel_bins + 2) mels from the lower edge, each mapped to the
// spectrogram bin floor((dft_length + 1) hz / sample_rate); filter i rises from point i to point i + 1
// and falls to point i + 2. Computed in float64, rounded to the output type.
std::vector<Value> mel_weight_matrix(const Node& node, OpContext&, const std::vector<Value>& inputs) {
  auto scalar_int = [&](size_t index, const char* what) {
    const std::vector<int64_t> v = constant_ints(node, inputs.at(index), what);
    if (v.size() != 1) throw ModelError(fmt::format("{}: {} must be a scalar", node.describe(), what));
    return v[0];
  };
  auto scalar_double = [&](size_t index, const char* what) {
    const std::vector<double> v = constant_doubles(node, inputs.at(index), what);
    if (v.size() != 1) throw ModelError(fmt::format("{}: {} must be a scalar", node.describe(), what));
    return v[0];
  };
  const int64_t mel_bins = scalar_int(0, "num_mel_bins"), dft_length = scalar_int(1, "dft_length");
  const int64_t sample_rate = scalar_int(2, "sample_rate");
  const double low_hz = scalar_double(3, "lower_edge_hertz"), high_hz = scalar_double(4, "upper_edge_hertz");
  if (mel_bins <= 0 || mel_bins > (1 << 16) || dft_length <= 0 || dft_length > (int64_t{1} << 24) ||
      sample_rate <= 0) {
    throw ModelError(
        fmt::format("{}: num_mel_bins {}, dft_length {} and sample_rate {} must be positive (and not huge)",
                    node.describe(), mel_bins, dft_length, sample_rate));
  }
  if (!(low_hz >= 0 && low_hz <= high_hz && high_hz <= sample_rate / 2.0)) {
    throw ModelError(
        fmt::format("{}: the edges {} Hz .. {} Hz must satisfy 0 <= lower <= upper <= sample_rate / 2",
                    node.describe(), low_hz, high_hz));
  }
  const DType dtype = output_dtype(node, "output_datatype", DType::f32);
  const int64_t spectrum_bins = dft_length / 2 + 1;
  auto mel = [](double hz) { return 2595.0 * std::log10(1.0 + hz / 700.0); };
  const double low_mel = mel(low_hz), step = (mel(high_hz) - low_mel) / static_cast<double>(mel_bins + 2);
  std::vector<int64_t> bin(static_cast<size_t>(mel_bins + 2));
  for (int64_t i = 0; i < mel_bins + 2; ++i) {
    const double hz = 700.0 * (std::pow(10.0, (static_cast<double>(i) * step + low_mel) / 2595.0) - 1.0);
    bin[i] = static_cast<int64_t>(
        std::floor(static_cast<double>(dft_length + 1) * hz / static_cast<double>(sample_rate)));
    // An odd dft_length puts the upper edge at sample_rate / 2 one past the last bin: keep it in.
    bin[i] = std::clamp<int64_t>(bin[i], 0, spectrum_bins - 1);
  }
  std::vector<double> w(static_cast<size_t>(spectrum_bins * mel_bins), 0.0);
  for (int64_t i = 0; i < mel_bins; ++i) {
    const int64_t left = bin[i], center = bin[i + 1], right = bin[i + 2];
    if (center == left) {
      w[center * mel_bins + i] = 1.0;
    } else {
      for (int64_t j = left; j <= center; ++j)
        w[j * mel_bins + i] = static_cast<double>(j - left) / static_cast<double>(center - left);
    }
    for (int64_t j = center; j < right; ++j)
      w[j * mel_bins + i] = static_cast<double>(right - j) / static_cast<double>(right - center);
  }
  Value y;
  y.host = is_float(dtype) ? HostTensor::from_double(dtype, {spectrum_bins, mel_bins}, w)
                           : HostTensor::from_int64(dtype, {spectrum_bins, mel_bins},
                                                    std::vector<int64_t>(w.begin(), w.end()));
  return {y};
}

}  // namespace

void register_generator_ops(std::vector<OpEntry>& ops) {
  ops.push_back({"", "EyeLike", 9, eye_like, "host value from the input's shape"});
  for (const char* name : {"HannWindow", "HammingWindow", "BlackmanWindow"}) {
    ops.push_back({"", name, 17, window, "host value (float64 formula); size must be known before the run"});
  }
  ops.push_back({"", "MelWeightMatrix", 17, mel_weight_matrix,
                 "host value (ONNX's float64 definition); every input must be known before the run"});
}

}  // namespace onda::ops
