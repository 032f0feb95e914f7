// An onda Session as a SegmentModel: a waveform model runs directly on the segments; a
// spectrogram model runs between an STFT session (waveform -> compressed magnitude, phase) and an
// iSTFT session (magnitude, phase -> waveform), both small ONNX graphs run by onda's own GPU
// kernels (spectral_graphs.h).
#pragma once
#include <deque>
#include <filesystem>
#include <memory>

#include "audio/segmenter.h"
#include "onda/audio_description.h"
#include "onda/session.h"

namespace onda::audio {

struct RunnerOptions {
  SessionOptions session;
  int64_t segment = 0;  // samples; 0 = the description's, else the model input's static length
  int batch = 1;        // wanted segments per call (a model with a fixed batch dim gets its own)
};

class SessionSegmentModel : public SegmentModel {
 public:
  // Opens the model (and the spectral sessions); throws DescriptionError when the model's inputs
  // and outputs do not fit the description.
  SessionSegmentModel(const std::filesystem::path& model, const ModelDescription& description,
                      const RunnerOptions& options);
  ~SessionSegmentModel() override;

  int64_t segment_length() const override { return segment_; }
  int channels() const override { return description_.channels; }
  int stems() const override { return static_cast<int>(description_.stems.size()); }
  int max_batch() const override { return max_batch_; }
  bool fixed_batch() const override { return fixed_batch_; }
  SegmentOutput run(const std::vector<float>& in, int batch) override;
  // Waveform models pipeline through Session::submit/collect (the next batch is recorded while the
  // GPU runs the current one); spectrogram models chain three sessions and run synchronously.
  void submit(const std::vector<float>& in, int batch) override;
  SegmentOutput collect() override;

  std::string adapter_name() const;
  uint64_t peak_gpu_bytes() const { return peak_gpu_bytes_; }

 private:
  SegmentOutput run_waveform(const std::vector<float>& in, int batch);
  void submit_waveform(const std::vector<float>& in, int batch);
  SegmentOutput collect_waveform(int batch);
  SegmentOutput run_spectrogram(const std::vector<float>& in, int batch);

  ModelDescription description_;
  std::unique_ptr<Session> session_;
  std::string input_name_, output_name_;
  Shape input_shape_;  // with the batch dim set per call
  int64_t segment_ = 0;
  int max_batch_ = 1;
  bool fixed_batch_ = false;  // the model's batch dim is static: every call feeds exactly max_batch_
  uint64_t peak_gpu_bytes_ = 0;
  std::deque<int> submitted_batches_;  // batch sizes of waveform runs submitted, not yet collected
  struct Spectral;
  std::unique_ptr<Spectral> spectral_;
};

}  // namespace onda::audio
