// ONNX DFT and STFT nodes through the public Session, against a float64 DFT: real/complex input,
// onesided, dft_length truncation and padding, inverse (with 1/N), the inverse real DFT the
// exported iSTFTs use, STFT with and without a window; and clear errors for invalid nodes.
#include <gtest/gtest.h>

#include <cmath>
#include <complex>

#include "graph/model_error.h"
#include "harness.h"
#include "onda/session.h"
#include "test_onnx_support.h"

namespace onda::test {
namespace {

using cd = std::complex<double>;

void add_int_initializer(onnx::GraphProto* graph, const std::string& name, int64_t value) {
  auto* t = graph->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::INT64);
  t->add_int64_data(value);
}

// A graph output declared with its element type only (shape left to inference).
void add_untyped_shape_output(onnx::GraphProto* graph, const std::string& name) {
  auto* value = graph->add_output();
  value->set_name(name);
  value->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
}

std::unique_ptr<Session> open_model(const onnx::ModelProto& model, TemporaryFolder& folder) {
  const auto path = folder.path() / "model.onnx";
  write_file(path, model.SerializeAsString());
  return Session::open(path);
}

// DFT of x (length present) at length n: truncated or zero-padded input.
std::vector<cd> dft(const std::vector<cd>& x, int64_t n, bool inverse) {
  std::vector<cd> out(n);
  for (int64_t k = 0; k < n; ++k) {
    cd sum = 0;
    for (int64_t j = 0; j < std::min<int64_t>(n, static_cast<int64_t>(x.size())); ++j) {
      sum += x[j] * std::polar(1.0, (inverse ? 2.0 : -2.0) * M_PI * static_cast<double>(k * j % n) / static_cast<double>(n));
    }
    out[k] = inverse ? sum / static_cast<double>(n) : sum;
  }
  return out;
}

struct DftCase {
  Shape shape;  // input, last dim 1 or 2
  int64_t axis;
  bool inverse, onesided;
  int64_t dft_length;  // 0: none
};

TEST(SpectralOps, DftMatchesFloat64) {
  Random rng(test_seed());
  const std::vector<DftCase> cases = {
      {{2, 16, 3, 1}, 1, false, true, 0},    {{2, 17, 3, 1}, 1, false, true, 0},  {{3, 12, 1}, 1, false, true, 20},
      {{3, 12, 1}, 1, false, true, 8},       {{2, 5, 13, 2}, 2, false, false, 0}, {{2, 5, 13, 2}, -2, true, false, 0},
      {{4, 9, 2}, 1, true, true, 16},        {{2, 3, 9, 2}, 2, true, true, 0},    {{2, 11, 1}, 1, false, false, 0},
      {{2, 64, 4, 1}, 1, false, true, 1021}, {{1, 4099, 2}, 1, false, false, 0}};
  for (const auto& c : cases) {
    onnx::ModelProto model = empty_model();
    auto* graph = model.mutable_graph();
    add_tensor_value(graph->mutable_input(), "x", onnx::TensorProto::FLOAT, c.shape);
    add_untyped_shape_output(graph, "y");
    std::vector<std::string> node_inputs = {"x"};
    if (c.dft_length) {
      add_int_initializer(graph, "n", c.dft_length);
      node_inputs.push_back("n");
    }
    auto* node = add_node(graph, "DFT", node_inputs, {"y"}, "dft");
    auto* a = node->add_attribute();
    a->set_name("axis"), a->set_type(onnx::AttributeProto::INT), a->set_i(c.axis);
    a = node->add_attribute();
    a->set_name("inverse"), a->set_type(onnx::AttributeProto::INT), a->set_i(c.inverse);
    a = node->add_attribute();
    a->set_name("onesided"), a->set_type(onnx::AttributeProto::INT), a->set_i(c.onesided);
    TemporaryFolder folder;
    auto session = open_model(model, folder);
    const auto x = rng.normal(element_count(c.shape));
    auto out = session->run({{"x", HostTensor::from_values(c.shape, x)}}).at("y");

    // float64 reference, transform by transform.
    const int64_t rank = static_cast<int64_t>(c.shape.size());
    const int64_t axis = c.axis < 0 ? c.axis + rank : c.axis;
    const int64_t components = c.shape.back(), present = c.shape[axis];
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < axis; ++d) outer *= c.shape[d];
    for (int64_t d = axis + 1; d < rank - 1; ++d) inner *= c.shape[d];
    const bool irfft = c.inverse && c.onesided;
    const int64_t n = c.dft_length ? c.dft_length : irfft ? 2 * (present - 1) : present;
    const int64_t out_len = irfft ? n : c.onesided ? n / 2 + 1 : n;
    const int64_t out_components = irfft ? 1 : 2;
    std::vector<double> ref(outer * out_len * inner * out_components);
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t i = 0; i < inner; ++i) {
        std::vector<cd> signal(present);
        for (int64_t j = 0; j < present; ++j) {
          const int64_t base = ((o * present + j) * inner + i) * components;
          signal[j] = cd(x[base], components == 2 ? x[base + 1] : 0.0);
        }
        if (irfft) {  // Hermitian extension, imaginary parts of bins 0 and n/2 dropped (numpy.fft.irfft)
          std::vector<cd> full(n);
          for (int64_t k = 0; k <= n / 2; ++k) full[k] = signal[k];
          full[0] = full[0].real();
          if (n % 2 == 0) full[n / 2] = full[n / 2].real();
          for (int64_t k = n / 2 + 1; k < n; ++k) full[k] = std::conj(full[n - k]);
          signal = full;
        }
        const auto spectrum = dft(signal, n, c.inverse);
        for (int64_t k = 0; k < out_len; ++k) {
          const int64_t base = ((o * out_len + k) * inner + i) * out_components;
          ref[base] = spectrum[k].real();
          if (out_components == 2) ref[base + 1] = spectrum[k].imag();
        }
      }
    }
    const auto got = out.to_double();
    std::vector<float> got_f(got.begin(), got.end());
    const double e = rel_l2(got_f, ref);
    EXPECT_LE(e, 1e-6) << "DFT " << shape_string(c.shape) << " axis " << c.axis << " inverse " << c.inverse
                       << " onesided " << c.onesided << " dft_length " << c.dft_length;
    std::printf("DFT %-16s axis %2lld inv %d one %d n %5lld: rel L2 %.2e\n", shape_string(c.shape).c_str(),
                static_cast<long long>(c.axis), c.inverse, c.onesided, static_cast<long long>(n), e);
  }
}

