// Bandwidth of large elementwise ops against the device's own copy bandwidth, measured in the same
// run: a buffer-to-buffer copy (CopyBufferToBuffer) of the same size is the ceiling. Bytes count
// each input read once and the output written once. Times: GPU timestamps per dispatch (median of
// the repeats) and wall time of a batch of repeats in one submit.
//
//   build/bench_elementwise [--mib N] [--repeats R]
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <string>
#include <vector>

#include "gpu/buffer_pool.h"
#include "gpu/command_recorder.h"
#include "gpu/pipeline_cache.h"
#include "gpu/profiler.h"
#include "kernels/elementwise/elementwise_kernel.h"

using namespace onda;

namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Median GPU ms per dispatch of `record` (one dispatch) over `repeats` runs, from timestamps.
template <typename Record>
double gpu_ms(gpu::Context& context, int repeats, Record record) {
  std::vector<double> times;
  for (int r = 0; r < repeats; ++r) {
    gpu::Profiler profiler(context, 4);
    gpu::CommandRecorder recorder(context, &profiler);
    record(recorder);
    recorder.submit_and_wait();
    times.push_back(profiler.total_ms());
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

// Wall ms per repeat with all repeats recorded into one submit (includes launch gaps).
template <typename Record>
double wall_ms(gpu::Context& context, int repeats, Record record) {
  gpu::CommandRecorder recorder(context);
  for (int r = 0; r < repeats; ++r) record(recorder);
  context.finish();
  const auto start = std::chrono::steady_clock::now();
  recorder.submit_and_wait();
  return seconds_since(start) * 1e3 / repeats;
}

}  // namespace

int main(int argc, char** argv) {
  uint64_t mib = 1024;
  int repeats = 20;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::string(argv[i]) == "--mib") mib = std::stoull(argv[i + 1]);
    if (std::string(argv[i]) == "--repeats") repeats = std::stoi(argv[i + 1]);
  }
  gpu::Context context;
  gpu::BufferPool pool(context);
  gpu::PipelineCache pipelines(context);
  kernels::KernelContext kc{context, pipelines};
  // One tensor per binding: stay under the binding limit.
  const uint64_t bytes = std::min<uint64_t>(mib << 20, context.limits().maxStorageBufferBindingSize) & ~uint64_t{255};
  const int64_t n = static_cast<int64_t>(bytes / 4);
  fmt::print("adapter: {} ({}), tensor {} MiB ({} float32), repeats {}\n", context.adapter_description().name,
             context.adapter_description().backend, bytes >> 20, n, repeats);

  std::vector<float> host(n);
  for (int64_t i = 0; i < n; ++i) host[i] = static_cast<float>((i * 7919) % 1000) * 1e-3f - 0.5f;
  Tensor a = Tensor::upload(context, pool, DType::f32, {n}, host.data());
  Tensor b = Tensor::upload(context, pool, DType::f32, {n}, host.data());
  Tensor y = Tensor::empty(pool, DType::f32, {n});
  context.finish();

  // Two copies measure the ceiling: the API's buffer-to-buffer copy, and a vec4 copy kernel (the
  // Identity op). On NVIDIA's Vulkan driver through Dawn the former reaches only ~20% of the
  // latter, so the ceiling is the faster of the two.
  auto copy = [&](gpu::CommandRecorder& r) { r.copy(a.buffer(), 0, y.buffer(), 0, bytes); };
  // Warm-up: a second of copies, so the GPU's clocks have ramped up before anything is timed.
  for (const auto start = std::chrono::steady_clock::now(); seconds_since(start) < 1.0;) wall_ms(context, 10, copy);
  const double copy_wall = wall_ms(context, repeats, copy);
  const std::vector<Tensor> identity_inputs(1, a);
  auto identity = [&](gpu::CommandRecorder& r) {
    kernels::record_elementwise(kc, r, kernels::ElementwiseOp::Identity, identity_inputs, y);
  };
  const double identity_wall = wall_ms(context, repeats, identity);
  const double ceiling_ms = std::min(copy_wall, identity_wall);
  const double copy_gbs = 2.0 * bytes / (ceiling_ms * 1e-3) / 1e9;
  fmt::print("{:<28} {:>10} {:>10} {:>10} {:>10} {:>9}\n", "op", "gpu ms", "GB/s", "wall ms", "GB/s", "of copy");
  fmt::print("{:<28} {:>10} {:>10} {:>10.3f} {:>10.1f} {:>8.0f}%\n", "copy (CopyBufferToBuffer)", "-", "-", copy_wall,
             2.0 * bytes / (copy_wall * 1e-3) / 1e9, 100.0 * ceiling_ms / copy_wall);
  fmt::print("{:<28} {:>10} {:>10} {:>10.3f} {:>10.1f} {:>8.0f}%\n", "copy (vec4 kernel, Identity)", "-", "-",
             identity_wall, 2.0 * bytes / (identity_wall * 1e-3) / 1e9, 100.0 * ceiling_ms / identity_wall);

  struct Case {
    kernels::ElementwiseOp op;
    int inputs;
  };
  using Op = kernels::ElementwiseOp;
  const Case cases[] = {{Op::Relu, 1}, {Op::Sigmoid, 1}, {Op::Gelu, 1}, {Op::Add, 2}, {Op::Mul, 2}};
  for (const auto& c : cases) {
    std::vector<Tensor> inputs(c.inputs, a);
    if (c.inputs == 2) inputs[1] = b;
    auto record = [&](gpu::CommandRecorder& r) { kernels::record_elementwise(kc, r, c.op, inputs, y); };
    const double moved = static_cast<double>(bytes) * (c.inputs + 1);
    const double g = gpu_ms(context, repeats, record);
    const double w = wall_ms(context, repeats, record);
    const double wall_gbs = moved / (w * 1e-3) / 1e9;
    fmt::print("{:<28} {:>10.3f} {:>10.1f} {:>10.3f} {:>10.1f} {:>8.0f}%\n",
               fmt::format("{} f32 [{}]", kernels::elementwise_op_name(c.op), n), g,
               g > 0 ? moved / (g * 1e-3) / 1e9 : 0.0, w, wall_gbs, 100.0 * wall_gbs / copy_gbs);
  }
  // Broadcasting: [n/1024, 1024] + [1024].
  {
    Tensor row = Tensor::upload(context, pool, DType::f32, {1024}, host.data());
    std::vector<Tensor> inputs(2, row);
    inputs[0] = a.reshape({n / 1024, 1024});
    Tensor out = y.reshape({n / 1024, 1024});
    auto record = [&](gpu::CommandRecorder& r) {
      kernels::record_elementwise(kc, r, kernels::ElementwiseOp::Add, inputs, out);
    };
    const double moved = 2.0 * bytes;
    const double g = gpu_ms(context, repeats, record);
    const double w = wall_ms(context, repeats, record);
    const double wall_gbs = moved / (w * 1e-3) / 1e9;
    fmt::print("{:<28} {:>10.3f} {:>10.1f} {:>10.3f} {:>10.1f} {:>8.0f}%\n", "Add f32 [n/1024,1024]+[1024]", g,
               g > 0 ? moved / (g * 1e-3) / 1e9 : 0.0, w, wall_gbs, 100.0 * wall_gbs / copy_gbs);
  }
  return 0;
}
