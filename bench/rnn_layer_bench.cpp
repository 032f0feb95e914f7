// Timing of the recurrent kernel on audio-model-like shapes (build/bench_rnn_layer):
// whole-layer wall time per run and per step, and the dispatch count.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>

#include "gpu/command_recorder.h"
#include "gtest_bench.h"
#include "harness.h"
#include "kernels/rnn/rnn_kernel.h"

namespace onda::test {
namespace {

using kernels::rnn::CellType;
using kernels::rnn::Direction;

TEST(RnnBench, LayerTime) {
  auto& g = gpu();
  Random rng(test_seed());
  struct Shape5 {
    CellType cell;
    bool lbr;
    int64_t seq, batch, input, hidden;
  };
  for (const Shape5 sh :
       {Shape5{CellType::lstm, false, 100, 1, 257, 256}, Shape5{CellType::gru, true, 100, 1, 257, 256},
        Shape5{CellType::gru, false, 100, 1, 257, 256}, Shape5{CellType::lstm, false, 50, 8, 128, 512}}) {
    kernels::rnn::RnnSpec spec;
    spec.cell = sh.cell;
    spec.linear_before_reset = sh.lbr;
    spec.direction = Direction::bidirectional;
    spec.hidden_size = sh.hidden;
    const int64_t G = kernels::rnn::gate_count(sh.cell), H = sh.hidden;
    kernels::rnn::RnnInputs in;
    in.x = upload_floats(rng.uniform(sh.seq * sh.batch * sh.input, -1, 1), DType::f32,
                         {sh.seq, sh.batch, sh.input});
    in.w = upload_floats(rng.uniform(2 * G * H * sh.input, -0.05, 0.05), DType::f32, {2, G * H, sh.input});
    in.r = upload_floats(rng.uniform(2 * G * H * H, -0.05, 0.05), DType::f32, {2, G * H, H});
    kernels::rnn::RnnOutputs out;
    out.y = Tensor::empty(g.pool, DType::f32, kernels::rnn::rnn_y_shape(spec, in.x.shape()));
    kernels::KernelContext k{g.context, g.pipelines};
    gpu::CommandRecorder prep(g.context);
    const auto weights = kernels::rnn::prepare_rnn_weights(k, prep, g.pool, spec, in.w, in.r, {}, {});
    prep.submit_and_wait();
    double best = 1e30;
    size_t dispatches = 0;
    for (int rep = 0; rep < 4; ++rep) {
      gpu::CommandRecorder recorder(g.context);
      const auto start = std::chrono::steady_clock::now();
      kernels::rnn::record_rnn(k, recorder, g.pool, spec, weights, in, out);
      dispatches = recorder.dispatch_count();
      recorder.submit_and_wait();
      const double ms =
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
      if (rep > 0) best = std::min(best, ms);
    }
    std::printf("  %s%s bidirectional S=%lld B=%lld I=%lld H=%lld: %.2f ms (%.3f ms/step), %zu dispatches\n",
                sh.cell == CellType::lstm ? "LSTM" : "GRU",
                sh.cell == CellType::gru ? (sh.lbr ? " lbr=1" : " lbr=0") : "", (long long)sh.seq,
                (long long)sh.batch, (long long)sh.input, (long long)sh.hidden, best,
                best / static_cast<double>(sh.seq), dispatches);
  }
}

}  // namespace
}  // namespace onda::test
