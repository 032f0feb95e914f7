// FFT throughput against cuFFT (bench/torch_fft.py runs the same cases through torch.fft in the
// same GPU-machine call): batched complex and real forward transforms with ~2^26 points per batch
// (2^22 on CPU adapters), Bluestein lengths, and the HTDemucs STFT ([2, 343980] signal, n_fft 4096,
// hop 1024, hann). GB/s counts the input read once and the output written once.
//
//   build/bench_fft [--points LOG2] [--repeats R] [--path auto|generic|unrolled|both] [--only TEXT]
//                   [--tuning fft.FIELD=VALUE]...
//
// --path picks the Stockham code path (FftCodePath; auto: unrolled on GPUs, generic on CPU adapters);
// both runs every case on each path, one line each; --only runs the cases whose name contains TEXT (or any of
// a comma-separated list);
// --plans prints each case's passes (radices, thread shape) under its line; --tuning sets the unrolled
// planner's sweep fields (fft.radices, fft.threads, fft.per_group, fft.group_iterations: kernel_tuning.h).
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <string>
#include <vector>

#include "gpu/buffer_pool.h"
#include "gpu/clock_warmup.h"
#include "gpu/command_recorder.h"
#include "gpu/pipeline_cache.h"
#include "gpu/profiler.h"
#include "kernels/fft/fft_kernel.h"
#include "tuning_args.h"

using namespace onda;
using namespace onda::kernels::fft;

namespace {

struct Result {
  double gpu_ms, wall_ms;
};

Result time_kernel(gpu::Context& context, gpu::BufferPool& pool, const FftKernel& kernel, const Tensor& in,
                   const Tensor& out, const Tensor* window, int repeats) {
  gpu::warm_up_clocks(context, pool, 0.25);  // the input's generation and upload left the GPU idle
  {  // warm-up
    gpu::CommandRecorder recorder(context);
    kernel.record(recorder, in, out, window);
    recorder.submit_and_wait();
  }
  std::vector<double> gpu;
  for (int r = 0; r < repeats; ++r) {
    gpu::Profiler profiler(context, 64);
    gpu::CommandRecorder recorder(context, &profiler);
    kernel.record(recorder, in, out, window);
    recorder.submit_and_wait();
    gpu.push_back(profiler.total_ms());
  }
  std::sort(gpu.begin(), gpu.end());
  gpu::CommandRecorder recorder(context);
  for (int r = 0; r < repeats; ++r) kernel.record(recorder, in, out, window);
  const auto start = std::chrono::steady_clock::now();
  recorder.submit_and_wait();
  const double wall = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count() / repeats;
  return {gpu[gpu.size() / 2], wall};
}

std::string plan_label(const FftKernel& kernel) {
  const FftPlan& plan = kernel.plan();
  const bool unrolled = !plan.passes.empty() && plan.passes.front().unrolled;
  return fmt::format("{} {}", algorithm_name(plan.algorithm), unrolled ? "unrolled" : "generic");
}

}  // namespace

