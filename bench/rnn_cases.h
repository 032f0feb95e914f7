// The recurrent-layer shapes bench_rnn times (bench/torch_rnn.py has the same list for cuDNN):
// the reference models' layers, read off ../shared/models with onnx shape inference, and the
// issue's long-sequence cases. X is [T, B, I] (layout 0), float32, random weights.
#pragma once
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

namespace onda::bench {

struct RnnCase {
  std::string name;
  bool lstm;            // else GRU
  bool linear_before_reset;
  bool bidirectional;
  int64_t seq, batch, input, hidden;
  // cuDNN (torch.nn.LSTM / GRU, float32 without TF32: the like-for-like figure) on an H200, from
  // bench/torch_rnn.py in call G of 2026-12-04 (docs/benchmark-log.md, "evening 2"); 0: none (PyTorch has
  // no GRU with linear_before_reset = 0). A reference for the "x cuDNN" column only: a comparison to
  // report runs torch_rnn.py in the same call.
  double cudnn_ms;
};

inline std::vector<RnnCase> rnn_cases(bool quick) {
  std::vector<RnnCase> cases = {
      // MP-SENet: 8 bidirectional GRUs (linear_before_reset=1, W [2, 384, 64]) on the dense encoder's
      // 101 frequency bins (X read off the model's profile): the freq transformer's over T = 321 with
      // B = 101, the time transformer's over T = 101 with B = 321. The shape (T = 321, B = 201;
      // the cuDNN figure: 1.47 ms) is kept for comparison.
      {"mpsenet-freq biGRU", false, true, true, 321, 101, 64, 128, 0.911},
      {"mpsenet-time biGRU", false, true, true, 101, 321, 64, 128, 0.976},
      {"issue biGRU T321 B201", false, true, true, 321, 201, 64, 128, 1.603},
      {"mpsenet-freq biGRU lbr=0", false, false, true, 321, 101, 64, 128, 0},
      {"biLSTM H128 T512 B64", true, false, true, 512, 64, 128, 128, 2.784},
      {"biLSTM H256 T1000 B2", true, false, true, 1000, 2, 256, 256, 22.149},
      {"LSTM H512 T4096 B1", true, false, false, 4096, 1, 512, 512, 62.356},
      // SCNet-large dual-path modules (12 biLSTMs: dp_modules.{0,2,4} H256 I256, dp_modules.{1,3,5}
      // H512 I512, W [2, 4H, H] in the recipe): lstm_layers.0 runs over the 85 bands with batch =
      // frames (initial state [2, 864, 256]), lstm_layers.1 over the frames with batch = 85 bands
      // (initial state [2, 85, 256]); the 512-channel modules follow an rfft over the 864 frames
      // (433 bins). In the model (H200, profiled): lstm_layers.1 23 ms (H256) / 31 ms (H512).
      {"scnet H256 freq biLSTM", true, false, true, 85, 864, 256, 256, 5.258},
      {"scnet H256 time biLSTM", true, false, true, 864, 85, 256, 256, 33.589},
      {"scnet H512 freq biLSTM", true, false, true, 85, 433, 512, 512, 8.703},
      {"scnet H512 time biLSTM", true, false, true, 433, 85, 512, 512, 17.014},
      // UVR (vr_hp_wind_inst): X [256, 1, 168] and [256, 1, 336].
      {"uvr H64 I168 biLSTM", true, false, true, 256, 1, 168, 64, 0.390},
      {"uvr H32 I168 biLSTM", true, false, true, 256, 1, 168, 32, 0.312},
      {"uvr H64 I336 biLSTM", true, false, true, 256, 1, 336, 64, 0.386},
  };
  if (quick) {  // CPU adapters: the same structure, small enough for lavapipe
    for (RnnCase& c : cases) {
      c.seq = std::min<int64_t>(c.seq, 12);
      c.batch = std::min<int64_t>(c.batch, 5);
      c.input = std::min<int64_t>(c.input, 48);
      c.hidden = std::min<int64_t>(c.hidden, 72);
      c.cudnn_ms = 0;
    }
  }
  return cases;
}

}  // namespace onda::bench
