#include "kernels/fft/fft_kernel.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <stdexcept>
#include <string>

#include "gpu/transfer.h"
#include "kernels/fft/fft_tables.h"
#include "kernels/fft/stockham_unrolled.h"

namespace onda::kernels::fft {
namespace {

// Mirrors `struct Params` of fft/stockham_pass.wgsl.
struct PassUniforms {
  uint32_t transform_count, inner_count, input_length, length;
  uint32_t in_offset, in_outer_stride, in_inner_stride, in_axis_stride;
  uint32_t out_offset, out_outer_stride, out_inner_stride, out_axis_stride;
  float scale;
  uint32_t fft_length, pass_length, other_factor;
  uint32_t stage_count, threads_per_transform, transforms_per_workgroup, chirp_offset;
  uint32_t kernel_offset, half_length;
  float conjugate;
  uint32_t input_kind, output_kind, window_offset, real_offset, split_twiddle_offset;
  uint32_t radices[16];
};
static_assert(sizeof(PassUniforms) == 176);

void append(std::vector<float>& table, const std::vector<ComplexDouble>& values) {
  for (const ComplexDouble& v : values) {
    table.push_back(static_cast<float>(v.real()));
    table.push_back(static_cast<float>(v.imag()));
  }
}

// The limits a plan is made for: the unrolled path may split whole passes' exchanges
// (FftDeviceLimits::split_exchange).
// The uniforms every pass shares, from the plan (the tensors' offsets and the pass fields aside).
PassUniforms plan_uniforms(const FftPlan& plan, uint64_t split_twiddle_offset) {
  const FftDescription& d = plan.description;
  PassUniforms u{};
  u.inner_count = static_cast<uint32_t>(d.inner_count);
  u.input_length = static_cast<uint32_t>(d.input_samples());
  u.length = static_cast<uint32_t>(d.length);
  u.half_length = static_cast<uint32_t>(d.length / 2);
  u.fft_length = static_cast<uint32_t>(plan.fft_length);
  u.chirp_offset = static_cast<uint32_t>(plan.fft_length);
  u.kernel_offset = static_cast<uint32_t>(plan.fft_length + d.length);
  u.in_outer_stride = static_cast<uint32_t>(d.input.outer_stride);
  u.in_inner_stride = static_cast<uint32_t>(d.input.inner_stride);
  u.in_axis_stride = static_cast<uint32_t>(d.input.axis_stride);
  u.out_outer_stride = static_cast<uint32_t>(d.output.outer_stride);
  u.out_inner_stride = static_cast<uint32_t>(d.output.inner_stride);
  u.out_axis_stride = static_cast<uint32_t>(d.output.axis_stride);
  const UserKinds kinds = user_kinds(plan);
  u.input_kind = kinds.input;
  u.output_kind = kinds.output;
  u.real_offset = static_cast<uint32_t>(plan.fft_length);
  u.split_twiddle_offset = static_cast<uint32_t>(split_twiddle_offset);
  u.conjugate = d.direction == FftDirection::inverse ? -1.0f : 1.0f;
  u.scale = d.normalize ? static_cast<float>(1.0 / static_cast<double>(d.length)) : 1.0f;
  return u;
}

// The fields of one pass over `transforms` transforms.
void set_pass_uniforms(PassUniforms& u, const StockhamPassPlan& pass, int64_t transforms) {
  u.transform_count = static_cast<uint32_t>(transforms);
  u.pass_length = static_cast<uint32_t>(pass.length);
  u.other_factor = static_cast<uint32_t>(pass.other_factor);
  u.stage_count = static_cast<uint32_t>(pass.radices.size());
  u.threads_per_transform = static_cast<uint32_t>(pass.threads_per_transform);
  u.transforms_per_workgroup = static_cast<uint32_t>(pass.transforms_per_workgroup);
  std::fill(std::begin(u.radices), std::end(u.radices), 0u);
  std::copy(pass.radices.begin(), pass.radices.end(), std::begin(u.radices));
}

FftDeviceLimits planning_limits(const gpu::Context& context, const std::optional<FftDeviceLimits>& limits,
                                FftCodePath code_path) {
  FftDeviceLimits device = limits ? *limits : fft_device_limits(context);
  device.split_exchange = resolve_code_path(context, code_path) == FftCodePath::unrolled;
  return device;
}

}  // namespace

FftDeviceLimits fft_device_limits(const gpu::Context& context) {
  const wgpu::Limits& l = context.limits();
  FftDeviceLimits limits;
  limits.workgroup_storage_bytes = l.maxComputeWorkgroupStorageSize;
  limits.max_invocations_per_workgroup =
      std::min(l.maxComputeInvocationsPerWorkgroup, l.maxComputeWorkgroupSizeX);
  limits.max_storage_binding_bytes = l.maxStorageBufferBindingSize;
  limits.max_workgroups_per_dimension = l.maxComputeWorkgroupsPerDimension;
  return limits;
}

FftCodePath resolve_code_path(const gpu::Context& context, FftCodePath requested) {
  if (requested != FftCodePath::automatic) return requested;
  // Unrolled pipelines cost 0.5-5 s each to compile on a CPU adapter (lavapipe), and run no faster there.
  return context.adapter_description().type == "CPU" ? FftCodePath::generic : FftCodePath::unrolled;
}

FftKernel::FftKernel(gpu::Context& context, gpu::BufferPool& pool, gpu::PipelineCache& pipelines,
                     const FftDescription& description, const std::optional<FftDeviceLimits>& limits,
                     const FftTuning& tuning)
    : context_(context),
      pipelines_(pipelines),
      plan_(FftPlan::create(description, planning_limits(context, limits, tuning.code_path))) {
  if (resolve_code_path(context, tuning.code_path) == FftCodePath::unrolled) {
    const FftDeviceLimits device = planning_limits(context, limits, tuning.code_path);
    fuse_bluestein_convolution(plan_);
    for (StockhamPassPlan& pass : plan_.passes) specialise_pass(pass, device, tuning);
  }
  vec2_io_ = vec2_user_io(plan_);
  passes_ = compile_passes(vec2_io_);
  std::vector<float> table;
  append(table, twiddle_table(plan_.fft_length));
  if (plan_.algorithm == FftAlgorithm::bluestein) {
    append(table, bluestein_chirp(description.length));
    append(table, bluestein_kernel_spectrum(description.length, plan_.fft_length));
  }
  if (plan_.real_packed) {
    std::vector<ComplexDouble> real_twiddles = twiddle_table(description.length);  // W_N^k, k <= N/2
    real_twiddles.resize(description.length / 2 + 1);
    append(table, real_twiddles);
  }
  split_twiddle_offset_ = table.size() / 2;
  if (plan_.needs_stage_scratch) append(table, split_twiddle_table(plan_.fft_length));
  tables_bytes_ = table.size() * sizeof(float);
  tables_ = pool.acquire(tables_bytes_);
  gpu::upload(context, tables_->buffer(), 0, table.data(), tables_bytes_);
  scratch_bytes_ = static_cast<uint64_t>(plan_.chunk_batch()) * plan_.fft_length * 8;
  if (plan_.needs_stage_scratch) stage_scratch_ = pool.acquire(scratch_bytes_);
  if (plan_.needs_spectrum) spectrum_ = pool.acquire(scratch_bytes_);
}

FftKernel::FftKernel(const KernelContext& kc, gpu::BufferPool& pool, const FftDescription& description,
                     const std::optional<FftDeviceLimits>& limits)
    : FftKernel(kc.gpu, pool, kc.pipelines, description, limits, kc.tuning.fft) {}

std::vector<FftKernel::CompiledPass> FftKernel::compile_passes(bool vec2_io) const {
  std::vector<CompiledPass> passes;
  for (size_t i = 0; i < plan_.passes.size(); ++i) {
    GeneratedPass generated = generate_stockham_pass(plan_, i, vec2_io);
    const std::string label = fmt::format("fft pass {} of {}", i, plan_.summary());
    passes.push_back({pipelines_.get(generated.wgsl, {}, label), std::move(generated.bindings)});
  }
  return passes;
}

void FftKernel::check_tensor(const Tensor& tensor, const FftLayout& layout, int64_t samples, bool real,
                             const char* which) const {
  const FftDescription& d = plan_.description;
  if (!tensor.defined())
    throw std::invalid_argument(fmt::format("FFT {}: {} tensor is empty", d.summary(), which));
  if (tensor.dtype() != d.dtype) {
    throw std::invalid_argument(fmt::format("FFT {}: {} tensor is {}, the plan wants {}", d.summary(), which,
                                            dtype_name(tensor.dtype()), dtype_name(d.dtype)));
  }
  const int64_t last = layout.offset + (d.outer_count - 1) * layout.outer_stride +
                       (d.inner_count - 1) * layout.inner_stride + (samples - 1) * layout.axis_stride +
                       (real ? 0 : 1);
  if (last >= tensor.numel()) {
    throw std::invalid_argument(
        fmt::format("FFT {}: {} layout reaches element {} but the {} tensor {} has {}", d.summary(), which,
                    last, which, shape_string(tensor.shape()), tensor.numel()));
  }
  if (last + tensor.element_offset(context_) > int64_t{0xFFFFFFFF}) {
    throw std::invalid_argument(
        fmt::format("FFT {}: {} layout exceeds 32-bit element indices", d.summary(), which));
  }
}

void FftKernel::check_tensors(const Tensor& input, const Tensor& output, const Tensor* window) const {
  const FftDescription& d = plan_.description;
  check_tensor(input, d.input, d.input_samples(), d.input_is_real(), "input");
  check_tensor(output, d.output, d.output_samples(), d.output_is_real(), "output");
  if (d.windowed != (window != nullptr)) {
    throw std::invalid_argument(fmt::format(
        "FFT {}: {}", d.summary(),
        d.windowed ? "windowed plan but no window tensor" : "window given to an unwindowed plan"));
  }
  if (window) {
    const int64_t needed = std::min(d.length, d.input_samples());
    if (window->dtype() != d.dtype || window->numel() < needed) {
      throw std::invalid_argument(fmt::format("FFT {}: window must be {} with at least {} values, got {} {}",
                                              d.summary(), dtype_name(d.dtype), needed,
                                              dtype_name(window->dtype()), shape_string(window->shape())));
    }
  }
  if (input.buffer().Get() == output.buffer().Get()) {
    throw std::invalid_argument(
        fmt::format("FFT {}: input and output share a buffer (in-place is not supported)", d.summary()));
  }
}

std::vector<gpu::BufferBinding> FftKernel::bindings_for(const std::vector<PassBinding>& roles,
                                                        const Tensor& input, const Tensor& output,
                                                        const Tensor* window) const {
  std::vector<gpu::BufferBinding> bindings;
  for (PassBinding role : roles) {
    switch (role) {
      case PassBinding::user_input:
        bindings.push_back(input.binding(context_));
        break;
      case PassBinding::window:
        bindings.push_back(window->binding(context_));
        break;
      case PassBinding::user_output:
        bindings.push_back(output.binding(context_));
        break;
      case PassBinding::spectrum:
        bindings.push_back({spectrum_->buffer(), 0, scratch_bytes_});
        break;
      case PassBinding::stage_scratch:
        bindings.push_back({stage_scratch_->buffer(), 0, scratch_bytes_});
        break;
      case PassBinding::tables:
        bindings.push_back({tables_->buffer(), 0, tables_bytes_});
        break;
    }
  }
  return bindings;
}

// One dispatch per pass and chunk of outer transforms (plan_.outer_per_chunk: the scratch buffers
// hold one chunk).
void FftKernel::record(gpu::CommandRecorder& recorder, const Tensor& input, const Tensor& output,
                       const Tensor* window) const {
  check_tensors(input, output, window);
  const FftDescription& d = plan_.description;
  PassUniforms u = plan_uniforms(plan_, split_twiddle_offset_);
  const uint32_t in_offset = static_cast<uint32_t>(d.input.offset + input.element_offset(context_));
  const uint32_t out_offset = static_cast<uint32_t>(d.output.offset + output.element_offset(context_));
  u.window_offset = window ? window->element_offset(context_) : 0;

  const bool vec2 = vec2_io_ && in_offset % 2 == 0 && out_offset % 2 == 0;
  if (!vec2 && vec2_io_ && scalar_passes_.empty()) scalar_passes_ = compile_passes(false);
  const std::vector<CompiledPass>& passes = vec2 || !vec2_io_ ? passes_ : scalar_passes_;
  for (int64_t outer = 0; outer < d.outer_count; outer += plan_.outer_per_chunk) {
    const int64_t chunk_outer = std::min(plan_.outer_per_chunk, d.outer_count - outer);
    u.in_offset = static_cast<uint32_t>(in_offset + outer * d.input.outer_stride);
    u.out_offset = static_cast<uint32_t>(out_offset + outer * d.output.outer_stride);
    for (size_t i = 0; i < passes.size(); ++i) {
      const StockhamPassPlan& pass = plan_.passes[i];
      const int64_t transforms = chunk_outer * d.inner_count * pass.transforms_per_sequence();
      set_pass_uniforms(u, pass, transforms);
      const int64_t groups = (transforms + pass.transforms_per_workgroup - 1) / pass.transforms_per_workgroup;
      const int64_t workgroups = (groups + pass.group_iterations - 1) / pass.group_iterations;
      recorder.dispatch(passes[i].pipeline, bindings_for(passes[i].bindings, input, output, window), &u,
                        sizeof(u), gpu::split_workgroups(workgroups, context_.limits()),
                        fmt::format("fft L={} pass {}", pass.length, i));
    }
  }
}

}  // namespace onda::kernels::fft
