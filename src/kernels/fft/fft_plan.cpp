#include "kernels/fft/fft_plan.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <stdexcept>

#include "gpu/gpu_error.h"

namespace onda::kernels::fft {
namespace {

constexpr int64_t kComplexBytes = 8;  // vec2<f32> in workgroup and scratch memory
constexpr int kMaxThreadsPerTransform = 256;
constexpr int kMinWorkgroupSize = 64;
constexpr int64_t kSmallExchange = 1024;
constexpr int kSmallRegisters = 16;
constexpr int kLargeRegisters = 32;

int64_t ceil_div(int64_t a, int64_t b) {
  return (a + b - 1) / b;
}

// Longest pass that fits one workgroup's memory.
int64_t max_pass_length(const FftDeviceLimits& limits) {
  return static_cast<int64_t>(limits.workgroup_storage_bytes / kComplexBytes);
}

// Longest transform one whole pass holds: up to twice max_pass_length where the halves go through
// workgroup memory one after the other (split_exchange), as far as the points fit the registers of a
// full workgroup (32 per thread: 32768 points at 1024 invocations, 8192 at WebGPU's default 256).
int64_t max_whole_length(const FftDeviceLimits& limits) {
  if (!limits.split_exchange) return max_pass_length(limits);
  const int64_t register_points = int64_t{limits.max_invocations_per_workgroup} * kLargeRegisters;
  const int64_t longest =
      std::max(max_pass_length(limits), std::min(2 * max_pass_length(limits), register_points));
  return longest;
}

// The four-step split N1 * N2 = n with N1 <= max_length and N2 <= max_rows (default: max_length);
// {0, 0} when impossible. Short columns (N1 near 64: many transforms per workgroup, hence long runs of
// consecutive columns in the strided reads) while the rows still fit `run_rows` (the longest rows
// whose pass holds a run of 8 for its strided writes; max_rows where the rows are written whole, as in
// Bluestein's fused rows_convolve); else as balanced as possible. On GPUs columns near 64 beat the
// balanced split, while columns far shorter or longer than 64 lost (measured sweeps:
// docs/benchmark-log.md).
std::pair<int64_t, int64_t> four_step_split(int64_t n, int64_t max_length, int64_t max_rows = 0,
                                            int64_t run_rows = 0) {
  if (max_rows == 0) max_rows = max_length;
  if (run_rows == 0) run_rows = max_rows;
  const auto distance_from_64 = [](int64_t n1) { return std::abs(std::log2(static_cast<double>(n1)) - 6.0); };
  std::pair<int64_t, int64_t> best{0, 0}, short_columns{0, 0};
  for (int64_t n1 = 2; n1 <= max_length && n1 < n; ++n1) {
    if (n % n1 != 0 || n / n1 > max_rows) continue;
    const int64_t n2 = n / n1;
    if (best.first == 0 || std::max(n1, n2) < std::max(best.first, best.second)) best = {n1, n2};
    if (n2 <= run_rows &&
        (short_columns.first == 0 || distance_from_64(n1) < distance_from_64(short_columns.first))) {
      short_columns = {n1, n2};
    }
  }
  return short_columns.first != 0 ? short_columns : best;
}

StockhamPassPlan make_pass(PassShape shape, int64_t length, int64_t other_factor, int64_t batch,
                           const FftDeviceLimits& limits, bool paired_rows = false,
                           int64_t outer_factor = 1) {
  StockhamPassPlan pass;
  pass.shape = shape;
  pass.length = length;
  pass.other_factor = other_factor;
  pass.outer_factor = outer_factor;
  pass.paired_rows = paired_rows;
  pass.transform_count = batch * pass.transforms_per_sequence();
  pass.radices = choose_radices(length);
  const int64_t thread_cap = std::min<int64_t>(kMaxThreadsPerTransform, limits.max_invocations_per_workgroup);
  // About one radix-8 butterfly per thread; smaller radices loop over a few butterflies.
  pass.threads_per_transform = static_cast<int>(std::min<int64_t>(ceil_div(length, 8), thread_cap));
  // Two shader classes only (each pipeline costs seconds to compile on CPU adapters): small passes
  // share 64-thread workgroups and 1024 points of workgroup memory; large ones get a full workgroup.
  const int64_t max_exchange = max_pass_length(limits);
  // A paired-rows pass needs two rows per workgroup: the small class's 64 threads may hold one only
  // (r2c N = 2^18 on a CPU adapter: rows of 512 points, 64 threads each).
  const bool small = pass.threads_per_transform <= kMinWorkgroupSize && length <= kSmallExchange &&
                     kSmallExchange <= max_exchange && !paired_rows;
  pass.workgroup_size = static_cast<int>(small ? kMinWorkgroupSize : thread_cap);
  pass.exchange_length = small ? kSmallExchange : max_exchange;
  pass.max_registers = small ? kSmallRegisters : kLargeRegisters;
  // Small transforms share a workgroup so that a workgroup still has a useful number of threads.
  int64_t per_group = pass.workgroup_size / pass.threads_per_transform;
  per_group = std::min<int64_t>(per_group, pass.exchange_length / length);
  per_group = std::max<int64_t>(1, std::min(per_group, pass.transform_count));
  if (paired_rows) {
    per_group -= per_group % 2;
    if (per_group < 2) {
      throw gpu::DeviceLimitError(fmt::format("FFT rows pass of {} points: two rows do not fit a workgroup", length));
    }
  }
  pass.transforms_per_workgroup = static_cast<int>(per_group);
  for (int radix : pass.radices) {
    const int64_t registers = ceil_div(length / radix, pass.threads_per_transform) * radix;
    // A pass only the unrolled shader can hold (split exchange) is re-shaped by specialise_pass.
    if (registers > pass.max_registers && length <= max_exchange) {
      throw gpu::DeviceLimitError(
          fmt::format("FFT pass of {} points needs {} registers per thread (limit {})", length, registers,
                      pass.max_registers));
    }
  }
  return pass;
}

// Longest row of a paired-rows pass: two rows (padded as the unrolled passes pad, plus one point
// each) fit workgroup memory, and the generic pass's rows of at most 128 threads leave two per
// 256-thread workgroup.
int64_t max_paired_row_length(const FftDeviceLimits& limits) {
  const int64_t points = max_pass_length(limits) / 2 - 1;
  return std::min<int64_t>(points * 8 / 9, 1024);
}

// Three passes N1 x N2 x N3 = n for a long complex transform (PassShape::inner_columns): short
// transforms in every pass, each reading and writing runs of consecutive points (N1's bins k1 in the
// last pass, n3 in the middle one), at the price of a third round trip through memory. Opt-in, from
// limits.three_pass_from points (0, the default: never: on an H200 it ran slower than two passes,
// the third round trip costing more than the longer runs gain; tests and sweeps set it). Factors as
// equal as possible, N1 and N3 >= 32 where there is a choice (runs of 32). std::nullopt when n is
// shorter or does not split into three factors that fit a pass.
std::optional<std::array<int64_t, 3>> three_pass_split(int64_t n, const FftDeviceLimits& limits) {
  if (limits.three_pass_from <= 0 || n < limits.three_pass_from) return std::nullopt;
  const int64_t max_length = max_pass_length(limits);
  std::optional<std::array<int64_t, 3>> best;
  auto score = [](const std::array<int64_t, 3>& f) {
    const int64_t short_runs = (f[0] < 32) + (f[2] < 32);
    return std::pair{short_runs, std::max({f[0], f[1], f[2]})};
  };
  for (int64_t n1 = 2; n1 <= max_length && n1 < n; ++n1) {
    if (n % n1 != 0) continue;
    for (int64_t n2 = 2; n2 <= max_length && n2 < n / n1; ++n2) {
      if ((n / n1) % n2 != 0) continue;
      const int64_t n3 = n / n1 / n2;
      if (n3 < 2 || n3 > max_length) continue;
      const std::array<int64_t, 3> f{n1, n2, n3};
      if (!best || score(f) < score(*best)) best = f;
    }
  }
  return best;
}

// The passes of one forward FFT of length `n` from `source` to `sink`; with paired_rows a four-step
// plan's rows pass holds row pairs (see StockhamPassPlan::paired_rows).
std::vector<StockhamPassPlan> fft_passes(int64_t n, int64_t batch, SequenceSource source, SequenceSink sink,
                                         const FftDeviceLimits& limits, bool paired_rows = false) {
  if (n <= max_whole_length(limits)) {
    StockhamPassPlan pass = make_pass(PassShape::whole, n, 1, batch, limits);
    pass.source = source;
    pass.sink = sink;
    return {pass};
  }
  // Rows written in runs of 8 (split exchanges double the points of plain rows passes; stockham_unrolled.h)
  // unless Bluestein's convolution will write them whole (fuse_bluestein_convolution, which also needs
  // its forward and inverse FFTs split alike).
  const int64_t row_points = max_pass_length(limits) * (limits.split_exchange && !paired_rows ? 2 : 1);
  const bool rows_written_whole = limits.split_exchange && source != SequenceSource::user_input;
  const int64_t max_rows = paired_rows ? max_paired_row_length(limits) : max_pass_length(limits);
  if (source == SequenceSource::user_input && sink == SequenceSink::user_output && !paired_rows) {
    if (auto factors = three_pass_split(n, limits)) {
      const auto [n1, n2, n3] = *factors;
      StockhamPassPlan first = make_pass(PassShape::columns, n1, n2 * n3, batch, limits);
      first.source = source;
      StockhamPassPlan middle = make_pass(PassShape::inner_columns, n2, n3, batch, limits, false, n1);
      StockhamPassPlan last = make_pass(PassShape::inner_rows, n3, n2, batch, limits, false, n1);
      last.sink = sink;
      return {first, middle, last};
    }
  }
  auto [n1, n2] = four_step_split(n, max_pass_length(limits), max_rows,
                                  rows_written_whole ? max_rows : std::max<int64_t>(1, row_points / 8 - 1));
  StockhamPassPlan columns = make_pass(PassShape::columns, n1, n2, batch, limits);
  columns.source = source;
  StockhamPassPlan rows = make_pass(PassShape::rows, n2, n1, batch, limits, paired_rows);
  rows.sink = sink;
  return {columns, rows};
}

}  // namespace

const char* algorithm_name(FftAlgorithm algorithm) {
  switch (algorithm) {
    case FftAlgorithm::stockham_workgroup:
      return "stockham_workgroup";
    case FftAlgorithm::four_step:
      return "four_step";
    case FftAlgorithm::bluestein:
      return "bluestein";
  }
  return "?";
}

int64_t StockhamPassPlan::transforms_per_sequence() const {
  if (shape == PassShape::whole) return 1;
  if (shape == PassShape::inner_columns || shape == PassShape::inner_rows) return other_factor * outer_factor;
  return paired_rows ? 2 * (other_factor / 2 + 1) : other_factor;
}

int64_t StockhamPassPlan::workgroup_count() const {
  return ceil_div(transform_count, transforms_per_workgroup);
}

bool is_seven_smooth(int64_t n) {
  if (n < 1) return false;
  for (int p : {2, 3, 5, 7}) {
    while (n % p == 0) n /= p;
  }
  return n == 1;
}

int64_t next_seven_smooth(int64_t n) {
  int64_t m = std::max<int64_t>(n, 1);
  while (!is_seven_smooth(m)) ++m;
  return m;
}

int64_t bluestein_min_length(int64_t n) {
  return std::max<int64_t>(2 * n - 2, 1);
}

std::vector<int> choose_radices(int64_t length) {
  if (!is_seven_smooth(length)) {
    throw std::invalid_argument(fmt::format("FFT length {} has a prime factor > 7: no radix plan", length));
  }
  std::vector<int> radices;
  int64_t n = length;
  int twos = 0;
  while (n % 2 == 0) n /= 2, ++twos;
  // Powers of two as radix 8 where possible; 2^1 left over becomes 4*... by trading one 8 for 4*4.
  int eights = twos / 3;
  const int rest = twos % 3;
  int fours = 0, pairs = 0;
  if (rest == 2) fours = 1;
  if (rest == 1) {
    if (eights > 0)
      --eights, fours = 2;
    else
      pairs = 1;
  }
  radices.insert(radices.end(), eights, 8);
  for (int p : {7, 5}) {
    while (n % p == 0) n /= p, radices.push_back(p);
  }
  radices.insert(radices.end(), fours, 4);
  while (n % 3 == 0) n /= 3, radices.push_back(3);
  radices.insert(radices.end(), pairs, 2);
  std::stable_sort(radices.begin(), radices.end(), [](int a, int b) { return a > b; });
  return radices;
}

FftPlan FftPlan::create(const FftDescription& description, const FftDeviceLimits& limits) {
  description.validate();
  FftPlan plan;
  plan.description = description;
  const int64_t n = description.length;
  const int64_t batch = description.batch();
  const int64_t max_length = max_pass_length(limits);
  const int64_t max_whole = max_whole_length(limits);
  auto fits = [&](int64_t length) {
    return length <= max_whole || four_step_split(length, max_length).first != 0;
  };

  // A four-step forward real plan needs its rows in pairs (fft_passes); N/2 = N1 * N2 must split so.
  const bool packable = (description.domain == FftDomain::real_to_complex &&
                         description.direction == FftDirection::forward &&
                         (n / 2 <= max_whole ||
                          four_step_split(n / 2, max_length, max_paired_row_length(limits)).first != 0)) ||
                        (description.domain == FftDomain::complex_to_real &&
                         description.direction == FftDirection::inverse && fits(n / 2));
  if (n % 2 == 0 && n >= 2 && is_seven_smooth(n / 2) && packable) {
    plan.real_packed = true;
    plan.fft_length = n / 2;
    plan.algorithm = n / 2 <= max_whole ? FftAlgorithm::stockham_workgroup : FftAlgorithm::four_step;
    plan.passes = fft_passes(n / 2, batch, SequenceSource::user_input, SequenceSink::user_output, limits,
                             description.domain == FftDomain::real_to_complex);
  } else if (is_seven_smooth(n)) {
    if (!fits(n)) {
      throw gpu::DeviceLimitError(
          fmt::format("FFT {}: length is longer than two passes of {} points can hold", description.summary(),
                      max_length));
    }
    plan.fft_length = n;
    plan.algorithm = n <= max_whole ? FftAlgorithm::stockham_workgroup : FftAlgorithm::four_step;
    plan.passes = fft_passes(n, batch, SequenceSource::user_input, SequenceSink::user_output, limits);
  } else {
    // Bluestein: the convolution needs the kernel c_d for every lag d in (-N, N), at d mod M. The usual
    // bound M >= 2N - 1 keeps all 2N - 1 lags apart; but c is even (c_-d = c_d), so at M = 2N - 2 the
    // only lags that share a slot, N - 1 and -(N - 1), hold the same value, and M >= 2N - 2 suffices.
    // That matters for N = 2^k + 1 (65537: M = 2^17 instead of 131220).
    int64_t m = next_seven_smooth(bluestein_min_length(n));
    while (!fits(m)) {
      if (m > max_length * max_length) {
        throw gpu::DeviceLimitError(
            fmt::format("FFT {}: Bluestein length {} does not fit two passes of {} points",
                        description.summary(), m, max_length));
      }
      m = next_seven_smooth(m + 1);
    }
    plan.algorithm = FftAlgorithm::bluestein;
    plan.fft_length = m;
    plan.needs_spectrum = true;
    plan.passes = fft_passes(m, batch, SequenceSource::chirp_input, SequenceSink::spectrum, limits);
    auto inverse =
        fft_passes(m, batch, SequenceSource::spectrum_product, SequenceSink::bluestein_output, limits);
    plan.passes.insert(plan.passes.end(), inverse.begin(), inverse.end());
  }
  plan.needs_stage_scratch =
      std::any_of(plan.passes.begin(), plan.passes.end(),
                  [](const StockhamPassPlan& p) { return p.shape != PassShape::whole; });
  plan.needs_spectrum = plan.needs_spectrum ||
                        std::any_of(plan.passes.begin(), plan.passes.end(), [](const StockhamPassPlan& p) {
                          return p.shape == PassShape::inner_columns;
                        });

  // Scratch must fit one storage binding: a long batch runs in chunks of whole outer rows.
  plan.outer_per_chunk = description.outer_count;
  const uint64_t row_scratch_bytes =
      static_cast<uint64_t>(description.inner_count) * plan.fft_length * kComplexBytes;
  if ((plan.needs_stage_scratch || plan.needs_spectrum) &&
      row_scratch_bytes * description.outer_count > limits.max_storage_binding_bytes) {
    plan.outer_per_chunk = static_cast<int64_t>(limits.max_storage_binding_bytes / row_scratch_bytes);
    if (plan.outer_per_chunk == 0) {
      throw gpu::DeviceLimitError(fmt::format(
          "FFT {}: scratch of {} bytes for one outer row exceeds maxStorageBufferBindingSize ({} bytes)",
          description.summary(), row_scratch_bytes, limits.max_storage_binding_bytes));
    }
    for (StockhamPassPlan& pass : plan.passes) {
      pass.transform_count = plan.chunk_batch() * pass.transforms_per_sequence();
      if (!pass.paired_rows) {
        pass.transforms_per_workgroup =
            static_cast<int>(std::min<int64_t>(pass.transforms_per_workgroup, pass.transform_count));
      }
    }
  }
  for (const StockhamPassPlan& pass : plan.passes) {
    if (pass.radices.size() > 16) {
      throw gpu::DeviceLimitError(fmt::format("FFT {}: a pass of {} points needs more than 16 stages",
                                              description.summary(), pass.length));
    }
    if (pass.workgroup_count() >
        int64_t{limits.max_workgroups_per_dimension} * limits.max_workgroups_per_dimension) {
      throw gpu::DeviceLimitError(fmt::format("FFT {}: {} workgroups exceed the dispatch limit",
                                              description.summary(), pass.workgroup_count()));
    }
  }
  return plan;
}

std::string FftPlan::summary() const {
  std::string text = fmt::format("{} {}{} F={}", description.summary(), algorithm_name(algorithm),
                                 real_packed ? " real_packed" : "", fft_length);
  if (outer_per_chunk < description.outer_count) text += fmt::format(" chunks of {} outer", outer_per_chunk);
  for (const StockhamPassPlan& pass : passes) {
    text += fmt::format(
        " | L={} radices={} threads={}x{} (workgroup {}, exchange {}, registers {}{}{}{})", pass.length,
        fmt::join(pass.radices, ","), pass.threads_per_transform, pass.transforms_per_workgroup,
        pass.workgroup_size, pass.exchange_length, pass.max_registers,
        pass.unrolled ? (pass.split_exchange ? ", unrolled, split" : ", unrolled") : "",
        pass.padded_exchange     ? ", padded"
        : pass.swizzled_exchange ? ", swizzled"
                                 : "",
        pass.group_iterations > 1 ? fmt::format(", {} groups each", pass.group_iterations) : "");
  }
  return text;
}

}  // namespace onda::kernels::fft
