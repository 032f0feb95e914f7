// RnnKernel's strategies: how each kernel plan_rnn can choose is recorded, from the run's bindings
// (RnnKernel::bind). One dispatch for every step (resident, cooperative / persistent vec4, row
// sequence, whole sequence), or per step (the GEMM step; the vec4, tiled and dot step kernels).
#include "gpu/run_guards.h"
#include "kernels/rnn/rnn_run.h"

namespace onda::kernels::rnn {

// X W^T of every step (chunk_index 0), or of chunk `chunk_index` of the steps, per direction.
void RnnKernel::record_projection(gpu::CommandRecorder& recorder, Run& run, int64_t chunk_index) const {
  const RnnDims& d = d_;
  const int64_t gh = d.gates * d.hidden;
  gemm::GemmTensors t;
  if (!chunked_) {
    t.a = run.in.x.reshape({d.seq * d.batch, d.input});
    t.b = weights_->w_t;
    t.out = run.xw.reshape({d.seq * d.batch, d.dirs * gh});
    projection_->record(recorder, t);
    return;
  }
  const int64_t s0 = chunk_index * chunk_, s1 = std::min(d.seq, s0 + chunk_);
  const gemm::Gemm& projection = s1 - s0 == chunk_ ? *projection_ : *projection_tail_;
  for (int64_t dir = 0; dir < d.dirs; ++dir) {
    const bool reverse = spec_.direction == Direction::reverse || dir == 1;
    const int64_t t0 = reverse ? d.seq - s1 : s0;
    run.u.xw_base[2 + dir] = static_cast<uint32_t>(t0);
    t.a = run.x_time_major.reshape({d.seq * d.batch, d.input})
              .slice_outer(t0 * d.batch, (t0 + s1 - s0) * d.batch);
    t.b = weights_->w.slice_outer(dir, dir + 1).reshape({gh, d.input});
    const int64_t first = dir * chunk_ * d.batch * gh;
    t.out = run.xw.slice_outer(first, first + (s1 - s0) * d.batch * gh).reshape({(s1 - s0) * d.batch, gh});
    projection.record(recorder, t);
  }
}

// The kernels that run every step in one dispatch: the projection of all steps first, then h
// ping-pongs between the first two state vectors inside the kernel.
void RnnKernel::start_sequence(gpu::CommandRecorder& recorder, Run& run) const {
  record_projection(recorder, run, 0);
  const uint32_t dbh = static_cast<uint32_t>(d_.dirs * d_.batch * d_.hidden);
  run.u.dims[0] = 0;
  run.u.st[0] = run.st0;
  run.u.st[1] = run.st0 + dbh;
  run.u.st[2] = run.st0 + 2 * dbh;
  run.u.st[3] = run.st0;
  run.u.wts[3] = 0;
}

void RnnKernel::record_resident(gpu::CommandRecorder& recorder, Run& run) const {
  start_sequence(recorder, run);
  recorder.dispatch(*first_.pipeline, run.bindings, &run.u, sizeof run.u, first_.groups, "rnn_resident");
}

// The kernels whose workgroups trade h through an exchange (rnn_exchange.wgsl): every step in one
// dispatch, whose grid must be resident all at once (probed when planned). A guard turns a grid that
// was not resident after all into an error (exchange_guard_).
void RnnKernel::record_exchange(gpu::CommandRecorder& recorder, gpu::BufferPool& pool, Run& run,
                                const char* name) const {
  start_sequence(recorder, run);
  const uint64_t exchange_words = d_.exchange_words();
  // The exchange, cleared: 0 marks an h not yet published.
  const Tensor exchange = Tensor::empty(pool, DType::f32, {static_cast<int64_t>(exchange_words)});
  recorder.clear(exchange.buffer(), exchange.byte_offset(), exchange_words * 4);
  run.u.st[3] = exchange.element_offset(k_.gpu);
  std::vector<gpu::BufferBinding> bindings = run.bindings;
  bindings.push_back(exchange.binding(k_.gpu));
  recorder.dispatch(*first_.pipeline, bindings, &run.u, sizeof run.u, first_.groups, name);
  // The flag word a wait sets when it gives up: a GpuError when the run's owner checks its guards,
  // not just NaN outputs.
  k_.gpu.guards().guard(recorder, exchange.buffer(), exchange.byte_offset(), exchange_guard_);
}

void RnnKernel::record_row_sequence(gpu::CommandRecorder& recorder, Run& run) const {
  start_sequence(recorder, run);
  std::vector<gpu::BufferBinding> bindings = run.bindings;
  if (plan_.rows.unit_vector == 4) bindings.push_back(weights_->params.binding(k_.gpu));  // weights4
  recorder.dispatch(*first_.pipeline, bindings, &run.u, sizeof run.u, first_.groups, "rnn_rows");
}

void RnnKernel::record_whole_sequence(gpu::CommandRecorder& recorder, Run& run) const {
  start_sequence(recorder, run);
  recorder.dispatch(*first_.pipeline, run.bindings, &run.u, sizeof run.u, first_.groups, "rnn_sequence");
}

// Per step: gates[D, B, G H] = H_prev R^T on the GEMM core (gates_product_), then the cell per
// (direction, row, unit) from the gates buffer.
void RnnKernel::record_gemm_steps(gpu::CommandRecorder& recorder, gpu::BufferPool& pool, Run& run) const {
  const RnnDims& d = d_;
  const int64_t dbh = d.dirs * d.batch * d.hidden, gh = d.gates * d.hidden;
  const Tensor gates = Tensor::empty(pool, DType::f32, {d.dirs * d.batch * gh});
  const Tensor r_t = weights_->params.slice_outer(0, d.dirs * d.hidden * gh).reshape({d.dirs, d.hidden, gh});
  std::vector<gpu::BufferBinding> bindings = run.bindings;
  bindings.push_back(gates.binding(k_.gpu));
  run.u.wts[3] = gates.element_offset(k_.gpu);
  for (int64_t step = 0; step < d.seq; ++step) {
    if (step % chunk_ == 0) record_projection(recorder, run, step / chunk_);
    const int64_t h_in = (step % 2) * dbh;
    gemm::GemmTensors t;
    t.a = run.state.slice_outer(h_in, h_in + dbh).reshape({d.dirs, d.batch, d.hidden});
    t.b = r_t;
    t.out = gates.reshape({d.dirs, d.batch, gh});
    gates_product_->record(recorder, t);
    run.u.dims[0] = static_cast<uint32_t>(step);
    run.u.st[0] = run.st0 + static_cast<uint32_t>(h_in);
    run.u.st[1] = run.st0 + static_cast<uint32_t>(((step + 1) % 2) * dbh);
    run.u.st[2] = run.st0 + static_cast<uint32_t>(2 * dbh);
    recorder.dispatch(*first_.pipeline, bindings, &run.u, sizeof run.u, first_.groups, "rnn_step_gates");
  }
}

// Per step, one dispatch of the fused cell (vec4, tiled or dot step kernel), or GRU
// (linear_before_reset=0)'s two: z and r (with r (.) H_prev), then h.
void RnnKernel::record_steps(gpu::CommandRecorder& recorder, Run& run) const {
  const int64_t dbh = d_.dirs * d_.batch * d_.hidden;
  StepUniforms& u = run.u;
  for (int64_t step = 0; step < d_.seq; ++step) {
    if (step % chunk_ == 0) record_projection(recorder, run, step / chunk_);
    const uint32_t h_in = run.st0 + static_cast<uint32_t>((step % 2) * dbh);
    u.dims[0] = static_cast<uint32_t>(step);
    u.st[0] = h_in;
    u.st[1] = run.st0 + static_cast<uint32_t>(((step + 1) % 2) * dbh);
    u.st[2] = run.st0 + static_cast<uint32_t>(2 * dbh);
    u.st[3] = h_in;
    u.wts[3] = 0;
    if (!plan_.two_phase) {
      recorder.dispatch(*first_.pipeline, run.bindings, &u, sizeof u, first_.groups, "rnn_step");
      continue;
    }
    recorder.dispatch(*first_.pipeline, run.bindings, &u, sizeof u, first_.groups, "rnn_step_zr");
    u.st[3] = u.outs[3];
    u.wts[3] = u32(2 * d_.hidden, "column");
    recorder.dispatch(*second_.pipeline, run.bindings, &u, sizeof u, second_.groups, "rnn_step_h");
  }
}

}  // namespace onda::kernels::rnn
