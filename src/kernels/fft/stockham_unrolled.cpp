#include "kernels/fft/stockham_unrolled.h"

#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <vector>

#include "gpu/gpu_error.h"

namespace onda::kernels::fft {
namespace {

// The radices of choose_radices with the power-of-two part as 16s where that saves a stage without
// leaving a small radix to set the thread count: 2^4k -> 16^k, 2^(4k+3) -> 16^k 8, 2^(4k+2) -> 16^(k-1) 8 8,
// 2^(4k+1) -> 16^(k-2) 8 8 8 (else as choose_radices).
std::vector<int> radix16_radices(int64_t length) {
  std::vector<int> radices = choose_radices(length);
  int twos = 0;
  while ((length >> twos) % 2 == 0 && (length >> twos) > 1) ++twos;
  int sixteens = twos / 4, eights = 0;
  switch (twos % 4) {
    case 3: eights = 1; break;
    case 2: sixteens -= 1, eights = 2; break;
    case 1: sixteens -= 2, eights = 3; break;
    default: break;
  }
  if (sixteens <= 0) return radices;
  std::vector<int> result(sixteens, 16);
  result.insert(result.end(), eights, 8);
  for (int radix : radices) {
    if (radix % 2 != 0) result.push_back(radix);
  }
  std::stable_sort(result.begin(), result.end(), [](int a, int b) { return a > b; });
  return result;
}

int64_t ceil_div(int64_t a, int64_t b) {
  return (a + b - 1) / b;
}

int64_t padded_length(int64_t length, bool padded) {
  return padded ? length + (length >> 3) : length;
}

}  // namespace

int64_t butterfly_rounds(const StockhamPassPlan& pass, int radix) {
  return ceil_div(pass.length / radix, pass.threads_per_transform);
}

bool lanes_walk_transforms(const StockhamPassPlan& pass) {
  return pass.shape == PassShape::columns || pass.shape == PassShape::rows ||
         pass.shape == PassShape::columns_out || pass.shape == PassShape::inner_columns ||
         pass.shape == PassShape::inner_rows;
}

int64_t unrolled_exchange_stride(const StockhamPassPlan& pass) {
  const int64_t length = padded_length(pass.length, pass.padded_exchange);
  return pass.transforms_per_workgroup > 1 ? length + 1 : length;
}

// The radices of `forced` when their product is `length`; else empty (tuning sweeps).
static std::vector<int> forced_radices(const std::vector<int>& forced, int64_t length) {
  int64_t product = 1;
  for (int r : forced) {
    if (r < 2) return {};
    product *= r;
  }
  return !forced.empty() && product == length ? forced : std::vector<int>{};
}

namespace {

// The thread shape of a pass as specialise_pass settles it step by step.
struct ThreadShape {
  int64_t threads = 1;        // per transform
  int64_t per_group = 1;      // transforms per workgroup
  int64_t memory_points = 0;  // complex points the exchange may hold (twice as many when split)
};

int min_radix_of(const StockhamPassPlan& pass) {
  return pass.radices.empty() ? 1 : *std::min_element(pass.radices.begin(), pass.radices.end());
}
int max_radix_of(const StockhamPassPlan& pass) {
  return pass.radices.empty() ? 1 : *std::max_element(pass.radices.begin(), pass.radices.end());
}

// Radix 16 means fewer stages and barriers and 16 points per thread: it pays for four-step passes,
// whose many transforms per workgroup leave few threads to each, and loses for whole passes.
void choose_pass_radices(StockhamPassPlan& pass, const FftTuning& tuning) {
  if (pass.shape != PassShape::whole) pass.radices = radix16_radices(pass.length);
  // A whole pass of 8192 points (r2c 16384) runs 8,8,16,8: four stages instead of 8,8,8,4,4's five, so
  // one exchange fewer (it wins with the swizzled exchange such a pass gets, below).
  if (pass.shape == PassShape::whole && pass.length == 8192) pass.radices = {8, 8, 16, 8};
  if (auto forced = forced_radices(tuning.radices, pass.length); !forced.empty()) pass.radices = forced;
}

// Threads per transform, and whether a whole pass splits its exchange (sets pass.split_exchange).
ThreadShape choose_threads(StockhamPassPlan& pass, const FftDeviceLimits& limits, const FftTuning& tuning) {
  const int64_t max_threads = limits.max_invocations_per_workgroup;
  // A whole pass longer than workgroup memory holds as complex values exchanges its halves one after
  // the other (StockhamPassPlan::split_exchange), and so do those of 128 and of 512 points or more:
  // half the workgroup memory lets more workgroups share a multiprocessor, which outweighs the extra
  // barriers. L = 128 gains since it runs one largest-radix butterfly per thread (below); L = 256,
  // which keeps a thread per smallest-radix butterfly, loses.
  const int64_t complex_points = static_cast<int64_t>(limits.workgroup_storage_bytes / 8);
  const bool split_by_rule = pass.length == 128 || pass.length >= 512;
  pass.split_exchange = limits.split_exchange && pass.shape == PassShape::whole && !pass.paired_rows &&
                        !pass.radices.empty() && (pass.length > complex_points || split_by_rule);
  ThreadShape shape;
  shape.memory_points = complex_points * (pass.split_exchange ? 2 : 1);
  // One butterfly per thread in every stage: as many threads as the stage of the smallest radix has
  // butterflies (the larger radices' stages leave some idle); several butterflies per thread and stage
  // ran several times slower.
  // Except for whole passes of 128 and 512..4096 points (powers of two): one butterfly of the largest
  // radix per thread, the smaller radices' stages taking two rounds (fewer, busier threads won there;
  // L = 256 keeps its smallest-radix count, and where every radix is 8 nothing changes).
  const bool largest_radix_rule = pass.shape == PassShape::whole && (pass.length & (pass.length - 1)) == 0 &&
                                  (pass.length == 128 || (pass.length >= 512 && pass.length <= 4096));
  // A paired-rows pass needs two transforms per workgroup at least.
  const int64_t thread_cap = pass.paired_rows ? std::max<int64_t>(1, max_threads / 2) : max_threads;
  shape.threads = std::clamp<int64_t>(
      ceil_div(pass.length, largest_radix_rule ? max_radix_of(pass) : min_radix_of(pass)), 1, thread_cap);
  if (tuning.threads > 0) shape.threads = tuning.threads;
  shape.threads = std::clamp<int64_t>(shape.threads, 1, std::min(thread_cap, pass.length));
  return shape;
}

// Transforms per workgroup. A four-step pass reads and writes runs of consecutive transforms (one
// point of each per lane): up to 8 (64 bytes; 16 and 32 ran slower), else 4 (32 bytes, a memory
// sector) or 2, as thread and memory limits allow. Whole passes fill about 128 threads (more
// transforms per workgroup ran slower). A four-step pass may split its exchange here (and take
// other threads) where that lets it hold a longer run.
void choose_transforms_per_workgroup(StockhamPassPlan& pass, const FftDeviceLimits& limits,
                                     ThreadShape& shape) {
  const int64_t max_threads = limits.max_invocations_per_workgroup;
  constexpr int64_t kMaxRun = 8;
  if (!lanes_walk_transforms(pass)) {
    shape.per_group = std::max<int64_t>(1, 128 / shape.threads);
    return;
  }
  // Passes of very short transforms (a thread or two each) take longer runs, up to 64 threads a
  // workgroup: eight one-thread columns of 8 points would otherwise make a workgroup of 8 threads.
  const auto longest_run = [&](int64_t points, int64_t thread_count) {
    const int64_t cap = std::max<int64_t>(kMaxRun, 64 / thread_count);
    for (int64_t run : {64, 32, 16, 8, 4, 2}) {
      if (run > cap) continue;
      if (run * thread_count <= max_threads && run * (pass.length + 1) <= points &&
          pass.transform_count >= run) {
        return run;
      }
    }
    return int64_t{1};
  };
  shape.per_group = longest_run(shape.memory_points, shape.threads);
  // Four-step passes (columns / rows, not paired rows) split their exchange where that lets a
  // workgroup hold a longer run of consecutive transforms, hence longer contiguous global accesses,
  // with one butterfly of the largest radix per thread.
  const int64_t split_threads = ceil_div(pass.length, max_radix_of(pass));
  if (limits.split_exchange && !pass.paired_rows && !pass.radices.empty() &&
      longest_run(2 * shape.memory_points, split_threads) > shape.per_group) {
    pass.split_exchange = true;
    shape.memory_points *= 2;
    shape.threads = split_threads;
    shape.per_group = longest_run(shape.memory_points, shape.threads);
  }
}

// The tuning's override, then within the memory and thread limits (paired rows: an even count).
void limit_transforms_per_workgroup(const StockhamPassPlan& pass, const FftDeviceLimits& limits,
                                    const FftTuning& tuning, ThreadShape& shape) {
  const int64_t max_threads = limits.max_invocations_per_workgroup;
  int64_t& per_group = shape.per_group;
  if (tuning.per_group > 0) per_group = tuning.per_group;
  while (per_group > 1 &&
         (per_group * (pass.length + 1) > shape.memory_points || per_group * shape.threads > max_threads)) {
    --per_group;
  }
  per_group = std::max<int64_t>(1, std::min(per_group, pass.transform_count));
  if (pass.paired_rows) {
    per_group -= per_group % 2;
    if (per_group < 2) {
      throw gpu::DeviceLimitError(
          fmt::format("FFT rows pass of {} points: two rows do not fit one workgroup", pass.length));
    }
  }
}

// Padding or swizzling of the exchange in workgroup memory (bank conflicts).
void choose_exchange_layout(StockhamPassPlan& pass, const ThreadShape& shape) {
  // Padding (one slot per 8 points) spreads a stage's strided accesses over the banks. A split exchange
  // goes without (unpadded split passes ran faster; the unsplit ones lost without padding).
  const int64_t extra = shape.per_group > 1 ? 1 : 0;
  pass.padded_exchange =
      shape.per_group * (padded_length(pass.length, true) + extra) <= shape.memory_points &&
      !pass.split_exchange;
  // Split exchanges of 512 points and of more than 4096 swizzle instead (StockhamPassPlan::
  // swizzled_exchange); the passes of 1024..4096 points, one largest-radix butterfly per thread, and
  // L = 128 lost with it: the XOR costs instructions on every access where the plain index folds into
  // an immediate offset.
  const bool swizzle_by_rule = pass.split_exchange && (pass.length == 512 || pass.length > 4096);
  pass.swizzled_exchange =
      !pass.padded_exchange && pass.shape == PassShape::whole && pass.length % 32 == 0 && swizzle_by_rule;
}

// The workgroup's size and memory, the registers, the iterations and the real split's pairing.
void apply_thread_shape(StockhamPassPlan& pass, const ThreadShape& shape, const FftTuning& tuning) {
  pass.threads_per_transform = static_cast<int>(shape.threads);
  pass.transforms_per_workgroup = static_cast<int>(shape.per_group);
  pass.workgroup_size = static_cast<int>(shape.threads * shape.per_group);
  pass.exchange_length = std::max<int64_t>(1, unrolled_exchange_stride(pass) * shape.per_group);
  int64_t registers = 1;
  for (int radix : pass.radices) registers = std::max(registers, butterfly_rounds(pass, radix) * radix);
  pass.max_registers = static_cast<int>(registers);
  // Groups of transforms each workgroup runs in turn: 4 for four-step passes, 1 for whole passes
  // (where more were within noise or slower).
  pass.group_iterations = pass.shape == PassShape::whole ? 1 : 4;
  if (tuning.group_iterations > 0) pass.group_iterations = static_cast<int>(tuning.group_iterations);
  // The Hermitian pairing of a whole packed r2c pass's real split (unrolled_main.cpp) wins for passes
  // of 1024 to 4096 points and loses for shorter ones (half the threads idle, twice the registers).
  pass.pair_real_split =
      tuning.real_split_pairs == RealSplitPairs::every_pass || (pass.length >= 1024 && pass.length <= 4096);
}

}  // namespace

// The rules in the steps above were measured on an H200 (batches of 2^26 points; the figures are in
// docs/benchmark-log.md). tuning overrides the thread shape for sweeps.
void specialise_pass(StockhamPassPlan& pass, const FftDeviceLimits& limits, const FftTuning& tuning) {
  choose_pass_radices(pass, tuning);
  ThreadShape shape = choose_threads(pass, limits, tuning);
  choose_transforms_per_workgroup(pass, limits, shape);
  limit_transforms_per_workgroup(pass, limits, tuning, shape);
  choose_exchange_layout(pass, shape);
  apply_thread_shape(pass, shape, tuning);
  pass.unrolled = true;
}

bool fuse_bluestein_convolution(FftPlan& plan) {
  if (plan.algorithm == FftAlgorithm::bluestein && plan.passes.size() == 2 &&
      plan.passes[0].shape == PassShape::whole && plan.passes[1].shape == PassShape::whole) {
    plan.passes[0].convolve_in_workgroup = true;
    plan.passes[0].sink = plan.passes[1].sink;
    plan.passes.pop_back();
    plan.needs_spectrum = false;
    return true;
  }
  if (plan.algorithm != FftAlgorithm::bluestein || plan.passes.size() != 4 ||
      plan.passes[0].shape != PassShape::columns || plan.passes[1].shape != PassShape::rows) {
    return false;
  }
  StockhamPassPlan& convolve = plan.passes[1];  // rows of N2 points, other_factor N1
  convolve.shape = PassShape::rows_convolve;
  StockhamPassPlan& out = plan.passes[2];  // a columns pass of N1 points, other_factor N2
  out.shape = PassShape::columns_out;
  out.sink = plan.passes[3].sink;
  plan.passes.pop_back();
  return true;
}

}  // namespace onda::kernels::fft
