// CPU cost of recording a dispatch, split into its parts (issue 8: recording must stay under 20% of
// a model's wall time; the H200 machine spent 17-25 us of CPU per dispatch in 2026-12-03's runs).
//
//   build/bench_recording [--count N]
//
// Each line is microseconds per call, the mean over N calls after a warm-up:
//   shader_pipeline hit        a kernel's pipeline lookup: its PipelineKey (shader name + template
//                              values) hashed and found; nothing rendered
//   pipeline lookup hit        PipelineCache::get of a cached shader with no id (keyed by its text)
//   CreateBindGroup            Dawn's bind group for 3 storage buffers + 1 uniform slice
//   dispatch (first run)       CommandRecorder::dispatch: bind group, uniforms, encoding
//   dispatch (repeat run)      the same dispatches by a new recorder: bind groups found in the cache
//   Finish + Submit            per dispatch, N dispatches in one command buffer
//   record_elementwise (Add)   the whole kernel call for small tensors (plan, render, lookup, dispatch)
//   record_gemm (64x64x64)     the same for a small matrix product
//   record_conv (...)          a small Conv planned and recorded per call, against the
//   ConvPlan::record (...)     same Conv's plan made once (what an ONNX node does from its second run)
// Small tensors: the GPU's own time stays out of the figures (nothing waits for it until the end).
#include <fmt/format.h>

#include <chrono>
#include <string>
#include <vector>

#include "gpu/buffer_pool.h"
#include "gpu/command_recorder.h"
#include "gpu/pipeline_cache.h"
#include "kernels/common/tensor_access.h"
#include "kernels/conv/conv_plan.h"
#include "kernels/elementwise/elementwise_kernel.h"
#include "kernels/gemm/gemm.h"
#include "kernels/kernel_context.h"
#include "kernels/shader_template.h"

using namespace onda;

namespace {

template <typename F>
double us_per_call(int count, F f) {
  for (int i = 0; i < std::min(count, 50); ++i) f(i);  // warm-up: compile, allocate
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < count; ++i) f(i);
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count() / count;
}

}  // namespace

