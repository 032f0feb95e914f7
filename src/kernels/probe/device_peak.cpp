#include "kernels/probe/device_peak.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <mutex>
#include <string>

#include "gpu/buffer_pool.h"
#include "kernels/shader_template.h"

namespace onda::kernels {
namespace {

// Work grows until one measurement takes this long: long enough that submit and wait overheads
// (tens of microseconds) are noise and a GPU's clocks have left idle, short enough for start-up.
constexpr double kTargetSeconds = 0.025;

std::mutex cache_mutex;
std::map<std::string, DevicePeak> cache;  // by adapter
uint64_t probes_run = 0;

// One entry point of a probe shader (no template values).
const wgpu::ComputePipeline& probe_pipeline(const KernelContext& k, const std::string& shader,
                                            const std::string& entry_point) {
  const gpu::PipelineKey key{shader, {}, entry_point};
  return k.pipelines.get(
      key, [&] { return std::string(shader_text(shader)); }, shader + " " + entry_point);
}

// Seconds from the submit until the GPU finished `recorder`'s work.
double submit_and_time(gpu::CommandRecorder& recorder) {
  const auto start = std::chrono::steady_clock::now();
  recorder.submit_and_wait();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Runs `measure(scale)` (returns seconds for `scale` units of work) with a growing scale until it
// takes kTargetSeconds or `max_scale` is reached; then once more at that scale. Units per second,
// the better of the last two (the first of them may still see the GPU clocks ramping up).
template <class Measure>
double units_per_second(Measure&& measure, double first_scale, double max_scale) {
  double scale = first_scale;
  double seconds = measure(scale);
  while (seconds < kTargetSeconds && scale < max_scale) {
    const double grow = std::clamp(1.2 * kTargetSeconds / std::max(seconds, 1e-6), 2.0, 16.0);
    scale = std::min(max_scale, std::floor(scale * grow));
    seconds = measure(scale);
  }
  const double again = measure(scale);
  return scale / std::max(std::min(seconds, again), 1e-9);
}

struct CopyParams {
  uint32_t count;  // vec4s
  uint32_t pad[3];
};

double measure_copy_bandwidth(const KernelContext& k, gpu::BufferPool& pool) {
  const wgpu::Limits& limits = k.gpu.limits();
  const uint64_t chunk =
      std::min({uint64_t{64} << 20, limits.maxStorageBufferBindingSize, limits.maxBufferSize / 2}) &
      ~uint64_t{255};
  const auto from = pool.acquire(chunk), to = pool.acquire(chunk);
  const wgpu::ComputePipeline& pipeline = probe_pipeline(k, "probe/copy_bandwidth.wgsl", "main");
  // Enough invocations to fill any GPU; each copies a few vec4s of a chunk.
  const uint32_t workgroups = std::min<uint32_t>(4096, limits.maxComputeWorkgroupsPerDimension);
  // Scale: bytes copied; above one chunk, the chunk copied repeatedly.
  auto measure = [&](double bytes) {
    gpu::CommandRecorder recorder(k.gpu);
    const uint64_t size = std::min<uint64_t>(chunk, static_cast<uint64_t>(bytes)) & ~uint64_t{255};
    const auto copies = static_cast<uint64_t>(std::ceil(bytes / static_cast<double>(size)));
    const CopyParams params{static_cast<uint32_t>(size / 16), {}};
    const uint32_t groups = static_cast<uint32_t>(std::min<uint64_t>(workgroups, (size / 16 + 255) / 256));
    for (uint64_t i = 0; i < copies; ++i) {
      recorder.dispatch(pipeline, {{from->buffer(), 0, size}, {to->buffer(), 0, size}}, &params,
                        sizeof(params), {groups, 1, 1}, "device_peak_copy");
    }
    return submit_and_time(recorder) * bytes / static_cast<double>(copies * size);  // for `bytes`
  };
  // Each byte copied is read once and written once.
  return 2.0 * units_per_second(measure, 1 << 20, 1e12);
}

struct FmaParams {
  uint32_t iterations;
  float multiplier;
  float addend;
  uint32_t pad;
};

double measure_fma_rate(const KernelContext& k, gpu::BufferPool& pool) {
  const wgpu::ComputePipeline& pipeline = probe_pipeline(k, "probe/device_peak.wgsl", "fma_rate");
  constexpr uint32_t kWorkgroupSize = 256, kFlopsPerRound = 256;
  // Enough workgroups to fill any GPU (an H200 holds ~1,000 of 256 invocations at once).
  const uint32_t workgroups = std::min<uint32_t>(4096, k.gpu.limits().maxComputeWorkgroupsPerDimension);
  const auto sink = pool.acquire(uint64_t{workgroups} * kWorkgroupSize * sizeof(float));
  // Scale: FLOPs, in rounds of every invocation.
  const double flops_per_round = static_cast<double>(workgroups) * kWorkgroupSize * kFlopsPerRound;
  auto measure = [&](double flops) {
    const FmaParams params{static_cast<uint32_t>(std::max(1.0, std::round(flops / flops_per_round))), 0.9999f,
                           1e-4f, 0};
    gpu::CommandRecorder recorder(k.gpu);
    recorder.dispatch(pipeline, {{sink->buffer()}}, &params, sizeof(params), {workgroups, 1, 1},
                      "device_peak_fma");
    return submit_and_time(recorder) * flops / (params.iterations * flops_per_round);  // for `flops`
  };
  return units_per_second(measure, flops_per_round, 1e9 * flops_per_round);
}

double measure_dependent_dispatch_ms(const KernelContext& k, gpu::BufferPool& pool) {
  const wgpu::ComputePipeline& pipeline = probe_pipeline(k, "probe/device_peak.wgsl", "dependent_step");
  const auto word = pool.acquire(256);
  auto chain_seconds = [&](int length) {
    double best = 1e30;
    for (int attempt = 0; attempt < 2; ++attempt) {
      gpu::CommandRecorder recorder(k.gpu);
      for (int i = 0; i < length; ++i)
        recorder.dispatch(pipeline, {{word->buffer(), 0, 256}}, nullptr, 0, {1, 1, 1}, "device_peak_step");
      best = std::min(best, submit_and_time(recorder));
    }
    return best;
  };
  // The slope between two chain lengths: the submit, the wait and the first dispatch's start cancel.
  constexpr int kShort = 32, kLong = 288;
  const double short_chain = chain_seconds(kShort), long_chain = chain_seconds(kLong);
  double per_step = (long_chain - short_chain) / (kLong - kShort);
  if (!(per_step > 0)) per_step = long_chain / kLong;  // noise swamped the slope: an upper bound
  return 1e3 * per_step;
}

DevicePeak measure(const KernelContext& k) {
  gpu::BufferPool pool(k.gpu);  // the probe's buffers go with it
  DevicePeak peak;
  peak.dependent_dispatch_ms = measure_dependent_dispatch_ms(k, pool);  // first: it also warms up the queue
  peak.bytes_per_second = measure_copy_bandwidth(k, pool);
  peak.flops_per_second = measure_fma_rate(k, pool);
  return peak;
}

}  // namespace

const DevicePeak& device_peak(const KernelContext& context) {
  const auto& adapter = context.gpu.adapter_description();
  const std::string key = adapter.name + "|" + adapter.backend + "|" + adapter.driver;
  std::lock_guard lock(cache_mutex);
  auto it = cache.find(key);
  if (it != cache.end()) return it->second;
  ++probes_run;
  return cache.emplace(key, measure(context)).first->second;
}

uint64_t device_peak_probes_run() {
  std::lock_guard lock(cache_mutex);
  return probes_run;
}

}  // namespace onda::kernels
