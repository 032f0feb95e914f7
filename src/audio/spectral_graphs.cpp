#include "audio/spectral_graphs.h"

#include <onnx/onnx_pb.h>

#include <cmath>
#include <numbers>

namespace onda::audio {
namespace {

// A tiny ONNX graph builder: just what the two spectral graphs need.
class GraphBuilder {
 public:
  GraphBuilder() {
    model_.set_ir_version(8);
    model_.set_producer_name("onda-audio");
    model_.add_opset_import()->set_version(17);
    graph_ = model_.mutable_graph();
    graph_->set_name("onda_spectral");
  }

  // A float input; a negative dim is the dynamic batch ("batch").
  void input(const std::string& name, const std::vector<int64_t>& dims) {
    auto* tensor = graph_->add_input();
    tensor->set_name(name);
    auto* type = tensor->mutable_type()->mutable_tensor_type();
    type->set_elem_type(onnx::TensorProto::FLOAT);
    for (int64_t d : dims) {
      auto* dim = type->mutable_shape()->add_dim();
      if (d < 0)
        dim->set_dim_param("batch");
      else
        dim->set_dim_value(d);
    }
  }
  void output(const std::string& name) {
    auto* value = graph_->add_output();
    value->set_name(name);
    value->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  }
  std::string floats(const std::string& name, const std::vector<int64_t>& dims,
                     const std::vector<double>& values) {
    auto* t = graph_->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::FLOAT);
    for (int64_t d : dims) t->add_dims(d);
    for (double v : values) t->add_float_data(static_cast<float>(v));
    return name;
  }
  std::string scalar(const std::string& name, double value) { return floats(name, {}, {value}); }
  std::string ints(const std::string& name, const std::vector<int64_t>& dims,
                   const std::vector<int64_t>& values) {
    auto* t = graph_->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::INT64);
    for (int64_t d : dims) t->add_dims(d);
    for (int64_t v : values) t->add_int64_data(v);
    return name;
  }
  onnx::NodeProto* node(const std::string& op, const std::vector<std::string>& inputs,
                        const std::string& output) {
    auto* n = graph_->add_node();
    n->set_op_type(op);
    n->set_name(output);
    for (const auto& i : inputs) n->add_input(i);
    n->add_output(output);
    return n;
  }
  static void attribute(onnx::NodeProto* n, const std::string& name, int64_t value) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(value);
  }
  static void attribute(onnx::NodeProto* n, const std::string& name, const std::vector<int64_t>& values) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INTS);
    for (int64_t v : values) a->add_ints(v);
  }
  static void attribute(onnx::NodeProto* n, const std::string& name, const std::string& value) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::STRING);
    a->set_s(value);
  }
  std::string bytes() const { return model_.SerializeAsString(); }

 private:
  onnx::ModelProto model_;
  onnx::GraphProto* graph_ = nullptr;
};

}  // namespace

std::vector<double> spectral_window(const std::string& name, int64_t n_fft) {
  std::vector<double> w(static_cast<size_t>(n_fft), 1.0);
  if (name == "hann") {  // periodic: torch.hann_window(n) = 0.5 - 0.5 cos(2 pi k / n)
    for (int64_t k = 0; k < n_fft; ++k)
      w[k] =
          0.5 - 0.5 * std::cos(2.0 * std::numbers::pi * static_cast<double>(k) / static_cast<double>(n_fft));
  }
  return w;
}

std::string stft_model_bytes(const SpectrogramProcessing& p, int64_t segment) {
  GraphBuilder g;
  const int64_t half = p.n_fft / 2;
  g.input("wave", {-1, segment});
  g.output("magnitude");
  g.output("phase");
  g.node("Unsqueeze", {"wave", g.ints("axis2", {1}, {2})}, "wave3");
  GraphBuilder::attribute(
      g.node("Pad", {"wave3", g.ints("center_pads", {6}, {0, half, 0, 0, half, 0})}, "padded"), "mode",
      std::string("reflect"));
  auto* stft = g.node(
      "STFT",
      {"padded", g.ints("hop", {}, {p.hop}),
       g.floats("window", {p.n_fft}, spectral_window(p.window, p.n_fft)), g.ints("n_fft", {}, {p.n_fft})},
      "spectrum");
  GraphBuilder::attribute(stft, "onesided", int64_t{1});
  // [B, frames, bins, 2] -> real and imaginary parts as [B, bins, frames]
  GraphBuilder::attribute(g.node("Gather", {"spectrum", g.ints("zero", {}, {0})}, "re_fk"), "axis",
                          int64_t{3});
  GraphBuilder::attribute(g.node("Gather", {"spectrum", g.ints("one", {}, {1})}, "im_fk"), "axis",
                          int64_t{3});
  GraphBuilder::attribute(g.node("Transpose", {"re_fk"}, "re"), "perm", std::vector<int64_t>{0, 2, 1});
  GraphBuilder::attribute(g.node("Transpose", {"im_fk"}, "im"), "perm", std::vector<int64_t>{0, 2, 1});
  g.node("Mul", {"re", "re"}, "re2");
  g.node("Mul", {"im", "im"}, "im2");
  g.node("Add", {"re2", "im2"}, "power");
  g.node("Add", {"power", g.scalar("power_floor", 1e-9)}, "power_safe");
  if (p.compression == 1.0) {
    g.node("Sqrt", {"power_safe"}, "magnitude");
  } else {
    g.node("Sqrt", {"power_safe"}, "linear_magnitude");
    g.node("Pow", {"linear_magnitude", g.scalar("compression", p.compression)}, "magnitude");
  }
  // atan2(y, x) from Atan(y / x): add pi (y >= 0) or subtract it (y < 0) where x < 0.
  g.node("Add", {"im", g.scalar("y_offset", 1e-10)}, "y");
  g.node("Add", {"re", g.scalar("x_offset", 1e-5)}, "x");
  g.node("Div", {"y", "x"}, "y_over_x");
  g.node("Atan", {"y_over_x"}, "half_plane_angle");
  g.node("GreaterOrEqual", {"y", g.scalar("zero_f", 0.0)}, "upper");
  g.node("Where", {"upper", g.scalar("pi", std::numbers::pi), g.scalar("minus_pi", -std::numbers::pi)},
         "turn");
  g.node("Add", {"half_plane_angle", "turn"}, "turned_angle");
  g.node("Less", {"x", "zero_f"}, "left");
  g.node("Where", {"left", "turned_angle", "half_plane_angle"}, "phase");
  return g.bytes();
}

