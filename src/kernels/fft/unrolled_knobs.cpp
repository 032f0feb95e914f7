#include "kernels/fft/unrolled_knobs.h"

#include <cstdlib>
#include <string>

namespace onda::kernels::fft::knobs {

int64_t env_int(const char* name, int64_t fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::stoll(v) : fallback;
}

// Table twiddles (R - 1 table loads per butterfly instead of one) ran 0.65-2.7x slower on an H200
// (2026-12-03, 62beefa).
bool twiddle_powers() {
  static const bool powers = [] {
    const char* v = std::getenv("ONDA_FFT_TWIDDLE");
    return !(v && std::string(v) == "table");
  }();
  return powers;
}

bool split_four_step_twiddle() {
  static const bool split = [] {
    const char* v = std::getenv("ONDA_FFT_FOUR_STEP_TWIDDLE");
    return !(v && std::string(v) == "full");
  }();
  return split;
}

// Default 8 (64-byte runs): on an H200 (2026-12-03) 16 and 32 ran slower (c2c N = 16384: 8 -> 0.86 ms,
// 16 -> 1.08 (staged), 32 -> 1.22), as did loading rows passes row-contiguously through workgroup memory
// first (0.86 -> 0.97); again on 2026-12-04 with radix 16 and split exchange, 4 and 16: 1.07 / 1.04 ms.
int64_t max_run() {
  static const int64_t run = env_int("ONDA_FFT_MAX_RUN", 8);
  return run;
}

// Radix 16 means fewer stages and barriers and 16 points per thread: for four-step passes by default,
// whose many transforms per workgroup leave few threads to each. On an H200 (2026-12-04, batches of
// 2^26 points) it took c2c 2^20 from 1.92 to 1.68 ms, r2c 2^20 1.25 -> 1.13, c2c 16384 0.87 -> 0.82, but
// whole passes ran 5-300% slower (r2c 4096 0.39 -> 0.47, c2c 2048 0.55 -> 0.64 with outliers to 1.8).
// ONDA_FFT_RADIX16=0: never, =1: every pass.
bool radix16(const StockhamPassPlan& pass) {
  static const int64_t mode = env_int("ONDA_FFT_RADIX16", -1);
  return mode < 0 ? pass.shape != PassShape::whole : mode != 0;
}

std::vector<int> forced_radices(int64_t length) {
  const char* v = std::getenv("ONDA_FFT_RADICES");
  if (!v || !*v) return {};
  std::vector<int> radices;
  int64_t product = 1;
  for (const char* p = v; *p;) {
    char* end = nullptr;
    const long r = std::strtol(p, &end, 10);
    if (end == p || r < 2) return {};
    radices.push_back(static_cast<int>(r));
    product *= r;
    p = *end == ',' ? end + 1 : end;
  }
  return product == length ? radices : std::vector<int>{};
}

int64_t split_mode() {
  return env_int("ONDA_FFT_SPLIT", 1);
}

// On an H200 (2026-12-04, 2^26 points, same call): c2c 2^20 (1024 x 1024) 1.65 -> 1.44 ms with runs of
// 8 and one radix-16 butterfly per thread (=2; =1, 128 threads per transform: 2.66, or 1.45 with a group
// loop of 1), r2c 2^20 1.12 -> 1.12 (its rows are paired, so only the columns pass splits); passes
// that already hold runs of 8 are unchanged.
int64_t split_runs() {
  static const int64_t mode = env_int("ONDA_FFT_SPLIT_RUNS", 2);
  return mode;
}

// 4 for four-step passes (on an H200, 2026-12-04, same call: c2c 16384 0.825 -> 0.771 ms, c2c 2^20
// 1.685 -> 1.646, r2c 2^20 1.131 -> 1.121; Bluestein 65537 as 64 x 2048 4.00 -> 3.78, though as 405 x 324
// (M = 131220) 5.14 -> 5.19), 1 for whole passes (within noise or slower, r2c 2048 0.315 -> 0.353).
// ONDA_FFT_LOOP=K: K for every pass.
int group_iterations(const StockhamPassPlan& pass) {
  static const int64_t k = env_int("ONDA_FFT_LOOP", 0);
  if (k > 0) return static_cast<int>(k);
  return pass.shape == PassShape::whole ? 1 : 4;
}

bool prefetch_next_group() {
  static const bool on = env_int("ONDA_FFT_PREFETCH", 1) != 0;
  return on;
}

// Each thread then holds every Z_k it needs next to its Z_(H-k) and writes the bins without a round trip
// through workgroup memory, but half the threads idle in that stage with twice the registers: on an H200
// (2026-12-04, 2^26 points) it took r2c 16384 (L = 8192) from 0.471 to 0.436 ms, left 2048 and 4096
// unchanged and slowed 256..1024 (0.26 -> 0.36 ms at 1024). With unpadded split exchanges and the pairs
// in one round (night, same call, off / on): r2c 2048 (L = 1024) 0.263 / 0.258, r2c 4096 0.273 / 0.263,
// r2c 16384 0.424 / 0.435, r2c 512 (L = 256) 0.289 / 0.337; so it runs for passes of 1024 to 4096
// points. ONDA_FFT_PAIR=0: never, =2: every real-split pass (read per pass: the unrolled tests set it).
bool pair_real_split(int64_t length) {
  const int64_t mode = env_int("ONDA_FFT_PAIR", 1);
  return mode == 2 || (mode == 1 && length >= 1024 && length <= 4096);
}

int64_t swizzle_mode() {
  return env_int("ONDA_FFT_SWIZZLE", 1);
}

}  // namespace onda::kernels::fft::knobs
