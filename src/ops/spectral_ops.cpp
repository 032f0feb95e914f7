// ONNX DFT (opset 17: axis attribute; opset 20: axis input) and STFT (opset 17) onto the FFT
// engine. The transform axis is addressed through strides (no transpose); STFT frames are an inner
// dimension with stride frame_step and the window is applied on load (no framed copy). Each node
// keeps its FftKernel (plan, pipelines, twiddle and chirp tables) across runs.
#include <fmt/format.h>

#include "graph/model_error.h"
#include "kernels/fft/fft_kernel.h"
#include "kernels/layout/pad.h"
#include "kernels/layout/slice.h"
#include "ops/op_inputs.h"
#include "ops/op_registry.h"

namespace onda::ops {
namespace {

namespace fft = kernels::fft;

struct SpectralState {
  std::string key;  // FftDescription::summary() of the kernel below
  std::unique_ptr<fft::FftKernel> kernel;
};

const fft::FftKernel& kernel_for(OpContext& context, const fft::FftDescription& d) {
  auto& state = *context.node_state;
  if (!state) state = std::make_shared<SpectralState>();
  auto s = std::static_pointer_cast<SpectralState>(state);
  const std::string key = d.summary();
  if (!s->kernel || s->key != key) {
    s->kernel = std::make_unique<fft::FftKernel>(context.kernels, context.persistent_pool, d);
    s->key = key;
  }
  return *s->kernel;
}

// A real tensor [..., 1] as complex [..., 2] with zero imaginary parts (for full-spectrum transforms
// of real input, which the FFT engine runs as complex ones).
Tensor real_to_complex(OpContext& context, const Tensor& real) {
  Shape out = real.shape();
  out.back() = 2;
  Tensor complex = context.allocate(real.dtype(), out);
  std::vector<int64_t> pads(2 * out.size(), 0);
  pads[2 * out.size() - 1] = 1;
  kernels::record_pad(context.kernels, context.recorder, real, pads, kernels::PadMode::Constant, 0.0, complex);
  return complex;
}

std::vector<Value> dft(const Node& node, OpContext& context, const std::vector<Value>& inputs) {
  const Value& x = inputs.at(0);
  const Shape& shape = x.shape();
  const int64_t rank = static_cast<int64_t>(shape.size());
  if (rank < 2 || (shape.back() != 1 && shape.back() != 2)) {
    throw ModelError(fmt::format("{}: input must end in a dimension of 1 (real) or 2 (complex), got {}", node.describe(),
                                 shape_to_string(shape)));
  }
  if (!is_float(x.dtype())) throw ModelError(node.describe() + ": float16 or float32 input required");
  int64_t axis = node.attribute_int("axis", 1);
  if (context.opset >= 20) {
    axis = -2;
    if (const Value& a = input_or_empty(inputs, 2); a.defined()) axis = constant_ints(node, a, "axis").at(0);
  }
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank - 1) {
    throw ModelError(fmt::format("{}: axis must name a signal dimension (not the last), got {}", node.describe(), axis));
  }
  const bool inverse = node.attribute_int("inverse", 0) != 0;
  const bool onesided = node.attribute_int("onesided", 0) != 0;
  const bool real_input = shape.back() == 1;
  const int64_t present = shape[axis];
  int64_t n = present;
  if (const Value& length = input_or_empty(inputs, 1); length.defined()) {
    n = constant_ints(node, length, "dft_length").at(0);
    if (n <= 0) throw ModelError(fmt::format("{}: dft_length must be positive, got {}", node.describe(), n));
  } else if (inverse && onesided) {
    n = 2 * (present - 1);  // irfft's default length
  }
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= shape[d];
  for (int64_t d = axis + 1; d < rank - 1; ++d) inner *= shape[d];

