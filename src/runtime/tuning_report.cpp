// describe_tuning (include/onda/tuning.h): the KernelTuning a Session would carry on a device, read
// back field by field, with the automatic choices the device decides resolved through the same
// functions the kernels call.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "kernels/fft/fft_kernel.h"
#include "kernels/kernel_tuning.h"
#include "onda/tuning.h"
#include "runtime/device_impl.h"

namespace onda {
namespace {

std::string line(std::string_view field, std::string_view value, std::string_view why = {}) {
  return why.empty() ? fmt::format("{:<22} {}", field, value)
                     : fmt::format("{:<22} {}  ({})", field, value, why);
}

// Enumerator names in declaration order (the order of kernel_tuning.cpp's set_tuning forms).
const char* code_path_name(kernels::fft::FftCodePath path) {
  static const char* const names[] = {"automatic", "generic", "unrolled"};
  return names[static_cast<size_t>(path)];
}

const char* step_kernel_name(kernels::rnn::StepKernel kernel) {
  static const char* const names[] = {"automatic", "dot", "tiled", "gemm", "vec4"};
  return names[static_cast<size_t>(kernel)];
}

// The plan-overriding numbers of the FFT's unrolled passes: 0 / empty leave the planner's rule.
std::string planner_number(int64_t value) {
  return value == 0 ? "planner's rule" : std::to_string(value);
}

// A forced RNN tiling, "off", or the plan's automatic choice.
template <class Tiling>
std::string rnn_tiling(const std::optional<Tiling>& forced, bool off, std::string_view fields) {
  if (off) return "off (never chosen automatically)";
  if (!forced) return "automatic (plan_rnn: by the layer's shapes and the device's limits)";
  return fmt::format("forced ({})", fields);
}

std::vector<std::string> fft_lines(const kernels::fft::FftTuning& f, const gpu::Context& context) {
  using kernels::fft::FftCodePath;
  const FftCodePath resolved = kernels::fft::resolve_code_path(context, f.code_path);
  std::vector<std::string> lines;
  lines.push_back(
      line("fft.code_path", code_path_name(resolved),
           f.code_path == FftCodePath::automatic
               ? fmt::format("automatic on a {} adapter: generic on CPU adapters, unrolled elsewhere",
                             context.adapter_description().type)
               : "set"));
  lines.push_back(
      line("fft.real_split_pairs",
           f.real_split_pairs == kernels::fft::RealSplitPairs::by_length ? "by_length" : "every_pass",
           "by_length: packed r2c passes of 1024 to 4096 points"));
  lines.push_back(line("fft.radices",
                       f.radices.empty() ? "planner's rule" : fmt::format("{}", fmt::join(f.radices, ","))));
  lines.push_back(line("fft.threads", planner_number(f.threads)));
  lines.push_back(line("fft.per_group", planner_number(f.per_group)));
  lines.push_back(line("fft.group_iterations", planner_number(f.group_iterations)));
  return lines;
}

std::vector<std::string> rnn_lines(const kernels::rnn::RnnTuning& r) {
  std::vector<std::string> lines;
  lines.push_back(
      line("rnn.step_kernel", step_kernel_name(r.step_kernel),
           r.step_kernel == kernels::rnn::StepKernel::automatic
               ? fmt::format("on GPUs, by batch: vec4 for {}..{}, else tiled from {}; gemm from {} with "
                             "hidden >= {}; rnn_tuning.h",
                             kernels::rnn::kVec4StepMinBatch, kernels::rnn::kGemmStepMinBatch - 1,
                             kernels::rnn::kTiledMinBatch, kernels::rnn::kGemmStepMinBatch,
                             kernels::rnn::kGemmStepMinHidden)
               : "set"));
  lines.push_back(line("rnn.resident", rnn_tiling(r.resident, r.resident_off, "BM,KQ as given")));
  lines.push_back(
      line("rnn.cooperative", rnn_tiling(r.cooperative, r.cooperative_off, "JT,BM,KQ,RC as given")));
  lines.push_back(line("rnn.rows", rnn_tiling(r.rows, r.rows_off, "BM,TM,UV,KS,KB as given")));
  lines.push_back(line("rnn.tiled", rnn_tiling(r.tiled, false, "BM,TM,BU,TU,KT,KS as given")));
  lines.push_back(line("rnn.vec4", rnn_tiling(r.vec4, false, "WGX,WGY,TM,NV,BK,KS as given")));
  return lines;
}

}  // namespace

std::vector<std::string> describe_tuning(const Device& device, const std::vector<std::string>& overrides) {
  kernels::KernelTuning tuning = kernels::default_kernel_tuning();
  for (const std::string& assignment : overrides) kernels::set_tuning(tuning, assignment);
  std::vector<std::string> lines = fft_lines(tuning.fft, device.impl().context);
  const kernels::gemm::GemmTuning& g = tuning.gemm;
  lines.push_back(line("gemm.for_unroll", g.for_unroll ? "1" : "0", "the tiled GEMM's #for unrolling"));
  lines.push_back(line("gemm.tile",
                       g.tile ? fmt::format("{},{},{},{},{},{}", g.tile->wg_x, g.tile->wg_y, g.tile->tm,
                                            g.tile->bk, g.tile->nv, g.tile->group_m)
                              : "automatic",
                       g.tile ? "WGX,WGY,TM,BK,NV,GROUP_M where it fits" : "by shape and device limits"));
  lines.push_back(line("gemm.double_buffer", g.double_buffer ? "1" : "0",
                       "the tiled GEMM's two staged copies, next K step prefetched"));
  lines.push_back(line("gemm.vec_store", g.vec_store ? "1" : "0", "the tiled GEMM's vec4 output stores"));
  lines.push_back(
      line("gemm.unroll_k", g.unroll_k ? (*g.unroll_k ? "1" : "0") : "automatic",
           g.unroll_k ? "the tiled GEMM's k loop" : "the k loop unrolled on GPUs, rolled on CPU adapters"));
  lines.push_back(line("conv.implicit_gemm", tuning.conv.implicit_gemm ? "1" : "0",
                       "automatic Convs may take the implicit GEMM"));
  const uint32_t splits = tuning.attention.key_splits;
  lines.push_back(line("attention.key_splits", splits ? std::to_string(splits) : "automatic",
                       splits ? "key slices per query row" : "key slices by rows and keys (attention.h)"));
  for (std::string& l : rnn_lines(tuning.rnn)) lines.push_back(std::move(l));
  return lines;
}

}  // namespace onda