int main(int argc, char** argv) {
  int log2_points = -1, repeats = 20;
  std::string path_name = "auto", only;
  bool print_plans = false;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::string(argv[i]) == "--points") log2_points = std::stoi(argv[i + 1]);
    if (std::string(argv[i]) == "--repeats") repeats = std::stoi(argv[i + 1]);
    if (std::string(argv[i]) == "--path") path_name = argv[i + 1];
    if (std::string(argv[i]) == "--only") only = argv[i + 1];
    if (std::string(argv[i]) == "--plans") print_plans = std::string(argv[i + 1]) != "0";
  }
  // --only A,B: the cases whose name contains A or B.
  auto selected = [&](const std::string& name) {
    if (only.empty()) return true;
    for (size_t start = 0; start <= only.size();) {
      const size_t comma = std::min(only.find(',', start), only.size());
      if (name.find(only.substr(start, comma - start)) != std::string::npos) return true;
      start = comma + 1;
    }
    return false;
  };
  std::vector<FftCodePath> paths;
  if (path_name == "auto") paths = {FftCodePath::automatic};
  else if (path_name == "generic") paths = {FftCodePath::generic};
  else if (path_name == "unrolled") paths = {FftCodePath::unrolled};
  else if (path_name == "both") paths = {FftCodePath::generic, FftCodePath::unrolled};
  else {
    fmt::print(stderr, "--path must be auto, generic, unrolled or both, not '{}'\n", path_name);
    return 2;
  }
  const FftTuning tuning = bench::tuning_from_args(argc, argv).fft;
  const auto tuning_for = [&](FftCodePath path) {
    FftTuning t = tuning;
    t.code_path = path;
    return t;
  };
  gpu::Context context;
  gpu::BufferPool pool(context);
  gpu::PipelineCache pipelines(context);
  if (log2_points < 0) log2_points = context.adapter_description().type == "CPU" ? 20 : 26;
  const int64_t points = int64_t{1} << log2_points;
  fmt::print("adapter: {}, {} points per batch, repeats {}\n", context.adapter_description().name, points, repeats);
  fmt::print("{:<34} {:>10} {:>10} {:>10} {:>10}  {}\n", "case", "gpu ms", "GB/s", "wall ms", "GB/s", "plan");

  struct Case {
    std::string name;
    int64_t n, batch;
    FftDomain domain;
  };
  std::vector<Case> cases;
  for (int64_t n : {256, 512, 1024, 2048, 4096, 16384, 1 << 20}) {
    cases.push_back({fmt::format("c2c N={}", n), n, std::max<int64_t>(points / n, 1), FftDomain::complex});
    cases.push_back({fmt::format("r2c N={}", n), n, std::max<int64_t>(points / n, 1), FftDomain::real_to_complex});
  }
  for (int64_t n : {4099, 65537}) {
    cases.push_back({fmt::format("c2c N={} (Bluestein)", n), n, std::max<int64_t>(points / n, 1), FftDomain::complex});
  }
  for (const auto& c : cases) for (FftCodePath path : paths) {
    if (!selected(c.name)) continue;
    FftDescription d;
    d.length = c.n;
    d.outer_count = c.batch;
    d.domain = c.domain;
    d.direction = FftDirection::forward;
    const int in_components = c.domain == FftDomain::real_to_complex ? 1 : 2;
    const int64_t out_len = c.domain == FftDomain::real_to_complex ? c.n / 2 + 1 : c.n;
    d.input = contiguous_layout(c.n, 1, in_components);
    d.output = contiguous_layout(out_len, 1, 2);
    try {
      FftKernel kernel(context, pool, pipelines, d, std::nullopt, tuning_for(path));
      std::vector<float> host(c.batch * c.n * in_components);
      for (size_t i = 0; i < host.size(); ++i) host[i] = std::sin(0.001f * static_cast<float>(i % 100003));
      Tensor in = Tensor::upload(context, pool, DType::f32, {c.batch, c.n, in_components}, host.data());
      Tensor out = Tensor::empty(pool, DType::f32, {c.batch, out_len, 2});
      const Result r = time_kernel(context, pool, kernel, in, out, nullptr, repeats);
      const double bytes = 4.0 * c.batch * (c.n * in_components + out_len * 2);
      fmt::print("{:<34} {:>10.4f} {:>10.1f} {:>10.4f} {:>10.1f}  {}\n", c.name + fmt::format(" x{}", c.batch), r.gpu_ms,
                 bytes / (r.gpu_ms * 1e-3) / 1e9, r.wall_ms, bytes / (r.wall_ms * 1e-3) / 1e9,
                 plan_label(kernel));
      if (print_plans) fmt::print("    {}\n", kernel.plan().summary());
    } catch (const std::exception& e) {
      fmt::print("{:<34} failed: {}\n", c.name, e.what());
    }
  }
  // The HTDemucs STFT: 2 channels of 343980 samples (the model reflect-pads by n_fft/2 first).
  const bool stft = selected("HTDemucs STFT");
  for (FftCodePath path : stft ? paths : std::vector<FftCodePath>{}) {
    const int64_t n_fft = 4096, hop = 1024, length = 343980 + n_fft;
    const int64_t frames = (length - n_fft) / hop + 1;
    FftDescription d;
    d.length = n_fft;
    d.outer_count = 2;
    d.inner_count = frames;
    d.domain = FftDomain::real_to_complex;
    d.direction = FftDirection::forward;
    d.windowed = true;
    d.input = {0, length, hop, 1};
    d.output = {0, frames * (n_fft / 2 + 1) * 2, (n_fft / 2 + 1) * 2, 2};
    FftKernel kernel(context, pool, pipelines, d, std::nullopt, tuning_for(path));
    std::vector<float> host(2 * length), window(n_fft);
    for (size_t i = 0; i < host.size(); ++i) host[i] = std::sin(0.01f * static_cast<float>(i));
    for (int64_t j = 0; j < n_fft; ++j) window[j] = static_cast<float>(0.5 - 0.5 * std::cos(2 * M_PI * j / n_fft));
    Tensor in = Tensor::upload(context, pool, DType::f32, {2, length}, host.data());
    Tensor w = Tensor::upload(context, pool, DType::f32, {n_fft}, window.data());
    Tensor out = Tensor::empty(pool, DType::f32, {2, frames, n_fft / 2 + 1, 2});
    const Result r = time_kernel(context, pool, kernel, in, out, &w, repeats);
    const double bytes = 4.0 * (2 * length + 2 * frames * (n_fft / 2 + 1) * 2);
    fmt::print("{:<34} {:>10.4f} {:>10.1f} {:>10.4f} {:>10.1f}  {}\n", "HTDemucs STFT [2,343980] 4096/1024", r.gpu_ms,
               bytes / (r.gpu_ms * 1e-3) / 1e9, r.wall_ms, bytes / (r.wall_ms * 1e-3) / 1e9,
               plan_label(kernel));
  }
  return 0;
}
