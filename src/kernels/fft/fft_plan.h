// FFT planning, apart from code generation (as VkFFT separates vkFFT_PlanManagement from
// vkFFT_CodeGen): for a request and the device limits, choose the algorithm, split the length into
// passes that each fit one workgroup's memory, and pick each pass's radices and thread shape.
//
// Algorithms:
//  - stockham_workgroup: N is 7-smooth and N complex values fit workgroup memory (twice as many on the
//    unrolled path, whose whole passes may split their exchange into real and imaginary halves): one
//    pass, one workgroup per transform (several for small N), radix-2/3/4/5/7/8(/16) Stockham stages.
//  - four_step: N is 7-smooth but too long: N = N1 * N2 (Bailey's four-step FFT): N2 column FFTs of
//    length N1 with the twiddle W_N^(n2 k1) applied on the way out, then N1 row FFTs of length N2,
//    through a scratch buffer in global memory.
//  - real input / output of even N: the N/2-point complex FFT of packed sample pairs (real_packed);
//    a four-step forward one splits the bins in its rows pass, whose workgroups hold paired rows
//    k1 and N1 - k1 (bin k's partner H - k lies in the other).
//  - bluestein: N has a prime factor > 7: the chirp-z transform as a circular convolution of length
//    M >= 2N-2 (bluestein_min_length), M 7-smooth, done with two FFTs of length M (each
//    stockham_workgroup or four_step).
//
// FftPlan::create plans for the generic shaders (lengths as uniforms). On GPUs FftKernel then re-shapes
// each pass for the unrolled shaders and fuses Bluestein's passes (stockham_unrolled.h).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/fft/fft_description.h"

namespace onda::kernels::fft {

enum class FftAlgorithm : uint8_t { stockham_workgroup, four_step, bluestein };
const char* algorithm_name(FftAlgorithm algorithm);

// How one pass maps its transforms onto the sequence of length F (the inner FFT length).
enum class PassShape : uint8_t {
  whole,    // transform t is sequence t, element e is its sample e
  columns,  // four-step, first: t = b*N2 + n2 reads samples e*N2 + n2 (e < N1), writes scratch with twiddles
  rows,     // four-step, second: t = b*N1 + k1 reads scratch row k1, writes samples k1 + N1*e (e < N2)
  // Bluestein fused (unrolled passes only, stockham_unrolled.h): t = b*N1 + k1 reads scratch row k1 and
  // FFTs it to bins X_(k1 + N1*k2); multiplies by the kernel spectrum (conjugated: the inverse FFT is
  // conj(FFT(conj))); FFTs that row again over k2 (the first step of a four-step FFT whose input index
  // is k1 + N1*k2) and writes it, twiddled by W_M^(k1*c2), to row k1 of the spectrum buffer.
  rows_convolve,
  // ... then t = b*N2 + c2 reads column c2 of the spectrum buffer (elements e*N2 + c2), FFTs it over k1
  // and writes samples c2 + N2*e (e < N1) to the sink.
  columns_out,
  // Three-pass four-step for long transforms, N = N1*N2*N3 (fft_passes): a columns pass over N1 with
  // other_factor M = N2*N3 first, then the four-step of M over each of its N1 scratch rows:
  // t = (b*N1 + k1)*N3 + n3 reads scratch elements e*N3 + n3 of row k1 (e < N2) and writes them,
  // twiddled by W_M^(e*n3), to the same place in the spectrum buffer (other_factor N3) ...
  inner_columns,
  // ... then t = (b*N2 + k2)*N1 + k1 (k1 fastest: consecutive transforms write consecutive bins) reads
  // the N3 elements k2*N3 + e of spectrum row k1 and writes bins k1 + N1*k2 + N1*N2*e (other_factor N2).
  inner_rows,
};

// Where a pass's sequence comes from (whole and columns passes).
enum class SequenceSource : uint8_t {
  user_input,        // the caller's tensor (domain, padding, conjugation for inverse)
  chirp_input,       // Bluestein: x_n * conj(chirp_n), zero for n >= N
  spectrum_product,  // Bluestein: conj(spectrum_m * kernel_m) (inverse FFT as conj(FFT(conj)))
};

// Where a pass's sequence goes (whole and rows passes).
enum class SequenceSink : uint8_t {
  user_output,       // the caller's tensor (domain, scale, conjugation for inverse)
  spectrum,          // Bluestein: the scratch spectrum of the chirped input
  bluestein_output,  // Bluestein: conj(chirp_k * y_k) for k < N to the caller's tensor
};

struct StockhamPassPlan {
  PassShape shape = PassShape::whole;
  int64_t length = 1;        // L: points of each transform of this pass
  int64_t other_factor = 1;  // four-step: N2 for a columns pass, N1 for a rows pass
  int64_t outer_factor = 1;  // inner_columns / inner_rows: N1, the first pass's length
  int64_t transform_count = 1;
  std::vector<int> radices;  // product = length; empty for length 1
  int threads_per_transform = 1;
  int transforms_per_workgroup = 1;
  // Shader constants, bucketed so that few pipelines serve many lengths.
  int workgroup_size = 64;      // >= threads_per_transform * transforms_per_workgroup
  int64_t exchange_length = 1;  // workgroup-memory points, >= length * transforms_per_workgroup
  int max_registers = 8;        // per-thread points of the busiest stage
  SequenceSource source = SequenceSource::user_input;
  SequenceSink sink = SequenceSink::user_output;
  // Specialised code (stockham_unrolled.h): length, radices and thread shape are constants of the
  // shader, stages unrolled; workgroup_size is exactly threads_per_transform * transforms_per_workgroup.
  bool unrolled = false;
  // Unrolled passes: point p of a transform sits at p + (p >> 3) in workgroup memory when true (one pad
  // every 8 points breaks the bank conflicts of the stride-R writes of the first stages).
  bool padded_exchange = false;
  // Unpadded unrolled passes: point p sits at p ^ ((p >> 3) & 31) when true. The XOR permutes each
  // aligned block of 32 points (bits 5 up are kept, so it stays a bijection inside the transform's
  // slot) and sends the 32 lanes of a stride-8 or stride-64 stage write to 32 different banks.
  bool swizzled_exchange = false;
  // Bluestein in one whole pass (unrolled only, fuse_bluestein_convolution): FFT of the chirped input,
  // product with the kernel spectrum, inverse FFT, all in workgroup memory.
  bool convolve_in_workgroup = false;
  // Rows pass of a packed real forward FFT (four-step): the real split X_k = E_k + W_N^k O_k needs
  // Z_(H-k) beside Z_k, and bin k = k1 + N1*k2 has its partner in row (N1 - k1) mod N1. The pass runs
  // transforms in pairs p = 0..N1/2: of a workgroup's slots, the first half holds rows p, the second
  // rows (N1 - p) mod N1 (a self-paired row twice, written once). transforms_per_workgroup is even.
  bool paired_rows = false;
  // Whole unrolled passes longer than a workgroup's memory holds as complex values (up to twice that):
  // every stage boundary exchanges the real parts through workgroup memory, then the imaginary parts
  // (four barriers instead of two; the values stay in registers in between). FftDeviceLimits::split_exchange.
  bool split_exchange = false;
  // Unrolled passes: groups of transforms_per_workgroup transforms each workgroup runs in turn.
  int group_iterations = 1;
  // Unrolled whole passes of a packed r2c transform: the real split from registers, the last stage in
  // Hermitian butterfly pairs (where the pass allows it: unrolled_main.cpp).
  bool pair_real_split = false;