TEST(SpectralOps, StftMatchesFloat64) {
  Random rng(test_seed());
  struct Case {
    int64_t batch, length, frame_length, step;
    bool window, onesided, complex_signal;
  };
  for (const Case& c : {Case{2, 1000, 64, 16, true, true, false}, Case{1, 400, 100, 25, false, true, false},
                        Case{2, 300, 33, 10, true, false, false}, Case{1, 200, 40, 7, true, false, true},
                        Case{1, 5000, 1021, 512, true, true, false}}) {
    onnx::ModelProto model = empty_model();
    auto* graph = model.mutable_graph();
    const int64_t components = c.complex_signal ? 2 : 1;
    add_tensor_value(graph->mutable_input(), "signal", onnx::TensorProto::FLOAT, {c.batch, c.length, components});
    add_untyped_shape_output(graph, "y");
    add_int_initializer(graph, "step", c.step);
    std::vector<float> window(c.frame_length);
    for (int64_t j = 0; j < c.frame_length; ++j) window[j] = 0.5f - 0.5f * std::cos(2 * M_PI * j / c.frame_length);
    std::vector<std::string> node_inputs = {"signal", "step"};
    if (c.window) {
      auto* w = graph->add_initializer();
      w->set_name("window");
      w->set_data_type(onnx::TensorProto::FLOAT);
      w->add_dims(c.frame_length);
      for (float v : window) w->add_float_data(v);
      node_inputs.push_back("window");
    } else {
      add_int_initializer(graph, "frame_length", c.frame_length);
      node_inputs.push_back("");
      node_inputs.push_back("frame_length");
    }
    auto* node = add_node(graph, "STFT", node_inputs, {"y"}, "stft");
    auto* a = node->add_attribute();
    a->set_name("onesided"), a->set_type(onnx::AttributeProto::INT), a->set_i(c.onesided);
    TemporaryFolder folder;
    auto session = open_model(model, folder);
    const auto x = rng.normal(c.batch * c.length * components);
    auto out = session->run({{"signal", HostTensor::from_values({c.batch, c.length, components}, x)}}).at("y");
    const int64_t frames = (c.length - c.frame_length) / c.step + 1;
    const int64_t bins = c.onesided ? c.frame_length / 2 + 1 : c.frame_length;
    ASSERT_EQ(out.shape(), (Shape{c.batch, frames, bins, 2}));
    std::vector<double> ref;
    for (int64_t b = 0; b < c.batch; ++b) {
      for (int64_t f = 0; f < frames; ++f) {
        std::vector<cd> frame(c.frame_length);
        for (int64_t j = 0; j < c.frame_length; ++j) {
          const int64_t at = (b * c.length + f * c.step + j) * components;
          frame[j] = cd(x[at], c.complex_signal ? x[at + 1] : 0.0) * (c.window ? double(window[j]) : 1.0);
        }
        const auto spectrum = dft(frame, c.frame_length, false);
        for (int64_t k = 0; k < bins; ++k) ref.push_back(spectrum[k].real()), ref.push_back(spectrum[k].imag());
      }
    }
    const auto got = out.to_double();
    const double e = rel_l2(std::vector<float>(got.begin(), got.end()), ref);
    EXPECT_LE(e, 1e-6) << "STFT frame " << c.frame_length << " step " << c.step;
    std::printf("STFT frame %4lld step %3lld window %d onesided %d: rel L2 %.2e\n", static_cast<long long>(c.frame_length),
                static_cast<long long>(c.step), c.window, c.onesided, e);
  }
}