std::string istft_model_bytes(const SpectrogramProcessing& p, int64_t segment) {
  GraphBuilder g;
  const int64_t bins = p.n_fft / 2 + 1, frames = segment / p.hop + 1, half = p.n_fft / 2;
  g.input("magnitude", {-1, bins, frames});
  g.input("phase", {-1, bins, frames});
  g.output("wave");
  std::string magnitude = "magnitude";
  if (p.compression != 1.0) {
    g.node("Pow", {"magnitude", g.scalar("expansion", 1.0 / p.compression)}, "linear_magnitude");
    magnitude = "linear_magnitude";
  }
  g.node("Cos", {"phase"}, "cos");
  g.node("Sin", {"phase"}, "sin");
  g.node("Mul", {magnitude, "cos"}, "re");
  g.node("Mul", {magnitude, "sin"}, "im");
  const std::string last_axis = g.ints("axis3", {1}, {3});
  g.node("Unsqueeze", {"re", last_axis}, "re4");
  g.node("Unsqueeze", {"im", last_axis}, "im4");
  GraphBuilder::attribute(g.node("Concat", {"re4", "im4"}, "complex"), "axis", int64_t{3});
  // Inverse real DFT along the bins: [B, bins, frames, 2] -> [B, n_fft, frames, 1], 1/n_fft scaled.
  auto* dft = g.node("DFT", {"complex", g.ints("dft_length", {}, {p.n_fft})}, "frames4");
  GraphBuilder::attribute(dft, "axis", int64_t{1});
  GraphBuilder::attribute(dft, "inverse", int64_t{1});
  GraphBuilder::attribute(dft, "onesided", int64_t{1});
  g.node("Squeeze", {"frames4", last_axis}, "frames");
  // Overlap-add of windowed frames: ConvTranspose, weight[c, 0, k] = (c == k) window[k].
  const auto window = spectral_window(p.window, p.n_fft);
  std::vector<double> identity(static_cast<size_t>(p.n_fft * p.n_fft), 0.0);
  for (int64_t k = 0; k < p.n_fft; ++k) identity[k * p.n_fft + k] = window[k];
  auto* ola =
      g.node("ConvTranspose", {"frames", g.floats("windowed_identity", {p.n_fft, 1, p.n_fft}, identity)},
             "overlapped");
  GraphBuilder::attribute(ola, "strides", std::vector<int64_t>{p.hop});
  g.node("Slice",
         {"overlapped", g.ints("starts", {1}, {half}), g.ints("ends", {1}, {half + segment}),
          g.ints("axes", {1}, {2})},
         "centred");
  // torch.istft divides by the summed squared windows (the NOLA envelope).
  const int64_t padded_length = (frames - 1) * p.hop + p.n_fft;
  std::vector<double> envelope(static_cast<size_t>(padded_length), 0.0);
  for (int64_t f = 0; f < frames; ++f)
    for (int64_t k = 0; k < p.n_fft; ++k) envelope[f * p.hop + k] += window[k] * window[k];
  std::vector<double> inverse(static_cast<size_t>(segment));
  for (int64_t t = 0; t < segment; ++t) {
    const double e = envelope[half + t];
    inverse[t] = e > 1e-11 ? 1.0 / e : 0.0;
  }
  g.node("Mul", {"centred", g.floats("inverse_envelope", {segment}, inverse)}, "scaled");
  g.node("Reshape", {"scaled", g.ints("wave_shape", {2}, {-1, segment})}, "wave");
  return g.bytes();
}

}  // namespace onda::audio