  // Transforms of this pass per transformed sequence: 1 (whole), N2 or N1 (four-step), F / length
  // (three-pass inner passes), or two per row pair (paired_rows).
  int64_t transforms_per_sequence() const;
  int64_t workgroup_count() const;
};

struct FftPlan {
  FftDescription description;
  FftAlgorithm algorithm = FftAlgorithm::stockham_workgroup;
  int64_t fft_length = 1;  // F: N, or Bluestein's M
  std::vector<StockhamPassPlan> passes;
  bool needs_stage_scratch = false;  // four-step intermediate, batch * F complex f32
  bool needs_spectrum = false;       // Bluestein spectrum (or three-pass scratch), batch * F complex f32
  // Real input forward / Hermitian input inverse of even N with N/2 7-smooth: a complex FFT of F = N/2
  // points (samples packed in pairs), split into the N/2+1 bins in workgroup memory (r2c) or combined
  // from them on load (c2r). Otherwise real data goes through a full-length complex FFT.
  bool real_packed = false;
  // Outer rows per chunk: the passes run once per chunk of outer rows so that the scratch buffers
  // fit the largest storage binding. Each pass's transform_count is that of a full chunk.
  int64_t outer_per_chunk = 1;
  int64_t chunk_batch() const { return outer_per_chunk * description.inner_count; }

  // Throws std::invalid_argument for a bad description, DeviceLimitError when the work cannot fit
  // the device (e.g. the scratch of one outer row exceeds the largest storage binding).
  static FftPlan create(const FftDescription& description, const FftDeviceLimits& limits);
  std::string summary() const;
};

// Radices (2,3,4,5,7,8) whose product is `length`, largest first; empty when length is 1.
// Throws std::invalid_argument when length has a prime factor > 7.
std::vector<int> choose_radices(int64_t length);
bool is_seven_smooth(int64_t n);
// The smallest 7-smooth number >= n.
int64_t next_seven_smooth(int64_t n);
// The shortest circular convolution that computes Bluestein's N-point chirp-z transform: 2N - 2, since
// the chirp kernel is even and the lags +-(N - 1) may share a slot (fft_plan.cpp).
int64_t bluestein_min_length(int64_t n);

}  // namespace onda::kernels::fft