int main(int argc, char** argv) {
  int count = 2000;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::string(argv[i]) == "--count") count = std::stoi(argv[i + 1]);
  }
  gpu::Context context;
  gpu::BufferPool pool(context);
  gpu::PipelineCache pipelines(context);
  kernels::KernelContext kc{context, pipelines};
  fmt::print("adapter: {} ({}), {} calls each\n", context.adapter_description().name, context.adapter_description().backend,
             count);

  std::vector<float> host(64 * 64, 0.5f);
  Tensor a = Tensor::upload(context, pool, DType::f32, {64, 64}, host.data());
  Tensor b = Tensor::upload(context, pool, DType::f32, {64, 64}, host.data());
  Tensor y = Tensor::empty(pool, DType::f32, {64, 64});
  context.finish();

  const kernels::TemplateValues values = {{"X_ACCESS", kernels::tensor_access("x", 0, DType::f32, false)},
                                          {"Y_ACCESS", kernels::tensor_access("y", 1, DType::f32, true)},
                                          {"LOG_SOFTMAX", "0"},
                                          {"INNER_ONE", "1"}};
  (void)kernels::shader_pipeline(pipelines, "softmax/softmax.wgsl", values, "bench softmax");
  fmt::print("{:<28} {:8.2f} us\n", "shader_pipeline hit", us_per_call(count, [&](int) {
               (void)kernels::shader_pipeline(pipelines, "softmax/softmax.wgsl", values, "bench softmax");
             }));

  // A real pipeline to bind: y = a + b through the elementwise kernel records it once.
  const kernels::ElementwiseOp add = kernels::ElementwiseOp::Add;
  const Tensor inputs[] = {a, b};
  {
    gpu::CommandRecorder recorder(context);
    kernels::record_elementwise(kc, recorder, add, inputs, y);
    recorder.submit_and_wait();
  }
  const std::string text(6000, ' ');  // the size of a typical rendered kernel
  const std::string wgsl = "@compute @workgroup_size(1) fn main() {}\n" + text;
  (void)pipelines.get(wgsl, {}, "bench");
  fmt::print("{:<28} {:8.2f} us  ({} bytes of WGSL)\n", "pipeline lookup hit",
             us_per_call(count, [&](int) { (void)pipelines.get(wgsl, {}, "bench"); }), wgsl.size());

  const wgpu::ComputePipeline& pipeline = pipelines.get(
      "@group(0) @binding(0) var<storage, read> a: array<f32>;\n"
      "@group(0) @binding(1) var<storage, read> b: array<f32>;\n"
      "@group(0) @binding(2) var<storage, read_write> y: array<f32>;\n"
      "@group(0) @binding(3) var<uniform> n: vec4<u32>;\n"
      "@compute @workgroup_size(64) fn main(@builtin(global_invocation_id) i: vec3<u32>) {\n"
      "  if (i.x < n.x) { y[i.x] = a[i.x] + b[i.x]; }\n}\n",
      {}, "bench add");
  const gpu::BufferBinding bindings[] = {a.binding(context), b.binding(context), y.binding(context)};
  const uint32_t n[4] = {64 * 64, 0, 0, 0};
  {
    gpu::CommandRecorder recorder(context);
    recorder.dispatch(pipeline, bindings, n, sizeof n, {64, 1, 1}, "add");
    recorder.submit_and_wait();
    const wgpu::Buffer uniform =
        gpu::create_buffer(context, 256, wgpu::BufferUsage::Uniform | wgpu::BufferUsage::CopyDst, "bench uniform");
    wgpu::BindGroupEntry entries[4];
    for (int i = 0; i < 3; ++i) {
      entries[i].binding = i;
      entries[i].buffer = bindings[i].buffer;
      entries[i].offset = bindings[i].offset;
      entries[i].size = bindings[i].size ? bindings[i].size : bindings[i].buffer.GetSize() - bindings[i].offset;
    }
    entries[3].binding = 3;
    entries[3].buffer = uniform;
    entries[3].offset = 0;
    entries[3].size = 16;
    const wgpu::BindGroupLayout layout = pipeline.GetBindGroupLayout(0);
    wgpu::BindGroupDescriptor descriptor;
    descriptor.layout = layout;
    descriptor.entryCount = 4;
    descriptor.entries = entries;
    std::vector<wgpu::BindGroup> keep;
    keep.reserve(count + 64);
    fmt::print("{:<28} {:8.2f} us\n", "GetBindGroupLayout",
               us_per_call(count, [&](int) { (void)pipeline.GetBindGroupLayout(0); }));
    fmt::print("{:<28} {:8.2f} us\n", "CreateBindGroup",
               us_per_call(count, [&](int) { keep.push_back(context.device().CreateBindGroup(&descriptor)); }));
  }

  // The same run recorded twice by fresh recorders: the second finds the first's bind groups.
  for (const char* run : {"dispatch (first run)", "dispatch (repeat run)"}) {
    gpu::CommandRecorder recorder(context);
    const double record_us =
        us_per_call(count, [&](int) { recorder.dispatch(pipeline, bindings, n, sizeof n, {64, 1, 1}, "add"); });
    const auto start = std::chrono::steady_clock::now();
    recorder.submit();
    const double submit_us =
        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count() /
        (count + std::min(count, 50));
    context.finish();
    fmt::print("{:<28} {:8.2f} us\n", run, record_us);
    fmt::print("{:<28} {:8.2f} us\n", "Finish + Submit", submit_us);
  }
  for (int repeat = 0; repeat < 2; ++repeat) {  // (the second: a repeat run)
    gpu::CommandRecorder recorder(context);
    fmt::print("{:<28} {:8.2f} us\n", repeat ? "record_elementwise (repeat)" : "record_elementwise (Add)",
               us_per_call(count, [&](int) { kernels::record_elementwise(kc, recorder, add, inputs, y); }));
    recorder.submit_and_wait();
  }
  for (int repeat = 0; repeat < 2; ++repeat) {
    gpu::CommandRecorder recorder(context);
    kernels::gemm::GemmProblem problem;
    problem.a_shape = {64, 64};
    problem.b_shape = {64, 64};
    kernels::gemm::GemmTensors t;
    t.a = a;
    t.b = b;
    t.out = y;
    fmt::print("{:<28} {:8.2f} us\n", repeat ? "record_gemm (repeat)" : "record_gemm (64x64x64)",
               us_per_call(count, [&](int) { kernels::gemm::record_gemm(kc, recorder, problem, t); }));
    const kernels::gemm::Gemm planned(kc, problem);
    fmt::print("{:<28} {:8.2f} us\n", repeat ? "Gemm::record (repeat)" : "Gemm::record (planned)",
               us_per_call(count, [&](int) { planned.record(recorder, t); }));
    recorder.submit_and_wait();
  }
  // Conv [1, 64, 256]: pointwise on the GEMM path (no column buffer) and 3 taps on the direct kernel;
  // the second round a repeat run (bind groups found).
  for (const int64_t taps : {1, 3}) {
    namespace conv = kernels::conv;
    conv::ConvAttributes attributes;
    attributes.pads = {taps / 2, taps / 2};
    const conv::ConvGeometry g = conv::resolve_conv({1, 64, 256}, {64, 64, taps}, attributes);
    conv::ConvTensors t;
    t.x = Tensor::empty(pool, DType::f32, {1, 64, 256});
    t.weights.w = Tensor::empty(pool, DType::f32, {64, 64, taps});
    t.y = Tensor::empty(pool, DType::f32, g.output_shape());
    conv::ConvOptions options;
    options.path = taps == 1 ? conv::ConvPath::gemm : conv::ConvPath::direct;
    const conv::ConvPlan plan(kc, g, conv::ConvOperands::of(kc, t.x, t.weights, Tensor(), t.y), options);
    for (int repeat = 0; repeat < 2; ++repeat) {
      const std::string what =
          std::string(taps == 1 ? "(gemm 1x1" : "(direct k3") + (repeat ? ", repeat)" : ")");
      gpu::CommandRecorder recorder(context);
      fmt::print("{:<28} {:8.2f} us\n", "record_conv " + what, us_per_call(count, [&](int) {
                   conv::record_conv(kc, recorder, pool, g, t.x, t.weights.w, Tensor(), t.y, options);
                 }));
      fmt::print("{:<28} {:8.2f} us\n", "ConvPlan::record " + what,
                 us_per_call(count, [&](int) { plan.record(recorder, pool, t); }));
      recorder.submit_and_wait();
    }
  }
  return 0;
}
