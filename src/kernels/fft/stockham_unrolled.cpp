#include "kernels/fft/stockham_unrolled.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

#include "gpu/gpu_error.h"

namespace onda::kernels::fft {
namespace {

// Knobs for the H200 sweeps (bench_fft, scripts/gpu/fft-sweep.sh): ONDA_FFT_THREADS (threads per
// transform), ONDA_FFT_PER_GROUP (transforms per workgroup), ONDA_FFT_MAX_RUN, ONDA_FFT_RADIX16, ONDA_FFT_LOOP (below),
// ONDA_FFT_PAD (0: no padded exchange),
// ONDA_FFT_TWIDDLE=table (every twiddle of a butterfly from the table, instead of W^k from the table
// and W^(rk) by at most three products: R - 1 table loads per butterfly become one).
int64_t env_int(const char* name, int64_t fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::stoll(v) : fallback;
}
bool twiddle_powers() {
  static const bool powers = [] {
    const char* v = std::getenv("ONDA_FFT_TWIDDLE");
    return !(v && std::string(v) == "table");
  }();
  return powers;
}

// ONDA_FFT_MAX_RUN: most consecutive transforms of a four-step workgroup. Default 8 (64-byte runs): on
// an H200 (2026-12-03) 16 and 32 ran slower (c2c N = 16384: 8 -> 0.86 ms, 16 -> 1.08 (staged), 32 ->
// 1.22), as did loading rows passes row-contiguously through workgroup memory first (0.86 -> 0.97).
int64_t max_run() {
  static const int64_t run = env_int("ONDA_FFT_MAX_RUN", 8);
  return run;
}
// The real split of a whole packed r2c pass straight from registers: the last Stockham stage runs its
// butterflies in Hermitian pairs (j, S - j), so each thread holds every Z_k it needs next to its
// Z_(H-k) and writes the bins without a round trip through workgroup memory. It leaves half the
// threads idle in that stage and doubles their registers: on an H200 (2026-12-04, 2^26 points) it
// took r2c 16384 (L = 8192) from 0.471 to 0.436 ms, left 2048 and 4096 unchanged and slowed 256..1024
// (0.26 -> 0.36 ms at 1024), so it runs for passes of 4096 points or more. ONDA_FFT_PAIR=0: never,
// =2: every real-split pass (the unrolled tests force it on short lengths).
bool pair_real_split(int64_t length) {
  const int64_t mode = env_int("ONDA_FFT_PAIR", 1);  // read per pass: the unrolled tests set it
  return mode == 2 || (mode == 1 && length >= 4096);
}

// Groups of transforms each workgroup runs in turn (a K-times smaller dispatch), loading the next
// group's first-stage inputs during this group's stages: 4 for the plain four-step passes (on an H200,
// 2026-12-04, same call: c2c 16384 0.825 -> 0.771 ms, c2c 2^20 1.685 -> 1.646, r2c 2^20 1.131 -> 1.121),
// 1 elsewhere (Bluestein 65537's four-step passes 5.14 -> 5.19; whole passes within noise or slower,
// r2c 2048 0.315 -> 0.353). ONDA_FFT_LOOP=K: K for every pass; ONDA_FFT_PREFETCH=0: no prefetch.
int group_iterations(const StockhamPassPlan& pass) {
  static const int64_t k = env_int("ONDA_FFT_LOOP", 0);
  if (k > 0) return static_cast<int>(k);
  const bool plain_four_step = pass.shape == PassShape::rows ||
                               (pass.shape == PassShape::columns && pass.source == SequenceSource::user_input);
  return plain_four_step ? 4 : 1;
}
bool prefetch_next_group() {
  static const bool on = env_int("ONDA_FFT_PREFETCH", 1) != 0;
  return on;
}

// Powers of two in radix-16 stages (fewer stages and barriers, 16 points per thread) instead of radix 8:
// for four-step passes by default, whose many transforms per workgroup leave few threads to each. On
// an H200 (2026-12-04, batches of 2^26 points) radix 16 took c2c 2^20 from 1.92 to 1.68 ms, r2c 2^20
// 1.25 -> 1.13, c2c 16384 0.87 -> 0.82, but whole passes 5-300% slower (r2c 4096 0.39 -> 0.47, c2c 2048
// 0.55 -> 0.64 with outliers to 1.8). ONDA_FFT_RADIX16=0: never, =1: every pass.
bool radix16(const StockhamPassPlan& pass) {
  static const int64_t mode = env_int("ONDA_FFT_RADIX16", -1);
  return mode < 0 ? pass.shape != PassShape::whole : mode != 0;
}

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

// Butterflies each thread runs in a stage of radix R.
int64_t rounds(const StockhamPassPlan& pass, int radix) {
  return ceil_div(pass.length / radix, pass.threads_per_transform);
}

// Lanes of a four-step pass walk consecutive transforms (consecutive columns / rows of the signal), so
// that a warp's global loads and stores are contiguous; a whole pass walks the points of one transform.
bool slot_fastest(const StockhamPassPlan& pass) {
  return pass.shape == PassShape::columns || pass.shape == PassShape::rows ||
         pass.shape == PassShape::columns_out;
}

std::string u(int64_t value) {
  return fmt::format("{}u", value);
}

int64_t padded_length(int64_t length, bool padded) {
  return padded ? length + (length >> 3) : length;
}

}  // namespace

int64_t unrolled_exchange_stride(const StockhamPassPlan& pass) {
  const int64_t length = padded_length(pass.length, pass.padded_exchange);
  return pass.transforms_per_workgroup > 1 ? length + 1 : length;
}

void specialise_pass(StockhamPassPlan& pass, const FftDeviceLimits& limits) {
  if (radix16(pass)) pass.radices = radix16_radices(pass.length);
  const int64_t max_threads = limits.max_invocations_per_workgroup;
  // A whole pass longer than workgroup memory holds as complex values exchanges its halves one after
  // the other (StockhamPassPlan::split_exchange), and so does one of 512 points or more: half the
  // workgroup memory lets more workgroups share a multiprocessor, which outweighs the extra barriers.
  // On an H200 (2026-12-04, 2^26 points) splitting every whole pass took c2c 4096 from 0.61 to 0.46 ms,
  // c2c 2048 0.55 -> 0.49, r2c 4096 (L = 2048) 0.39 -> 0.36, r2c 1024 (L = 512) 0.31 -> 0.26, c2c
  // 1024 0.44 -> 0.43, but r2c 2048 (L = 1024) 0.315 -> 0.324 and r2c 256 (L = 128) 0.35 -> 0.38.
  // ONDA_FFT_SPLIT=0: never (planning too), =2: every whole pass.
  const int64_t complex_points = static_cast<int64_t>(limits.workgroup_storage_bytes / 8);
  const int64_t split_mode = env_int("ONDA_FFT_SPLIT", 1);
  pass.split_exchange = limits.split_exchange && pass.shape == PassShape::whole && !pass.paired_rows &&
                        !pass.radices.empty() &&
                        (pass.length > complex_points || split_mode == 2 || (split_mode == 1 && pass.length >= 512));
  const int64_t memory_points = complex_points * (pass.split_exchange ? 2 : 1);
  // One butterfly per thread in every stage: as many threads as the stage of the smallest radix has
  // butterflies (the larger radices' stages leave some idle). Two or more butterflies per thread and
  // stage ran 4-8x slower on an H200 (2026-12-03, batches of 2^26 points, c2c): N = 4096 (8,8,8,8)
  // 3.85 ms with 256 threads, 0.62 ms with 512; N = 1024 (8,8,4,4) 2.20 ms with 128, 0.44 with 256.
  const int min_radix = pass.radices.empty() ? 1 : *std::min_element(pass.radices.begin(), pass.radices.end());
  // A paired-rows pass needs two transforms per workgroup at least.
  const int64_t thread_cap = pass.paired_rows ? std::max<int64_t>(1, max_threads / 2) : max_threads;
  int64_t threads = std::clamp<int64_t>(ceil_div(pass.length, min_radix), 1, thread_cap);
  threads = std::clamp<int64_t>(env_int("ONDA_FFT_THREADS", threads), 1, std::min(thread_cap, pass.length));
  // Transforms per workgroup. A four-step pass reads and writes runs of consecutive transforms (one
  // point of each per lane): up to 32 (256 bytes), else 16, 8, 4 (32 bytes, a memory sector) or 2, as
  // thread and memory limits allow. Whole passes fill about 128 threads (N = 256, 64 threads each: 1 transform
  // per workgroup 0.36 ms, 2: 0.37, 4: 0.38, 8: 0.45).
  int64_t per_group = 1;
  if (slot_fastest(pass)) {
    for (int64_t run : {32, 16, 8, 4, 2}) {
      if (run > max_run()) continue;
      if (run * threads <= max_threads && run * (pass.length + 1) <= memory_points && pass.transform_count >= run) {
        per_group = run;
        break;
      }
    }
  } else {
    per_group = std::max<int64_t>(1, 128 / threads);
  }
  per_group = std::max<int64_t>(1, env_int("ONDA_FFT_PER_GROUP", per_group));
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
  const int64_t extra = per_group > 1 ? 1 : 0;
  pass.padded_exchange = per_group * (padded_length(pass.length, true) + extra) <= memory_points &&
                         env_int("ONDA_FFT_PAD", 1) != 0;
  pass.threads_per_transform = static_cast<int>(threads);
  pass.transforms_per_workgroup = static_cast<int>(per_group);
  pass.workgroup_size = static_cast<int>(threads * per_group);
  pass.exchange_length = std::max<int64_t>(1, unrolled_exchange_stride(pass) * per_group);
  int64_t registers = 1;
  for (int radix : pass.radices) registers = std::max(registers, rounds(pass, radix) * radix);
  pass.max_registers = static_cast<int>(registers);
  pass.group_iterations = group_iterations(pass);
  pass.unrolled = true;
}

std::string unrolled_stockham_main(const FftPlan& plan, const StockhamPassPlan& pass, bool real_split) {
  const int64_t length = pass.length;
  const int64_t threads = pass.threads_per_transform;
  const int64_t per_group = pass.transforms_per_workgroup;
  std::string code = fmt::format("fn exchange_index(p: u32) -> u32 {{\n  return {};\n}}\n\n",
                                 pass.padded_exchange ? "p + (p >> 3u)" : "p");
  code += fmt::format(
      "@compute @workgroup_size({})\n"
      "fn main(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wg: vec3<u32>,\n"
      "        @builtin(num_workgroups) groups: vec3<u32>) {{\n"
      "  _ = &tables;\n",
      pass.workgroup_size);
  if (slot_fastest(pass)) {
    code += fmt::format("  let slot = lid % {0};\n  let t = lid / {0};\n", u(per_group));
  } else {
    code += fmt::format("  let slot = lid / {0};\n  let t = lid % {0};\n", u(threads));
  }
  const int64_t stride = unrolled_exchange_stride(pass);
  code += fmt::format("  let base = slot * {};\n", u(stride));
  if (pass.paired_rows) {
    code += fmt::format(
        "  let upper = slot >= {0};\n"
        "  let partner_base = ((slot + {0}) % {2}) * {1};\n",
        u(per_group / 2), u(stride), u(per_group));
  }
  // `transform` and `in_range` of the workgroup's group of transforms `group`.
  auto bind_transform = [&](const std::string& group, const std::string& also) {
    if (pass.paired_rows) {
      code += fmt::format(
          "  let pair = ({1}) * {0} + slot % {0};\n"
          "  let transform = paired_row_transform(pair, upper);\n"
          "  let in_range = 2u * pair < params.transform_count{2};\n",
          u(per_group / 2), group, also);
    } else {
      code += fmt::format(
          "  let transform = ({}) * {} + slot;\n"
          "  let in_range = transform < params.transform_count{};\n",
          group, u(per_group), also);
    }
  };
  const int iterations = pass.group_iterations;
  const bool prefetch = iterations > 1 && !pass.radices.empty() && prefetch_next_group();
  const int64_t first_registers = pass.radices.empty() ? 0 : rounds(pass, pass.radices[0]) * pass.radices[0];
  code += "  let first_group = wg.y * groups.x + wg.x;\n";
  if (iterations > 1) {
    // Each workgroup runs `iterations` groups of transforms, a dispatch's worth apart; with prefetch
    // the next group's first-stage inputs load into registers while this group's stages run.
    code += "  let group_stride = groups.x * groups.y;\n";
    if (prefetch) {
      code += fmt::format("  var p: array<vec2<f32>, {}>;\n  {{\n", first_registers);
      bind_transform("first_group", "");
      code += "  PREFETCH\n  }\n";
    }
    code += fmt::format("  for (var it = 0u; it < {}; it++) {{\n", u(iterations));
    bind_transform("first_group + it * group_stride", "");
  } else {
    bind_transform("first_group", "");
  }

  bool pair_real_split_done = false;
  if (pass.radices.empty()) {  // length 1: a copy
    code += real_split ? "  if (in_range) {\n    exchange[base] = load(transform, 0u);\n  }\n"
                       : "  if (in_range) {\n    store(transform, 0u, load(transform, 0u));\n  }\n";
  } else {
    const bool split = pass.split_exchange;
    // The real split from registers (pair_last_stage): the last stage's butterflies in pairs j, S - j.
    const bool pair_last = real_split && !pass.paired_rows && !prefetch && pair_real_split(length);
    pair_real_split_done = pair_last;
    const int last_stage_radix = pass.radices.back();
    const int64_t last_stage_span = length / last_stage_radix;  // S
    const int64_t pair_count = last_stage_span / 2 + 1;
    const int64_t pair_rounds = ceil_div(pair_count, threads);
    const int64_t registers =
        pair_last ? std::max<int64_t>(pass.max_registers, 2 * last_stage_radix * pair_rounds) : pass.max_registers;
    code += fmt::format("  var v: array<vec2<f32>, {}>;\n", registers);
    // Each generated statement block runs for butterfly j = t + b * threads of a stage; only the last
    // round can be partial.
    auto for_each_butterfly = [&](int radix, auto&& body) {
      const int64_t butterflies = length / radix;
      const int64_t count = rounds(pass, radix);
      for (int64_t b = 0; b < count; ++b) {
        const bool partial = (b + 1) * threads > butterflies;
        code += fmt::format("  {{\n    let j = t + {};\n", u(b * threads));
        if (partial) code += fmt::format("    if (j < {}) {{\n", u(butterflies));
        body(b, butterflies);
        if (partial) code += "    }\n";
        code += "  }\n";
      }
    };
    // Where a stage's inputs come from; convolve_registers: already in v (split exchange), times the
    // kernel spectrum.
    enum class From { global, prefetched, exchange, convolved_exchange, convolve_registers };
    // `component` is "" for complex values, or ".x" / ".y" for one half of a split exchange.
    auto load_stage = [&](int radix, From from, const char* target = "v", const char* component = "") {
      for_each_butterfly(radix, [&](int64_t b, int64_t butterflies) {
        if (from == From::global) code += "    if (in_range) {\n";
        for (int r = 0; r < radix; ++r) {
          const std::string e = fmt::format("j + {}", u(r * butterflies));
          const std::string shared = fmt::format("exchange[base + exchange_index({})]", e);
          std::string value = shared;
          if (from == From::global) value = fmt::format("load(transform, {})", e);
          if (from == From::convolved_exchange) value = fmt::format("convolve(transform, {}, {})", e, shared);
          if (from == From::convolve_registers) value = fmt::format("convolve(transform, {}, v[{}])", e, b * radix + r);
          if (from == From::prefetched) value = fmt::format("p[{}]", b * radix + r);
          code += fmt::format("      {}[{}]{} = {};\n", target, b * radix + r, component, value);
        }
        if (from == From::global) code += "    }\n";
      });
    };
    // Pair mode's last stage: round b of thread t takes pair p = t + b * threads (p <= S / 2), that is
    // butterflies j1 = p and j2 = (S - p) mod S, whose outputs are each other's Hermitian partners
    // (Z_(H - k) of k = j1 + r S is output R-1-r of j2; of k = r S, output (R - r) mod R of j = 0), in
    // registers b 2R + r (j1) and b 2R + R + r (j2).
    auto for_each_pair = [&](auto&& body) {
      for (int64_t b = 0; b < pair_rounds; ++b) {
        const bool partial = (b + 1) * threads > pair_count;
        code += fmt::format("  {{\n    let p = t + {};\n", u(b * threads));
        if (partial) code += fmt::format("    if (p < {}) {{\n", u(pair_count));
        code += fmt::format("    let j1 = p;\n    let j2 = ({0} - p) % {0};\n", u(last_stage_span));
        body(b);
        if (partial) code += "    }\n";
        code += "  }\n";
      }
    };
    auto load_pairs = [&](From from, const char* component = "") {
      const int radix = last_stage_radix;
      for_each_pair([&](int64_t b) {
        if (from == From::global) code += "    if (in_range) {\n";
        for (int half = 0; half < 2; ++half) {
          for (int r = 0; r < radix; ++r) {
            const std::string e = fmt::format("j{} + {}", half + 1, u(r * last_stage_span));
            const std::string value = from == From::global ? fmt::format("load(transform, {})", e)
                                                            : fmt::format("exchange[base + exchange_index({})]", e);
            code += fmt::format("      v[{}]{} = {};\n", b * 2 * radix + half * radix + r, component, value);
          }
        }
        if (from == From::global) code += "    }\n";
      });
    };
    // Output index o of butterfly j of a stage (radix, span): its outputs go to o + r * span.
    auto output_index = [&](int radix, int64_t span) {
      if (span > 1) return fmt::format("    let k = j % {};\n    let o = (j / {}) * {} + k;\n", u(span), u(span), u(span * radix));
      return fmt::format("    let o = j * {};\n", u(radix));
    };
    // Split exchange: a stage's outputs, kept in v, go through workgroup memory one half at a time
    // (`next_loads(component)` reads the next inputs' half into v, whose other half still holds the
    // outputs until its own turn): write .x, barrier, read .x, barrier, write .y, barrier, read .y, barrier.
    auto split_boundary = [&](int radix, int64_t span, auto&& next_loads) {
      for (const char* component : {".x", ".y"}) {
        for_each_butterfly(radix, [&](int64_t b, int64_t) {
          code += output_index(radix, span);
          for (int r = 0; r < radix; ++r) {
            code += fmt::format("    exchange[base + exchange_index(o + {})] = v[{}]{};\n", u(r * span),
                                b * radix + r, component);
          }
        });
        code += "  workgroupBarrier();\n";
        next_loads(component);
        code += "  workgroupBarrier();\n";
      }
    };
    // The first stage's loads of a group into the prefetch registers p.
    auto prefetch_text = [&]() {
      std::string saved;
      std::swap(code, saved);
      load_stage(pass.radices[0], From::global, "p");
      std::swap(code, saved);
      return saved;
    };
    if (prefetch) {
      const size_t at = code.find("  PREFETCH\n");
      code.replace(at, 11, prefetch_text());
    }
    // One FFT of the pass length: first inputs from `from`, last outputs to store() or, with
    // to_exchange, to workgroup memory (split: left in v, for split_boundary with last_radix / last_span).
    int last_radix = 1;
    int64_t last_span = 1;
    // Twiddles, the radix-R DFT and the outputs' index o of butterfly j (a WGSL `j` in scope) whose
    // inputs are registers first..first+R-1; the results in `y`.
    auto butterfly = [&](int radix, int64_t span, int64_t step, int64_t first) {
      if (span > 1) {
        code += fmt::format("    let k = j % {};\n", u(span));
        if (twiddle_powers()) {
          // w = W^k from the table, w^r by products (w^2 = w w, w^3 = w^2 w, w^4 = w^2 w^2, ...).
          code += fmt::format("    let w1 = tables[k * {}];\n", u(step));
          for (int r = 2; r < radix; ++r) {
            code += fmt::format("    let w{} = cmul(w{}, w{});\n", r, r / 2, r - r / 2);
          }
          for (int r = 1; r < radix; ++r) code += fmt::format("    v[{0}] = cmul(v[{0}], w{1});\n", first + r, r);
        } else {
          for (int r = 1; r < radix; ++r) {
            code += fmt::format("    v[{0}] = cmul(v[{0}], tables[k * {1}]);\n", first + r, u(r * step));
          }
        }
        code += fmt::format("    let o = (j / {}) * {} + k;\n", u(span), u(span * radix));
      } else {
        code += fmt::format("    let o = j * {};\n", u(radix));
      }
      std::string args;
      for (int r = 0; r < radix; ++r) args += fmt::format("{}v[{}]", r ? ", " : "", first + r);
      code += fmt::format("    let y = dft{0}(array<vec2<f32>, {0}>({1}));\n", radix, args);
    };
    // Pair mode's last stage (span S, so j < S and o = j): both butterflies of each pair, then every
    // bin X_k = split(Z_k, conj Z_(H-k)) from registers, bin H from Z_0 (see for_each_pair).
    auto pair_stage = [&](int64_t span, int64_t step) {
      const int radix = last_stage_radix;
      for_each_pair([&](int64_t b) {
        const int64_t f1 = b * 2 * radix, f2 = f1 + radix;
        for (int half = 0; half < 2; ++half) {
          code += fmt::format("    {{\n    let j = j{};\n", half + 1);
          butterfly(radix, span, step, half ? f2 : f1);
          for (int r = 0; r < radix; ++r) code += fmt::format("    v[{}] = y[{}];\n", (half ? f2 : f1) + r, r);
          code += "    }\n";
        }
        code += "    if (in_range) {\n      if (p == 0u) {\n";
        for (int r = 0; r < radix; ++r) {
          code += fmt::format("        write_split_bin(transform, {}, v[{}], conj(v[{}]));\n", u(r * span), f1 + r,
                              f1 + (radix - r) % radix);
        }
        code += fmt::format("        write_split_bin(transform, {}, v[{}], conj(v[{}]));\n      }} else {{\n", u(length), f1, f1);
        for (int r = 0; r < radix; ++r) {
          code += fmt::format("        write_split_bin(transform, j1 + {}, v[{}], conj(v[{}]));\n", u(r * span), f1 + r,
                              f2 + radix - 1 - r);
        }
        code += "        if (j2 != j1) {\n";
        for (int r = 0; r < radix; ++r) {
          code += fmt::format("          write_split_bin(transform, j2 + {}, v[{}], conj(v[{}]));\n", u(r * span), f2 + r,
                              f1 + radix - 1 - r);
        }
        code += "        }\n      }\n    }\n";
      });
    };
    auto sweep = [&](From from, bool to_exchange, bool pairs = false) {
    int64_t span = 1;
    if (pairs && pass.radices.size() == 1) {
      load_pairs(from);
    } else {
      load_stage(pass.radices[0], from);
    }
    if (from == From::prefetched) {
      code += "  {\n";
      bind_transform("first_group + (it + 1u) * group_stride", fmt::format(" && it + 1u < {}", u(iterations)));
      code += prefetch_text() + "  }\n";
    }
    if (from == From::exchange || from == From::convolved_exchange) code += "  workgroupBarrier();\n";
    for (size_t s = 0; s < pass.radices.size(); ++s) {
      const int radix = pass.radices[s];
      const bool last = s + 1 == pass.radices.size();
      const int64_t step = plan.fft_length / (span * radix);  // W_(Ns*R)^m = W_F^(m * F/(Ns*R))
      code += fmt::format("  // stage {}: radix {}, span {}\n", s, radix, span);
      if (last && pairs) {
        pair_stage(span, step);
        break;
      }
      for_each_butterfly(radix, [&](int64_t b, int64_t) {
        const int64_t first = b * radix;
        butterfly(radix, span, step, first);
        if (last && !to_exchange) {
          code += "    if (in_range) {\n";
          for (int r = 0; r < radix; ++r)
            code += fmt::format("      store(transform, o + {}, y[{}]);\n", u(r * span), r);
          code += "    }\n";
        } else if (split) {
          for (int r = 0; r < radix; ++r) code += fmt::format("    v[{}] = y[{}];\n", first + r, r);
        } else {
          for (int r = 0; r < radix; ++r)
            code += fmt::format("    exchange[base + exchange_index(o + {})] = y[{}];\n", u(r * span), r);
        }
      });
      if (last) {
        last_radix = radix;
        last_span = span;
      } else if (split) {
        const int next = pass.radices[s + 1];
        const bool next_pairs = pairs && s + 2 == pass.radices.size();
        split_boundary(radix, span, [&](const char* c) {
          if (next_pairs) {
            load_pairs(From::exchange, c);
          } else {
            load_stage(next, From::exchange, "v", c);
          }
        });
      } else {
        code += "  workgroupBarrier();\n";
        if (pairs && s + 2 == pass.radices.size()) {
          load_pairs(From::exchange);
        } else {
          load_stage(pass.radices[s + 1], From::exchange);
        }
        code += "  workgroupBarrier();\n";
      }
      span *= radix;
    }
    };
    const From first_source = prefetch ? From::prefetched : From::global;
    if (pass.shape == PassShape::rows_convolve || pass.convolve_in_workgroup) {
      // Bluestein's convolution in one pass: the row's forward FFT, the pointwise product with the
      // kernel spectrum, and the first FFT of the inverse (see PassShape::rows_convolve).
      sweep(first_source, true);
      if (split) {
        split_boundary(last_radix, last_span,
                       [&](const char* c) { load_stage(pass.radices[0], From::exchange, "v", c); });
        sweep(From::convolve_registers, false);
      } else {
        code += "  workgroupBarrier();\n";
        sweep(From::convolved_exchange, false);
      }
    } else {
      sweep(first_source, real_split, pair_last);
    }
    if (real_split && split && !pair_last) {
      // The real split below with Z_k and Z_(H-k) (k = 0..H) gathered into registers half by half.
      const int64_t count = ceil_div(length + 1, threads);
      code += fmt::format("  var zk: array<vec2<f32>, {0}>;\n  var zc: array<vec2<f32>, {0}>;\n", count);
      auto for_each_bin = [&](auto&& body) {
        for (int64_t b = 0; b < count; ++b) {
          code += fmt::format("  {{\n    let k = t + {};\n    if (k <= {}) {{\n", u(b * threads), u(length));
          body(b);
          code += "    }\n  }\n";
        }
      };
      split_boundary(last_radix, last_span, [&](const char* c) {
        for_each_bin([&](int64_t b) {
          code += fmt::format(
              "      zk[{0}]{1} = exchange[base + exchange_index(k % {2})];\n"
              "      zc[{0}]{1} = exchange[base + exchange_index(({2} - k) % {2})];\n",
              b, c, u(length));
        });
      });
      code += "  if (in_range) {\n";
      for_each_bin([&](int64_t b) { code += fmt::format("      write_split_bin(transform, k, zk[{0}], conj(zc[{0}]));\n", b); });
      code += "  }\n";
    }
  }
  if (real_split && pass.paired_rows) {
    // Row k1 gives bins k = k1 + N1*e; Z_(H-k) is element N2-1-e of the partner row N1 - k1 (element
    // (N2 - e) mod N2 of row 0 for k1 = 0); row 0 also gives bin H. A self-paired row in the upper half
    // is left to the lower one.
    const int64_t n1 = pass.other_factor;
    code += fmt::format(
        "  workgroupBarrier();\n"
        "  let row = transform % {0};\n"
        "  let batch = transform / {0};\n"
        "  if (in_range && !(upper && row == ({0} - row) % {0})) {{\n",
        u(n1));
    for (int64_t b = 0; b * threads < length; ++b) {
      const bool partial = (b + 1) * threads > length;
      code += fmt::format("    {{\n      let e = t + {};\n", u(b * threads));
      if (partial) code += fmt::format("      if (e < {}) {{\n", u(length));
      code += fmt::format(
          "      let pe = select({0} - e, ({1} - e) % {1}, row == 0u);\n"
          "      write_split_bin(batch, row + {2} * e, exchange[base + exchange_index(e)],\n"
          "                      conj(exchange[partner_base + exchange_index(pe)]));\n",
          u(length - 1), u(length), u(n1));
      if (partial) code += "      }\n";
      code += "    }\n";
    }
    code += fmt::format(
        "    if (row == 0u && t == 0u) {{\n"
        "      let z0 = exchange[base + exchange_index(0u)];\n"
        "      write_split_bin(batch, {}, z0, conj(z0));\n"
        "    }}\n"
        "  }}\n",
        u(plan.fft_length));
  } else if (real_split && !pass.split_exchange && !pair_real_split_done) {
    // As in the generic pass: X_k = E_k + W_N^k O_k from Z_k and conj Z_(H-k), k = 0..H; constant trips.
    code += "  workgroupBarrier();\n  if (in_range) {\n";
    for (int64_t b = 0; b * threads <= length; ++b) {
      const bool partial = (b + 1) * threads > length + 1;
      code += fmt::format("    {{\n      let k = t + {};\n", u(b * threads));
      if (partial) code += fmt::format("      if (k <= {}) {{\n", u(length));
      code += fmt::format(
          "      write_split_bin(transform, k, exchange[base + exchange_index(k % {0})],\n"
          "                      conj(exchange[base + exchange_index(({0} - k) % {0})]));\n",
          u(length));
      if (partial) code += "      }\n";
      code += "    }\n";
    }
    code += "  }\n";
  }
  if (iterations > 1) code += "  workgroupBarrier();\n  }\n";  // the group loop
  code += "}\n";
  return code;
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
