#include "kernels/fft/stockham_unrolled.h"

#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <vector>

#include "gpu/gpu_error.h"
#include "kernels/fft/unrolled_knobs.h"

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

void specialise_pass(StockhamPassPlan& pass, const FftDeviceLimits& limits) {
  if (knobs::radix16(pass)) pass.radices = radix16_radices(pass.length);
  // A whole pass of 8192 points (r2c 16384) runs 8,8,16,8: four stages instead of 8,8,8,4,4's five, so
  // one exchange fewer. With swizzled exchanges, on an H200 (2026-12-04, 2^26 points, same call):
  // 0.394 ms against 0.400 (16,8,8,8 0.422, 16,16,16,2 0.481); unswizzled it lost (0.477 against 0.427).
  if (pass.shape == PassShape::whole && pass.length == 8192 && knobs::swizzle_mode() != 0)
    pass.radices = {8, 8, 16, 8};
  if (auto forced = knobs::forced_radices(pass.length); !forced.empty()) pass.radices = forced;
  const int64_t max_threads = limits.max_invocations_per_workgroup;
  // A whole pass longer than workgroup memory holds as complex values exchanges its halves one after
  // the other (StockhamPassPlan::split_exchange), and so do those of 128 and of 512 points or more:
  // half the workgroup memory lets more workgroups share a multiprocessor, which outweighs the extra
  // barriers. On an H200 (2026-12-04, 2^26 points) splitting every whole pass took c2c 4096 from 0.61
  // to 0.46 ms, c2c 2048 0.55 -> 0.49, r2c 4096 (L = 2048) 0.39 -> 0.36, r2c 1024 (L = 512) 0.31 ->
  // 0.26, c2c 1024 0.44 -> 0.43. L = 128 (r2c 256) gains since it runs one largest-radix butterfly per
  // thread (below): 0.302 -> 0.256 ms; L = 256, which keeps a thread per smallest-radix butterfly,
  // loses (c2c 256 0.375 -> 0.425, r2c 512 0.289 -> 0.297; split and unpadded, 2026-12-04 night).
  // ONDA_FFT_SPLIT=0: never (planning too), =2: every whole pass, =3: from 512 points only.
  const int64_t complex_points = static_cast<int64_t>(limits.workgroup_storage_bytes / 8);
  const int64_t split_mode = knobs::split_mode();
  const bool split_by_rule = (split_mode == 1 && (pass.length == 128 || pass.length >= 512)) ||
                             (split_mode == 3 && pass.length >= 512);
  pass.split_exchange = limits.split_exchange && pass.shape == PassShape::whole && !pass.paired_rows &&
                        !pass.radices.empty() &&
                        (pass.length > complex_points || split_mode == 2 || split_by_rule);
  int64_t memory_points = complex_points * (pass.split_exchange ? 2 : 1);
  // One butterfly per thread in every stage: as many threads as the stage of the smallest radix has
  // butterflies (the larger radices' stages leave some idle). With the generator of 2026-12-03, two or
  // more butterflies per thread and stage ran 4-8x slower on an H200 (batches of 2^26 points, c2c):
  // N = 4096 (8,8,8,8) 3.85 ms with 256 threads, 0.62 ms with 512; N = 1024 (8,8,4,4) 2.20 ms with
  // 128, 0.44 with 256. Today's (split exchange, unrolled rounds) measures otherwise, below.
  const int min_radix = pass.radices.empty() ? 1 : *std::min_element(pass.radices.begin(), pass.radices.end());
  // Except for whole passes of 128 and 512..4096 points (powers of two): one butterfly of the largest
  // radix per thread, the smaller radices' stages taking two rounds. On an H200 (2026-12-04, 2^26
  // points, same call, ONDA_FFT_THREADS): r2c 256 (L = 128) 0.354 -> 0.300 ms with 16 threads instead
  // of 32, c2c 1024 0.430 -> 0.344 (128 instead of 256), r2c 2048 (L = 1024) 0.325 -> 0.276, c2c 2048
  // 0.496 -> 0.370 (256 instead of 512), r2c 4096 (L = 2048) 0.366 -> 0.291; L = 256 kept its 64
  // (r2c 512: 0.289 against 0.305 with 32), and where every radix is 8 nothing changes.
  const int max_radix = pass.radices.empty() ? 1 : *std::max_element(pass.radices.begin(), pass.radices.end());
  const bool largest_radix_rule = pass.shape == PassShape::whole && (pass.length & (pass.length - 1)) == 0 &&
                                  (pass.length == 128 || (pass.length >= 512 && pass.length <= 4096));
  // A paired-rows pass needs two transforms per workgroup at least.
  const int64_t thread_cap = pass.paired_rows ? std::max<int64_t>(1, max_threads / 2) : max_threads;
  int64_t threads =
      std::clamp<int64_t>(ceil_div(pass.length, largest_radix_rule ? max_radix : min_radix), 1, thread_cap);
  threads = std::clamp<int64_t>(knobs::env_int("ONDA_FFT_THREADS", threads), 1, std::min(thread_cap, pass.length));
  // Transforms per workgroup. A four-step pass reads and writes runs of consecutive transforms (one
  // point of each per lane): up to 32 (256 bytes), else 16, 8, 4 (32 bytes, a memory sector) or 2, as
  // thread and memory limits allow. Whole passes fill about 128 threads (N = 256, 64 threads each: 1 transform
  // per workgroup 0.36 ms, 2: 0.37, 4: 0.38, 8: 0.45).
  int64_t per_group = 1;
  if (lanes_walk_transforms(pass)) {
    // Passes of very short transforms (a thread or two each) take longer runs, up to 64 threads a
    // workgroup: eight one-thread columns of 8 points would otherwise make a workgroup of 8 threads.
    const auto longest_run = [&](int64_t points, int64_t thread_count) {
      const int64_t cap = std::max<int64_t>(knobs::max_run(), 64 / thread_count);
      for (int64_t run : {64, 32, 16, 8, 4, 2}) {
        if (run > cap) continue;
        if (run * thread_count <= max_threads && run * (pass.length + 1) <= points &&
            pass.transform_count >= run) {
          return run;
        }
      }
      return int64_t{1};
    };
    per_group = longest_run(memory_points, threads);
    const int64_t split_threads = knobs::split_runs() == 2 ? ceil_div(pass.length, max_radix) : threads;
    if (limits.split_exchange && knobs::split_runs() != 0 && !pass.paired_rows && !pass.radices.empty() &&
        longest_run(2 * memory_points, split_threads) > per_group) {
      pass.split_exchange = true;
      memory_points *= 2;
      threads = split_threads;
      per_group = longest_run(memory_points, threads);
    }
  } else {
    per_group = std::max<int64_t>(1, 128 / threads);
  }
  per_group = std::max<int64_t>(1, knobs::env_int("ONDA_FFT_PER_GROUP", per_group));
  while (per_group > 1 && (per_group * (pass.length + 1) > memory_points || per_group * threads > max_threads)) {
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
  // Padding (one slot per 8 points) spreads a stage's strided accesses over the banks. A split exchange
  // goes without: on an H200 (2026-12-04, 2^26 points) unpadded split passes took r2c 2048 from 0.276 to
  // 0.260 ms, r2c 4096 0.291 -> 0.272, c2c 2^20 1.45 -> 1.41, while the unsplit r2c 256 lost (0.302 ->
  // 0.327). ONDA_FFT_PAD=0: never, =1 (default): unless split, =2: always where it fits.
  const int64_t extra = per_group > 1 ? 1 : 0;
  const int64_t pad_mode = knobs::env_int("ONDA_FFT_PAD", 1);
  pass.padded_exchange = per_group * (padded_length(pass.length, true) + extra) <= memory_points &&
                         (pad_mode == 2 || (pad_mode == 1 && !pass.split_exchange));
  // Split exchanges of 512 points and of more than 4096 swizzle instead (StockhamPassPlan::
  // swizzled_exchange). On an H200 (2026-12-04, 2^26 points, two runs each in one call, GPU ms):
  // c2c 512 0.354 -> 0.311, r2c 16384 (L = 8192) 0.411 -> 0.400; r2c 1024 (L = 512) unchanged at
  // 0.26; the passes of 1024..4096 points, one largest-radix butterfly per thread, lost 6-11% (c2c 4096
  // 0.383 -> 0.424, r2c 4096 0.263 -> 0.282) and L = 128 3% (r2c 256 0.246 -> 0.254): the XOR costs
  // instructions on every access where the plain index folds into an immediate offset.
  // ONDA_FFT_SWIZZLE=0: never, =1 (default): by this rule, =2: every unpadded whole pass, =3: every split
  // one.
  const int64_t swizzle = knobs::swizzle_mode();
  const bool swizzle_by_rule = pass.split_exchange && (pass.length == 512 || pass.length > 4096);
  pass.swizzled_exchange =
      !pass.padded_exchange && pass.shape == PassShape::whole && pass.length % 32 == 0 &&
      (swizzle == 2 || (swizzle == 1 && swizzle_by_rule) || (swizzle == 3 && pass.split_exchange));
  pass.threads_per_transform = static_cast<int>(threads);
  pass.transforms_per_workgroup = static_cast<int>(per_group);
  pass.workgroup_size = static_cast<int>(threads * per_group);
  pass.exchange_length = std::max<int64_t>(1, unrolled_exchange_stride(pass) * per_group);
  int64_t registers = 1;
  for (int radix : pass.radices) registers = std::max(registers, butterfly_rounds(pass, radix) * radix);
  pass.max_registers = static_cast<int>(registers);
  pass.group_iterations = knobs::group_iterations(pass);
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
