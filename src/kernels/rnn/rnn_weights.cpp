// prepare_rnn_weights (rnn_kernel.h): W^T, R^T, the biases and the peepholes in the layouts the
// recurrent kernels read.
#include <fmt/format.h>

#include <stdexcept>

#include "kernels/rnn/rnn_gather.h"
#include "kernels/rnn/rnn_kernel.h"
#include "kernels/rnn/rnn_uniforms.h"

namespace onda::kernels::rnn {
namespace {

// The spec's own consistency and W / R / B / P against it.
void check_weights(const RnnSpec& spec, const Tensor& w, const Tensor& r, const Tensor& b, const Tensor& p) {
  const int64_t dirs = spec.num_directions(), hidden = spec.hidden_size, gates = gate_count(spec.cell);
  if (hidden <= 0) throw std::invalid_argument(fmt::format("hidden_size must be positive, got {}", hidden));
  if (spec.layout != 0 && spec.layout != 1) {
    throw std::invalid_argument(fmt::format("layout must be 0 or 1, got {}", spec.layout));
  }
  if (spec.y_directions_inner && spec.layout != 0)
    throw std::invalid_argument("Y as [seq, batch, directions, hidden] needs layout 0");
  if (!spec.activations.empty() &&
      spec.activations.size() != static_cast<size_t>(activations_per_direction(spec.cell) * dirs)) {
    throw std::invalid_argument(fmt::format("{} activations given, expected {}", spec.activations.size(),
                                            activations_per_direction(spec.cell) * dirs));
  }
  if (spec.input_forget && spec.cell != CellType::lstm)
    throw std::invalid_argument("input_forget is for LSTM only");
  if (spec.clip && !(*spec.clip >= 0.0f)) throw std::invalid_argument("clip must be non-negative");
  if (!w.defined() || !r.defined()) throw std::invalid_argument("W and R are required");
  require_float(w, "W");
  require_float(r, "R");
  if (w.rank() != 3)
    throw std::invalid_argument(fmt::format("W must be 3-D, got {}", shape_string(w.shape())));
  const int64_t input = w.shape()[2];
  require_shape(w, {dirs, gates * hidden, input}, "W");
  require_shape(r, {dirs, gates * hidden, hidden}, "R");
  if (b.defined()) {
    require_float(b, "B");
    require_shape(b, {dirs, 2 * gates * hidden}, "B");
  }
  if (p.defined()) {
    if (spec.cell != CellType::lstm) throw std::invalid_argument("P (peepholes) is for LSTM only");
    require_float(p, "P");
    require_shape(p, {dirs, 3 * hidden}, "P");
  }
}

}  // namespace

RnnWeights prepare_rnn_weights(const KernelContext& k, gpu::CommandRecorder& recorder, gpu::BufferPool& pool,
                               const RnnSpec& spec, const Tensor& w, const Tensor& r, const Tensor& b,
                               const Tensor& p) {
  check_weights(spec, w, r, b, p);
  const int64_t dirs = spec.num_directions(), hidden = spec.hidden_size, gates = gate_count(spec.cell);
  const int64_t input = w.shape()[2];
  RnnWeights out;
  out.input_size = input;
  out.hidden_size = hidden;
  out.directions = dirs;
  out.has_peepholes = p.defined();
  const int64_t gh = gates * hidden;
  // W^T of all directions side by side, W^T[i][d G H + n] = W[d][n][i], so one GEMM projects every
  // direction.
  out.w = w;
  out.r = r;
  out.b = b;
  out.p = p;
  out.w_t = Tensor::empty(pool, DType::f32, {input, dirs * gh});
  record_gather(k, recorder, w, out.w_t, 0, {input, dirs, gh}, {1, gh * input, input}, "rnn_transpose_w");
  const int64_t rt_size = dirs * hidden * gh;
  out.bias_offset = u32(rt_size, "R size");
  out.peephole_offset = u32(rt_size + dirs * 2 * gh, "parameter size");
  out.params =
      Tensor::empty(pool, DType::f32, {rt_size + dirs * 2 * gh + (p.defined() ? dirs * 3 * hidden : 0)});
  // R^T[d][k][n] = R[d][n][k].
  record_gather(k, recorder, r, out.params, 0, {dirs, hidden, gh}, {gh * hidden, 1, hidden},
                "rnn_transpose_r");
  if (b.defined()) {
    record_gather(k, recorder, b, out.params, out.bias_offset, {1, dirs, 2 * gh}, {0, 2 * gh, 1}, "rnn_bias");
  } else {
    record_zero(recorder, out.params, out.bias_offset, dirs * 2 * gh);
  }
  if (p.defined()) {
    record_gather(k, recorder, p, out.params, out.peephole_offset, {1, dirs, 3 * hidden}, {0, 3 * hidden, 1},
                  "rnn_peepholes");
  }
  return out;
}

}  // namespace onda::kernels::rnn