TEST(SpectralOps, InvalidNodesNameTheNode) {
  // The node's name and what is wrong (from the op, or from shape inference when it sees it first).
  auto expect_error = [](const onnx::ModelProto& model, const std::string& input, const Shape& shape,
                         const std::string& needle, const std::string& alternative) {
    TemporaryFolder folder;
    try {
      auto session = open_model(model, folder);
      session->run({{input, HostTensor(DType::f32, shape)}});
      ADD_FAILURE() << "no error for " << needle;
    } catch (const ModelError& e) {
      EXPECT_NE(std::string(e.what()).find("'bad'"), std::string::npos) << e.what();
      const std::string what = e.what();
      EXPECT_TRUE(what.find(needle) != std::string::npos || what.find(alternative) != std::string::npos) << what;
    }
  };
  {  // frame_length longer than the signal
    onnx::ModelProto model = empty_model();
    auto* graph = model.mutable_graph();
    add_tensor_value(graph->mutable_input(), "s", onnx::TensorProto::FLOAT, {1, 50, 1});
    add_untyped_shape_output(graph, "y");
    add_int_initializer(graph, "step", 4);
    add_int_initializer(graph, "len", 64);
    add_node(graph, "STFT", {"s", "step", "", "len"}, {"y"}, "bad");
    expect_error(model, "s", {1, 50, 1}, "frame_length", "inputs too small");
  }
  {  // non-positive dft_length
    onnx::ModelProto model = empty_model();
    auto* graph = model.mutable_graph();
    add_tensor_value(graph->mutable_input(), "x", onnx::TensorProto::FLOAT, {1, 8, 1});
    add_untyped_shape_output(graph, "y");
    add_int_initializer(graph, "n", 0);
    add_node(graph, "DFT", {"x", "n"}, {"y"}, "bad");
    expect_error(model, "x", {1, 8, 1}, "dft_length", "dft_length");
  }
}

}  // namespace
}  // namespace onda::test
