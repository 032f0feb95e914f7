#include "kernels/rnn/rnn_time_chunks.h"

#include <fmt/format.h>

#include <algorithm>

#include "gpu/gpu_error.h"
#include "kernels/common/binding_window.h"
#include "kernels/layout/index_map.h"
#include "kernels/layout/transpose.h"

namespace onda::kernels::rnn {
namespace {

Tensor scratch(gpu::BufferPool& pool, DType dtype, Shape shape) {
  return Tensor::empty(pool, dtype, std::move(shape));
}

// Timesteps per chunk: as many as keep X, Y and the projection of a chunk within one binding each.
// Throws DeviceLimitError when one step (or the state, the weights) alone does not fit.
int64_t steps_per_chunk(const KernelContext& k, const RnnDims& e, DType dtype) {
  const int64_t in_dtype = window_capacity(k.gpu, dtype), in_f32 = window_capacity(k.gpu, DType::f32);
  const int64_t gh = e.gates * e.hidden;
  const struct {
    int64_t elements, capacity;
    const char* what;
  } per_step[] = {{e.batch * e.input, in_dtype, "X"},
                  {e.batch * e.hidden, in_dtype, "Y"},
                  {e.batch * gh, in_f32, "the input projection"}},
    whole[] = {{5 * e.batch * e.hidden, in_f32, "the recurrent state"},
               {e.hidden * gh + 2 * gh + 3 * e.hidden, in_f32, "R^T and the biases"},
               {e.input * gh, in_f32, "W^T"}};
  int64_t steps = e.seq;
  for (const auto& b : per_step) {
    if (b.elements > b.capacity) {
      throw gpu::DeviceLimitError(fmt::format(
          "RNN: one timestep of {} ({} elements, batch {}) exceeds the storage binding limit of {} bytes",
          b.what, b.elements, e.batch, k.gpu.limits().maxStorageBufferBindingSize));
    }
    steps = std::min(steps, b.capacity / std::max<int64_t>(b.elements, 1));
  }
  for (const auto& b : whole) {
    if (b.elements > b.capacity) {
      throw gpu::DeviceLimitError(
          fmt::format("RNN: {} ({} elements) exceeds the storage binding limit of {} bytes", b.what,
                      b.elements, k.gpu.limits().maxStorageBufferBindingSize));
    }
  }
  return std::max<int64_t>(steps, 1);
}

// Direction `dir` of `spec` as a one-direction, time-major layer.
RnnSpec direction_spec(const RnnSpec& spec, int64_t dir) {
  RnnSpec one = spec;
  one.layout = 0;
  one.y_directions_inner = false;
  if (spec.direction == Direction::bidirectional)
    one.direction = dir == 0 ? Direction::forward : Direction::reverse;
  if (!spec.activations.empty()) {
    const int per_direction = activations_per_direction(spec.cell);
    one.activations.assign(spec.activations.begin() + dir * per_direction,
                           spec.activations.begin() + (dir + 1) * per_direction);
  }
  return one;
}

}  // namespace

bool rnn_needs_time_chunks(const KernelContext& k, const RnnInputs& in, const RnnOutputs& out) {
  return !fits_one_binding(k.gpu, in.x) || (out.y.defined() && !fits_one_binding(k.gpu, out.y));
}

RnnTimeChunks::RnnTimeChunks(const KernelContext& k, gpu::CommandRecorder& recorder,
                             gpu::BufferPool& weights_pool, const RnnSpec& spec,
                             const std::shared_ptr<const RnnWeights>& weights, const RnnProblem& problem,
                             const RnnOptions& options)
    : k_(k), spec_(spec) {
  if (problem.sequence_lens) {
    throw gpu::DeviceLimitError(
        fmt::format("RNN: X {} or Y exceeds the storage binding limit of {} bytes, and a layer with "
                    "sequence_lens is not split in time",
                    shape_string(problem.x_shape), k.gpu.limits().maxStorageBufferBindingSize));
  }
  if (!weights->r.defined()) throw std::invalid_argument("RNN in chunks of time: the weights lack R");
  const bool time_major = spec.layout == 0;
  d_.seq = problem.x_shape[time_major ? 0 : 1];
  d_.batch = problem.x_shape[time_major ? 1 : 0];
  d_.input = problem.x_shape[2];
  d_.hidden = spec.hidden_size;
  d_.dirs = spec.num_directions();
  d_.gates = gate_count(spec.cell);
  steps_ = steps_per_chunk(k, d_, problem.x_dtype);
  chunks_ = (d_.seq + steps_ - 1) / steps_;
  for (int64_t dir = 0; dir < d_.dirs; ++dir) {
    const RnnSpec one = direction_spec(spec, dir);
    const auto slice = [&](const Tensor& t) { return t.defined() ? t.slice_outer(dir, dir + 1) : Tensor(); };
    const std::shared_ptr<const RnnWeights> one_weights =
        d_.dirs == 1 ? weights
                     : std::make_shared<const RnnWeights>(
                           prepare_rnn_weights(k, recorder, weights_pool, one, slice(weights->w),
                                               slice(weights->r), slice(weights->b), slice(weights->p)));
    const auto layer = [&](int64_t steps) {
      RnnProblem chunk;
      chunk.x_shape = {steps, d_.batch, d_.input};
      chunk.x_dtype = problem.x_dtype;
      chunk.y = problem.y;
      chunk.y_h = true;
      chunk.y_c = spec.cell == CellType::lstm;
      return std::make_unique<RnnKernel>(k, recorder, weights_pool, one, one_weights, chunk, options);
    };
    DirectionLayer& direction = directions_.emplace_back();
    direction.whole = layer(steps_);
    if (d_.seq % steps_ != 0) direction.tail = layer(d_.seq % steps_);
  }
}

void RnnTimeChunks::record(gpu::CommandRecorder& recorder, gpu::BufferPool& pool, const RnnInputs& in,
                           const RnnOutputs& out) const {
  const KernelContext& k = k_;
  const RnnDims& e = d_;
  const bool time_major = spec_.layout == 0;
  const DType dtype = in.x.dtype();
  const int64_t rows = e.batch * e.hidden;  // one direction's h
  const bool lstm = spec_.cell == CellType::lstm;

  // Everything time-major ([S, B, I], [S, D, B, H], [D, B, H]); layout 1 permuted in and out.
  const Shape state_shape = {e.dirs, e.batch, e.hidden};
  const auto to_time_major = [&](const Tensor& t, const Shape& shape, std::vector<int64_t> perm) {
    if (time_major || !t.defined()) return t;
    Tensor tm = scratch(pool, t.dtype(), shape);
    record_transpose(k, recorder, t, std::move(perm), tm);
    return tm;
  };
  const Tensor x = to_time_major(in.x, {e.seq, e.batch, e.input}, {1, 0, 2});
  const Tensor initial_h = to_time_major(in.initial_h, state_shape, {1, 0, 2});
  const Tensor initial_c = to_time_major(in.initial_c, state_shape, {1, 0, 2});
  const auto output_time_major = [&](const Tensor& t, const Shape& shape) {
    return time_major || !t.defined() ? t : scratch(pool, t.dtype(), shape);
  };
  // Y [S, B, D, H] (y_directions_inner) is written time-major too, and permuted at the end.
  const Tensor y = spec_.y_directions_inner && out.y.defined()
                       ? scratch(pool, dtype, {e.seq, e.dirs, e.batch, e.hidden})
                       : output_time_major(out.y, {e.seq, e.dirs, e.batch, e.hidden});
  const Tensor y_h = output_time_major(out.y_h, state_shape);
  const Tensor y_c = output_time_major(out.y_c, state_shape);

  for (int64_t dir = 0; dir < e.dirs; ++dir) {
    const DirectionLayer& layer = directions_[static_cast<size_t>(dir)];
    const bool reverse =
        spec_.direction == Direction::reverse || (spec_.direction == Direction::bidirectional && dir == 1);
    const auto slice = [&](const Tensor& t) { return t.defined() ? t.slice_outer(dir, dir + 1) : Tensor(); };
    // The state a chunk ends with is the next one's initial state (two scratch states in turn).
    const Tensor h_states[2] = {scratch(pool, dtype, {1, e.batch, e.hidden}),
                                scratch(pool, dtype, {1, e.batch, e.hidden})};
    Tensor c_states[2];
    if (lstm) {
      for (Tensor& c : c_states) c = scratch(pool, dtype, {1, e.batch, e.hidden});
    }
    Tensor h = slice(initial_h), c = slice(initial_c);
    for (int64_t n = 0; n < chunks_; ++n) {
      const int64_t i = reverse ? chunks_ - 1 - n : n;
      const int64_t s0 = i * steps_, s1 = std::min(e.seq, s0 + steps_);
      const bool last = n == chunks_ - 1;
      RnnInputs chunk_in;
      chunk_in.x = x.slice_outer(s0, s1);
      chunk_in.initial_h = h;
      chunk_in.initial_c = c;
      RnnOutputs chunk_out;
      if (y.defined()) {
        chunk_out.y = e.dirs == 1 ? y.slice_outer(s0, s1)
                                  : scratch(pool, dtype, {s1 - s0, 1, e.batch, e.hidden});
      }
      chunk_out.y_h = last && y_h.defined() ? slice(y_h) : h_states[n % 2];
      if (lstm) chunk_out.y_c = last && y_c.defined() ? slice(y_c) : c_states[n % 2];
      (s1 - s0 == steps_ ? *layer.whole : *layer.tail).record(recorder, pool, chunk_in, chunk_out);
      if (y.defined() && e.dirs > 1) {
        // Y[s0 + t, dir] = chunk Y[t, 0].
        IndexMap map;
        map.dims = {{s1 - s0, e.dirs * rows, 0, 1, s1 - s0, rows}, {rows, 1, 0, 1, rows, 1}};
        map.out_base = (s0 * e.dirs + dir) * rows;
        record_index_map(k, recorder, chunk_out.y, y, map, "rnn chunk Y");
      }
      h = chunk_out.y_h;
      c = chunk_out.y_c;
    }
  }
  if (spec_.y_directions_inner && out.y.defined())
    record_transpose(k, recorder, y, std::vector<int64_t>{0, 2, 1, 3}, out.y);
  if (!time_major) {
    if (out.y.defined()) record_transpose(k, recorder, y, std::vector<int64_t>{2, 0, 1, 3}, out.y);
    if (out.y_h.defined()) record_transpose(k, recorder, y_h, std::vector<int64_t>{1, 0, 2}, out.y_h);
    if (out.y_c.defined()) record_transpose(k, recorder, y_c, std::vector<int64_t>{1, 0, 2}, out.y_c);
  }
}

}  // namespace onda::kernels::rnn
