// onda::Stream: runs a frame-by-frame model (an exported streaming enhancer, a voice-activity
// detector) whose state and cache inputs are fed from its own outputs of the previous frame. The
// states stay on the GPU as DeviceTensors between frames: each step uploads only the frame inputs
// and reads back only the frame outputs (RunStats::host_upload_bytes / host_download_bytes say so).
//
//   std::shared_ptr<onda::Session> session = onda::Session::open("denoiser_stream.onnx");
//   onda::Stream stream(session);                    // pairs "cache_out" -> "cache_in", "hn" -> "h0", ...
//   for (const auto& frame : frames) {
//     auto out = stream.step({{"frame", frame}});    // the frame outputs, on the host
//   }
//   stream.reset();                                  // states back to their initial values
//
// Which output feeds which input: StreamOptions::state (output -> input), else the names' rule
// (default_state_pairs below). States start at zeros of the input's declared shape, or at
// StreamOptions::initial.
//
// Thread safety: one Stream is one sequence of frames: call it from one thread at a time (its
// states change with every step). Streams on one Device (or on one Session) may run on several
// threads: their runs are serialised by the Device's lock (device.h).
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "onda/device_tensor.h"
#include "onda/host_tensor.h"
#include "onda/session.h"

namespace onda {

struct StreamOptions {
  // State pairs, output name -> input name; empty: default_state_pairs(). Each output and each input
  // at most once; an unknown name or a dtype that differs is an onda::InputError.
  std::map<std::string, std::string> state;
  // Initial values by state input name (uploaded once); the others start at zeros of the input's
  // declared shape (an input with a dynamic dimension needs an initial value here).
  std::map<std::string, HostTensor> initial;
};

// The pairs a streaming model's names imply, output -> input: an output whose name turns into an
// input's name by one of these rules, with the same dtype (and the same shape where both are known):
//   a word "out"/"output"/"next"/"new" becomes "in"/"input"/"prev"/"old" or is dropped
//     (state_out -> state_in, cache_out_0 -> cache_in_0, conv_cache_out -> conv_cache,
//      new_states -> states, out_state -> in_state)
//   "hn"/"cn" become "h0"/"c0" or "h"/"c" (ONNX's LSTM/GRU: h0 -> hn), a trailing "n" or "N" is dropped
//     (stateN -> state, hn -> h)
// and an input named as a state (a word h, c, h0, c0, hx or cx, or one holding state, cache, hidden,
// cell, memory, buffer, past or hist: "audio_in" -> "audio_out" is no state). Words are separated by
// '_', '.', '-', ':' or '/'; matching ignores case. An input claimed by two
// outputs is an onda::InputError naming both.
std::map<std::string, std::string> default_state_pairs(const std::vector<TensorSpec>& inputs,
                                                       const std::vector<TensorSpec>& outputs);

class Stream {
 public:
  // Throws onda::InputError when the pairs do not fit the model, a state has no initial value and
  // no static shape, or the model has no state pair at all.
  explicit Stream(std::shared_ptr<Session> session, const StreamOptions& options = {});

  // One frame: every input that is not a state, by name, from the host; returns every output that is
  // not a state, read back to the host. The state outputs become the next step's state inputs on the
  // GPU.
  std::map<std::string, HostTensor> step(const std::map<std::string, HostTensor>& frame);
  // The same with frame inputs in GPU memory too, and the frame outputs left there (RunOutputs::device)
  // when named in `frame_outputs_on_device`.
  RunOutputs step(const std::map<std::string, HostTensor>& frame,
                  const std::map<std::string, DeviceTensor>& device_frame,
                  const std::set<std::string>& frame_outputs_on_device);
  // States back to their initial values (no upload: the initial tensors are kept on the GPU).
  void reset();

  const std::map<std::string, std::string>& state_pairs() const { return pairs_; }  // output -> input
  // The current states by input name (what the next step feeds), on the GPU.
  const std::map<std::string, DeviceTensor>& states() const { return states_; }
  std::vector<std::string> frame_inputs() const;   // the inputs step() takes, in model order
  std::vector<std::string> frame_outputs() const;  // the outputs step() returns, in model order
  int64_t steps() const { return steps_; }         // since construction or reset()
  const RunStats& last_run() const { return session_->last_run(); }
  Session& session() const { return *session_; }

 private:
  std::shared_ptr<Session> session_;
  std::map<std::string, std::string> pairs_;  // output -> input
  std::set<std::string> state_outputs_;
  std::map<std::string, DeviceTensor> initial_, states_;  // by input name
  int64_t steps_ = 0;
};

}  // namespace onda
