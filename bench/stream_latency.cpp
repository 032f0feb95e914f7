// Per-frame latency of a streaming model through onda::Stream (include/onda/stream.h), the states
// on the GPU between frames: WARMUP frames (planning, the captured run), reset(), then one timed
// step() per frame of FRAMES.bin (raw float32 [N, frame size]): the frame uploaded, the run, the
// frame outputs read back. Prints p50/p99/mean/max in ms as JSON, checks from RunStats that only the
// frame crossed between host and GPU, and writes the first frame output of every frame to OUT.bin
// (bench/stream_latency.sh compares it with ONNX Runtime's). Uses only the public API.
//   bench_stream_latency MODEL.onnx FRAMES.bin N OUT.bin [WARMUP] [ADAPTER]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <numeric>
#include <string>
#include <vector>

#include "onda/stream.h"

int main(int argc, char** argv) {
  if (argc < 5) {
    std::fprintf(stderr, "usage: bench_stream_latency MODEL.onnx FRAMES.bin N OUT.bin [WARMUP] [ADAPTER] [FIRST_SUBMIT]\n");
    return 2;
  }
  try {
    const int64_t n = std::stoll(argv[3]);
    const int warmup = argc > 5 ? std::stoi(argv[5]) : 20;
    onda::SessionOptions options;
    if (argc > 6) options.adapter = argv[6];
    // SessionOptions::first_submit_dispatches (0: one submit per step), for an A/B of the submits.
    if (argc > 7) options.first_submit_dispatches = static_cast<uint32_t>(std::stoul(argv[7]));
    std::shared_ptr<onda::Session> session = onda::Session::open(argv[1], options);
    onda::Stream stream(session);
    const std::vector<std::string> inputs = stream.frame_inputs(), outputs = stream.frame_outputs();
    if (inputs.size() != 1 || outputs.empty()) {
      std::fprintf(stderr, "bench_stream_latency: the model needs one frame input (has %zu)\n",
                   inputs.size());
      return 1;
    }
    onda::Shape frame_shape;
    for (const auto& spec : session->inputs())
      if (spec.name == inputs[0]) frame_shape = spec.shape;
    const int64_t frame_size = onda::shape_numel(frame_shape);
    std::vector<float> frames(static_cast<size_t>(n * frame_size));
    std::ifstream file(argv[2], std::ios::binary);
    file.read(reinterpret_cast<char*>(frames.data()),
              static_cast<std::streamsize>(frames.size() * sizeof(float)));
    if (!file) {
      std::fprintf(stderr, "bench_stream_latency: %s holds fewer than %lld frames of %lld floats\n", argv[2],
                   static_cast<long long>(n), static_cast<long long>(frame_size));
      return 1;
    }
    auto frame = [&](int64_t k) {
      return onda::HostTensor::view(onda::DType::f32, frame_shape, frames.data() + (k % n) * frame_size,
                                    frame_size * sizeof(float));
    };
    for (int k = 0; k < warmup; ++k) stream.step({{inputs[0], frame(k)}});
    stream.reset();

    std::vector<double> ms, record_ms, wait_ms;  // wall per frame; of it, recording and the GPU wait
    std::vector<float> first_outputs;
    uint64_t crossed_up = 0, crossed_down = 0;
    for (int64_t k = 0; k < n; ++k) {
      const auto start = std::chrono::steady_clock::now();
      const auto out = stream.step({{inputs[0], frame(k)}});
      ms.push_back(
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
      const auto values = out.at(outputs[0]).values<float>();
      first_outputs.insert(first_outputs.end(), values.begin(), values.end());
      record_ms.push_back(stream.last_run().record_ms);
      wait_ms.push_back(stream.last_run().gpu_wait_ms);
      crossed_up += stream.last_run().host_upload_bytes;
      crossed_down += stream.last_run().host_download_bytes;
    }
    std::ofstream(argv[4], std::ios::binary)
        .write(reinterpret_cast<const char*>(first_outputs.data()),
               static_cast<std::streamsize>(first_outputs.size() * sizeof(float)));

    uint64_t frame_out_bytes = 0;
    for (const auto& spec : session->outputs())
      if (std::find(outputs.begin(), outputs.end(), spec.name) != outputs.end())
        frame_out_bytes += static_cast<uint64_t>(onda::shape_numel(spec.shape)) * sizeof(float);
    const bool states_stayed = crossed_up == static_cast<uint64_t>(n * frame_size) * sizeof(float) &&
                               crossed_down == n * frame_out_bytes;
    std::vector<double> sorted = ms;
    std::sort(sorted.begin(), sorted.end());
    auto pick = [&](double q) {
      return sorted[std::min(sorted.size() - 1, static_cast<size_t>(q * sorted.size()))];
    };
    auto median = [](std::vector<double> v) {
      std::sort(v.begin(), v.end());
      return v[v.size() / 2];
    };
    std::printf(
        "{\"runtime\": \"onda\", \"adapter\": \"%s\", \"frames\": %lld, \"states\": %zu, \"p50_ms\": %.4f, "
        "\"p99_ms\": %.4f, \"mean_ms\": %.4f, \"max_ms\": %.4f, \"dispatches\": %llu, "
        "\"record_p50_ms\": %.4f, \"gpu_wait_p50_ms\": %.4f, \"submits\": %llu, "
        "\"bytes_up_per_frame\": %llu, \"bytes_down_per_frame\": %llu, \"states_stayed_on_gpu\": %s}\n",
        session->adapter_name().c_str(), static_cast<long long>(n), stream.state_pairs().size(), pick(0.5),
        pick(0.99), std::accumulate(ms.begin(), ms.end(), 0.0) / static_cast<double>(n), sorted.back(),
        static_cast<unsigned long long>(stream.last_run().dispatches), median(record_ms), median(wait_ms),
        static_cast<unsigned long long>(stream.last_run().submits),
        static_cast<unsigned long long>(crossed_up / n), static_cast<unsigned long long>(crossed_down / n),
        states_stayed ? "true" : "false");
    return states_stayed ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_stream_latency: %s\n", e.what());
    return 1;
  }
}
