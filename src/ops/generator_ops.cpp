// ONNX ops whose output depends only on shapes and constants, evaluated on the host when the run is
// planned (the values are small and the same every run): EyeLike and the window functions
// (HannWindow, HammingWindow, BlackmanWindow, in float64 then rounded to the output type).
#include <fmt/format.h>

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

}  // namespace

void register_generator_ops(std::vector<OpEntry>& ops) {
  ops.push_back({"", "EyeLike", 9, eye_like, "host value from the input's shape"});
  for (const char* name : {"HannWindow", "HammingWindow", "BlackmanWindow"}) {
    ops.push_back({"", name, 17, window, "host value (float64 formula); size must be known before the run"});
  }
}

}  // namespace onda::ops