  fft::FftDescription d;
  d.length = n;
  d.outer_count = outer;
  d.inner_count = inner;
  d.direction = inverse ? fft::FftDirection::inverse : fft::FftDirection::forward;
  d.normalize = inverse;
  d.dtype = x.dtype();
  Tensor input = context.to_device(x);
  Shape out_shape = shape;
  int64_t out_axis = n;
  bool slice_onesided = false;
  if (inverse && onesided) {
    if (real_input) throw ModelError(node.describe() + ": inverse onesided DFT needs complex (Hermitian) input");
    if (present != n / 2 + 1) {
      throw ModelError(fmt::format("{}: inverse onesided DFT of length {} needs {} bins, got {}", node.describe(), n,
                                   n / 2 + 1, present));
    }
    d.domain = fft::FftDomain::complex_to_real;
    out_shape.back() = 1;
  } else if (!inverse && onesided && real_input) {
    d.domain = fft::FftDomain::real_to_complex;
    d.input_length = present;
    out_axis = n / 2 + 1;
    out_shape.back() = 2;
  } else {
    // Complex transforms; real input is widened to complex, a onesided complex result is sliced.
    if (real_input) input = real_to_complex(context, input);
    d.domain = fft::FftDomain::complex;
    d.input_length = present;
    out_shape.back() = 2;
    slice_onesided = onesided;
  }
  out_shape[axis] = out_axis;
  const int in_components = d.domain == fft::FftDomain::real_to_complex ? 1 : 2;
  const int out_components = d.domain == fft::FftDomain::complex_to_real ? 1 : 2;
  d.input = fft::contiguous_layout(present, inner, in_components);
  d.output = fft::contiguous_layout(out_axis, inner, out_components);
  Value y;
  rethrow_naming_node(node, [&] {
    y.device = context.allocate(x.dtype(), out_shape);
    kernel_for(context, d).record(context.recorder, input, y.device);
    if (slice_onesided) {
      const int64_t zero = 0, bins = n / 2 + 1, one = 1;
      const auto dims = kernels::plan_slice(out_shape, std::span<const int64_t>(&zero, 1),
                                            std::span<const int64_t>(&bins, 1), std::span<const int64_t>(&axis, 1),
                                            std::span<const int64_t>(&one, 1));
      Tensor sliced = context.allocate(x.dtype(), kernels::slice_output_shape(dims));
      kernels::record_slice(context.kernels, context.recorder, y.device, dims, sliced);
      y.device = sliced;
    }
  });
  return {y};
}

std::vector<Value> stft(const Node& node, OpContext& context, const std::vector<Value>& inputs) {
  const Value& signal = inputs.at(0);
  const Shape& shape = signal.shape();
  if (shape.size() != 3 || (shape[2] != 1 && shape[2] != 2)) {
    throw ModelError(fmt::format("{}: signal must be [batch, length, 1 or 2], got {}", node.describe(), shape_to_string(shape)));
  }
  if (!is_float(signal.dtype())) throw ModelError(node.describe() + ": float16 or float32 signal required");
  const int64_t step = constant_ints(node, input_or_empty(inputs, 1), "frame_step").at(0);
  if (step <= 0) throw ModelError(fmt::format("{}: frame_step must be positive, got {}", node.describe(), step));
  const Value& window = input_or_empty(inputs, 2);
  int64_t frame_length = 0;
  if (const Value& fl = input_or_empty(inputs, 3); fl.defined()) {
    frame_length = constant_ints(node, fl, "frame_length").at(0);
  } else if (window.defined()) {
    frame_length = window.shape().empty() ? 0 : window.shape()[0];
  } else {
    throw ModelError(node.describe() + ": needs a window or a frame_length");
  }
  if (window.defined() && (window.shape().size() != 1 || window.shape()[0] != frame_length)) {
    throw ModelError(fmt::format("{}: window of shape {} does not match frame_length {}", node.describe(),
                                 shape_to_string(window.shape()), frame_length));
  }
  const int64_t length = shape[1];
  if (frame_length <= 0 || frame_length > length) {
    throw ModelError(fmt::format("{}: frame_length {} must be in [1, signal length {}]", node.describe(), frame_length, length));
  }
  const bool onesided = node.attribute_int("onesided", 1) != 0;
  const bool real_input = shape[2] == 1;
  if (onesided && !real_input) throw ModelError(node.describe() + ": onesided=1 requires a real signal");
  const int64_t frames = (length - frame_length) / step + 1;
  const int64_t bins = onesided ? frame_length / 2 + 1 : frame_length;

  Tensor input = context.to_device(signal);
  if (real_input && !onesided) input = real_to_complex(context, input);
  const int components = onesided ? 1 : 2;
  fft::FftDescription d;
  d.length = frame_length;
  d.outer_count = shape[0];
  d.inner_count = frames;
  d.domain = onesided ? fft::FftDomain::real_to_complex : fft::FftDomain::complex;
  d.direction = fft::FftDirection::forward;
  d.dtype = signal.dtype();
  d.windowed = window.defined();
  // Frame f of batch b starts at sample f * step: frames are an inner dimension of stride step.
  d.input.offset = 0;
  d.input.outer_stride = length * components;
  d.input.inner_stride = step * components;
  d.input.axis_stride = components;
  d.output.offset = 0;
  d.output.outer_stride = frames * bins * 2;
  d.output.inner_stride = bins * 2;
  d.output.axis_stride = 2;
  Value y;
  rethrow_naming_node(node, [&] {
    y.device = context.allocate(signal.dtype(), {shape[0], frames, bins, 2});
    Tensor window_tensor;
    if (window.defined()) {
      window_tensor = context.to_device(window);
      if (window_tensor.dtype() != signal.dtype()) throw std::invalid_argument("window and signal types differ");
    }
    kernel_for(context, d).record(context.recorder, input, y.device, window.defined() ? &window_tensor : nullptr);
  });
  return {y};
}

}  // namespace

void register_spectral_ops(std::vector<OpEntry>& ops) {
  ops.push_back({"", "DFT", 17, dft, "Stockham / four-step / Bluestein FFT, any length, any axis (strided), real/complex/onesided"});
  ops.push_back({"", "STFT", 17, stft, "framing and window fused into the FFT loads"});
}

}  // namespace onda::ops
