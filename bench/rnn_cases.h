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
  double cudnn_ms;      // measured on an H200 (issue 6, 2026-12-02); 0: not given there
};

inline std::vector<RnnCase> rnn_cases(bool quick) {
  std::vector<RnnCase> cases = {
      // MP-SENet: 8 bidirectional GRUs (linear_before_reset=1, W [2, 384, 64]), over time (B = 201
      // frequency bins, T = 321 frames) and over frequency (B = 321, T = 201).
      {"mpsenet-time biGRU", false, true, true, 321, 201, 64, 128, 1.47},
      {"mpsenet-freq biGRU", false, true, true, 201, 321, 64, 128, 0},
      {"mpsenet-time biGRU lbr=0", false, false, true, 321, 201, 64, 128, 0},
      {"biLSTM H128 T512 B64", true, false, true, 512, 64, 128, 128, 2.63},
      {"biLSTM H256 T1000 B2", true, false, true, 1000, 2, 256, 256, 27.8},
      {"LSTM H512 T4096 B1", true, false, false, 4096, 1, 512, 512, 47.4},
      // SCNet-large dual-path modules: X [864, 85, 256] / [85, 864, 256] for the 256-channel ones
      // (read off the graph); the 512-channel ones follow an rfft over the 864 frames (433 bins).
      {"scnet H256 freq biLSTM", true, false, true, 85, 864, 256, 256, 0},
      {"scnet H256 time biLSTM", true, false, true, 864, 85, 256, 256, 0},
      {"scnet H512 freq biLSTM", true, false, true, 85, 433, 512, 512, 0},
      {"scnet H512 time biLSTM", true, false, true, 433, 85, 512, 512, 0},
      // UVR (vr_hp_wind_inst): X [256, 1, 168] and [256, 1, 336].
      {"uvr H64 I168 biLSTM", true, false, true, 256, 1, 168, 64, 0},
      {"uvr H32 I168 biLSTM", true, false, true, 256, 1, 168, 32, 0},
      {"uvr H64 I336 biLSTM", true, false, true, 256, 1, 336, 64, 0},
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
