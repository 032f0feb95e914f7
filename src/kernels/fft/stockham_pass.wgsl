// One pass of a mixed-radix Stockham autosort FFT (Stockham; as laid out for GPUs by Govindaraju et
// al., "High performance discrete Fourier transforms on graphics processors", SC 2008): each transform
// of L = params.pass_length points lives in workgroup memory; stage s of radix R reads butterfly j's
// inputs j + r*L/R, twiddles them by W_(Ns*R)^((j mod Ns)*r) and writes (j/Ns)*Ns*R + (j mod Ns) + r*Ns,
// which leaves the output in natural order with no bit reversal. The first stage reads global memory
// and the last writes it directly. Twiddles come from a table computed in double on the host.
//
// The length, radices, domain and direction are uniforms, not constants: one pipeline serves every
// length of a (dtype, source, sink, pass shape, workgroup class) combination. A first version generated
// unrolled stages per length: compiling a pipeline per length on lavapipe made the test sweep take
// minutes. Registers are indexed at run time (v[b * radix + r]); a variant with constant-trip loops
// (static indices) compiled slower on lavapipe and ran no faster there. On
// discrete GPUs the per-length unrolled variant (stockham_unrolled.cpp, generated `main` below under
// UNROLLED) is the default; this generic main serves CPU adapters.
#include "fft/complex_math.wgsl"

struct Params {
  transform_count: u32,
  inner_count: u32,
  input_length: u32,
  length: u32,
  in_offset: u32,
  in_outer_stride: u32,
  in_inner_stride: u32,
  in_axis_stride: u32,
  out_offset: u32,
  out_outer_stride: u32,
  out_inner_stride: u32,
  out_axis_stride: u32,
  scale: f32,
  fft_length: u32,
  pass_length: u32,
  other_factor: u32,
  stage_count: u32,
  threads_per_transform: u32,
  transforms_per_workgroup: u32,
  chirp_offset: u32,
  kernel_offset: u32,
  half_length: u32,
  conjugate: f32,
  input_kind: u32,
  output_kind: u32,
  window_offset: u32,
  real_offset: u32,
  split_twiddle_offset: u32,
  radices: array<vec4<u32>, 4>,
}

// Twiddles W_F^k (k < F), then Bluestein's chirp and kernel spectrum when the plan has them.
@group(0) @binding({{TABLES_BINDING}}) var<storage, read> tables: array<vec2<f32>>;
@group(0) @binding({{PARAMS_BINDING}}) var<uniform> params: Params;

#include "fft/user_io.wgsl"
#include "fft/sequence_io.wgsl"

#if SHAPE_WHOLE
fn load(t: u32, e: u32) -> vec2<f32> {
  return read_sequence(t, e);
}
fn store(t: u32, e: u32, v: vec2<f32>) {
  write_sequence(t, e, v);
}
#endif

#if FOUR_STEP_TWIDDLE
// The four-step twiddle W_F^t from the two short tables of split_twiddle_table (fft_tables.h).
fn four_step_twiddle(t: u32) -> vec2<f32> {
  let low = tables[params.split_twiddle_offset + (t % {{SPLIT_TWIDDLE_LOW}}u)];
  return cmul(low, tables[params.split_twiddle_offset + {{SPLIT_TWIDDLE_LOW}}u + t / {{SPLIT_TWIDDLE_LOW}}u]);
}
#endif

#if SHAPE_COLUMNS
// Four-step (Bailey), first pass: column n2 of batch b holds samples n1*N2 + n2; its FFT over n1 is
// twiddled by W_F^(n2*k1) and stored transposed, at k1*N2 + n2, for the row pass.
@group(0) @binding({{STAGE_BINDING}}) var<storage, read_write> stage_scratch: array<vec2<f32>>;
fn load(t: u32, e: u32) -> vec2<f32> {
  let b = t / params.other_factor;
  let n2 = t - b * params.other_factor;
  return read_sequence(b, e * params.other_factor + n2);
}
fn store(t: u32, e: u32, v: vec2<f32>) {
  let b = t / params.other_factor;
  let n2 = t - b * params.other_factor;
  stage_scratch[b * params.fft_length + e * params.other_factor + n2] = cmul(v, four_step_twiddle(e * n2));
}
#endif

#if SHAPE_ROWS
// Four-step, second pass: row k1 (N2 points) gives bins k1 + N1*k2.
@group(0) @binding({{STAGE_BINDING}}) var<storage, read> stage_scratch: array<vec2<f32>>;
fn load(t: u32, e: u32) -> vec2<f32> {
  let b = t / params.other_factor;
  let k1 = t - b * params.other_factor;
  return stage_scratch[b * params.fft_length + k1 * params.pass_length + e];
}
fn store(t: u32, e: u32, v: vec2<f32>) {
  let b = t / params.other_factor;
  let k1 = t - b * params.other_factor;
  write_sequence(b, k1 + params.other_factor * e, v);
}
#endif

#if SHAPE_INNER_COLUMNS
// Three-pass four-step (PassShape::inner_columns), middle pass: row k1 of the first pass's scratch
// (M = N2*N3 points) as a four-step of M, its columns n3 over e < N2, twiddled by W_M^(e*n3) =
// W_F^(N1*e*n3) into the spectrum buffer.
@group(0) @binding({{STAGE_BINDING}}) var<storage, read> stage_scratch: array<vec2<f32>>;
@group(0) @binding({{SPECTRUM_BINDING}}) var<storage, read_write> spectrum: array<vec2<f32>>;
fn load(t: u32, e: u32) -> vec2<f32> {
  let row = t / params.other_factor;  // b*N1 + k1: rows of M points, back to back
  let n3 = t - row * params.other_factor;
  return stage_scratch[row * params.pass_length * params.other_factor + e * params.other_factor + n3];
}
fn store(t: u32, e: u32, v: vec2<f32>) {
  let row = t / params.other_factor;
  let n3 = t - row * params.other_factor;
  let n1 = params.fft_length / (params.pass_length * params.other_factor);
  spectrum[row * params.pass_length * params.other_factor + e * params.other_factor + n3] =
      cmul(v, four_step_twiddle(n1 * e * n3));
}
#endif

#if SHAPE_INNER_ROWS
// ... and the last: transform t = (b*N2 + k2)*N1 + k1 reads the N3 points k2*N3 + e of spectrum row
// k1 and writes bins k1 + N1*k2 + N1*N2*e (consecutive k1: consecutive bins).
@group(0) @binding({{SPECTRUM_BINDING}}) var<storage, read> spectrum: array<vec2<f32>>;
struct InnerRow { b: u32, k1: u32, k2: u32, n1: u32 }
fn inner_row(t: u32) -> InnerRow {
  let n1 = params.fft_length / (params.pass_length * params.other_factor);
  let rest = t / n1;  // b*N2 + k2
  let b = rest / params.other_factor;
  return InnerRow(b, t - rest * n1, rest - b * params.other_factor, n1);
}
fn load(t: u32, e: u32) -> vec2<f32> {
  let r = inner_row(t);
  return spectrum[r.b * params.fft_length + (r.k1 * params.other_factor + r.k2) * params.pass_length + e];
}
fn store(t: u32, e: u32, v: vec2<f32>) {
  let r = inner_row(t);
  write_sequence(r.b, r.k1 + r.n1 * (r.k2 + params.other_factor * e), v);
}
#endif

#if PAIRED_ROWS
// Paired rows (StockhamPassPlan::paired_rows): pair p of batch b is row p (lower slot) and row
// (N1 - p) mod N1 (upper slot); N1/2 + 1 pairs per batch.
fn paired_row_transform(pair: u32, upper: bool) -> u32 {
  let n1 = params.other_factor;
  let pairs = n1 / 2u + 1u;
  let b = pair / pairs;
  let p = pair - b * pairs;
  return b * n1 + select(p, (n1 - p) % n1, upper);
}
#endif

#if REAL_SPLIT
// Real FFT of even N through a complex FFT of H = N/2 points of z_n = x_2n + i x_2n+1: with
// E_k = (Z_k + conj Z_(H-k)) / 2 and O_k = -i (Z_k - conj Z_(H-k)) / 2 (the spectra of the even and odd
// samples), X_k = E_k + W_N^k O_k for k = 0..H. zc is conj Z_(H-k).
fn write_split_bin(b: u32, k: u32, zk: vec2<f32>, zc: vec2<f32>) {
  write_user(b, k, 0.5 * ((zk + zc) + mul_neg_i(cmul(tables[params.real_offset + k], zk - zc))));
}
#endif

#if WHOLE_CONVOLVE
// Bluestein in one pass (unrolled only): bin m of the chirped input's FFT times the kernel spectrum,
// conjugated for the inverse FFT that follows in the same workgroup.
fn convolve(t: u32, m: u32, v: vec2<f32>) -> vec2<f32> {
  return conj(cmul(v, tables[params.kernel_offset + m]));
}
#endif

#if SHAPE_ROWS_CONVOLVE
// Bluestein fused (unrolled passes only; PassShape::rows_convolve in fft_plan.h): row k1 of the four-step
// scratch, its bins k1 + N1*k2 times the kernel spectrum, then the inverse's first four-step step.
@group(0) @binding({{STAGE_BINDING}}) var<storage, read> stage_scratch: array<vec2<f32>>;
@group(0) @binding({{SPECTRUM_BINDING}}) var<storage, read_write> spectrum: array<vec2<f32>>;
fn load(t: u32, e: u32) -> vec2<f32> {
  let b = t / params.other_factor;
  let k1 = t - b * params.other_factor;
  return stage_scratch[b * params.fft_length + k1 * params.pass_length + e];
}
fn convolve(t: u32, k2: u32, v: vec2<f32>) -> vec2<f32> {
  let k1 = t % params.other_factor;
  return conj(cmul(v, tables[params.kernel_offset + k1 + params.other_factor * k2]));
}
fn store(t: u32, c2: u32, v: vec2<f32>) {
  let b = t / params.other_factor;
  let k1 = t - b * params.other_factor;
  spectrum[b * params.fft_length + k1 * params.pass_length + c2] = cmul(v, four_step_twiddle(k1 * c2));
}
#endif

#if SHAPE_COLUMNS_OUT
// ... and its last step: column c2 (N1 points k1) gives samples c2 + N2*c1.
@group(0) @binding({{SPECTRUM_BINDING}}) var<storage, read> spectrum: array<vec2<f32>>;
fn load(t: u32, e: u32) -> vec2<f32> {
  let b = t / params.other_factor;
  let c2 = t - b * params.other_factor;
  return spectrum[b * params.fft_length + e * params.other_factor + c2];
}
fn store(t: u32, e: u32, v: vec2<f32>) {
  let b = t / params.other_factor;
  let c2 = t - b * params.other_factor;
  write_sequence(b, c2 + params.other_factor * e, v);
}
#endif

{{BUTTERFLIES}}

// f32 for a split exchange (one half of the complex values at a time; StockhamPassPlan::split_exchange).
var<workgroup> exchange: array<{{EXCHANGE_TYPE}}, {{EXCHANGE_LENGTH}}>;

#if UNROLLED
{{UNROLLED_MAIN}}
#else

fn stage_radix(s: u32) -> u32 {
  return params.radices[s / 4u][s % 4u];
}

@compute @workgroup_size({{WORKGROUP_SIZE}})
fn main(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wg: vec3<u32>,
        @builtin(num_workgroups) groups: vec3<u32>) {
  _ = &tables;
  let threads = params.threads_per_transform;
  let slot = lid / threads;
  let t = lid - slot * threads;
  let length = params.pass_length;
  let base = slot * length;
#if PAIRED_ROWS
  let pairs_per_group = params.transforms_per_workgroup / 2u;
  let pair = (wg.y * groups.x + wg.x) * pairs_per_group + slot % pairs_per_group;
  let upper = slot >= pairs_per_group;
  let transform = paired_row_transform(pair, upper);
  let in_range = slot < params.transforms_per_workgroup && 2u * pair < params.transform_count;
  let partner_base = ((slot + pairs_per_group) % params.transforms_per_workgroup) * length;
#else
  let transform = (wg.y * groups.x + wg.x) * params.transforms_per_workgroup + slot;
  let in_range = slot < params.transforms_per_workgroup && transform < params.transform_count;
#endif
  let stages = params.stage_count;
  if (stages == 0u && in_range && t == 0u) {
#if REAL_SPLIT
    exchange[base] = load(transform, 0u);
#else
    store(transform, 0u, load(transform, 0u));
#endif
  }
  var span = 1u;  // Ns: product of the radices of the stages before
  for (var s = 0u; s < stages; s++) {
    let radix = stage_radix(s);
    let butterflies = length / radix;
    let per_thread = (butterflies + threads - 1u) / threads;
    let twiddle_step = params.fft_length / (span * radix);  // W_(Ns*R)^m = W_F^(m * F/(Ns*R))
    // All of a stage's inputs go to registers before the barrier that lets the stage overwrite them.
    var v: array<vec2<f32>, {{MAX_REGISTERS}}>;
    for (var b = 0u; b < per_thread; b++) {
      let j = t + b * threads;
      if (in_range && j < butterflies) {
        for (var r = 0u; r < radix; r++) {
          let e = j + r * butterflies;
          if (s == 0u) {
            v[b * radix + r] = load(transform, e);
          } else {
            v[b * radix + r] = exchange[base + e];
          }
        }
      }
    }
    workgroupBarrier();
    for (var b = 0u; b < per_thread; b++) {
      let j = t + b * threads;
      if (in_range && j < butterflies) {
        let k = j % span;
        let first = b * radix;
        for (var r = 1u; r < radix; r++) {
          v[first + r] = cmul(v[first + r], tables[k * r * twiddle_step]);
        }
        butterfly(&v, first, radix);
        let o = (j / span) * span * radix + k;
        for (var r = 0u; r < radix; r++) {
          if (s + 1u == stages && !{{REAL_SPLIT_WGSL}}) {
            store(transform, o + r * span, v[first + r]);
          } else {
            exchange[base + o + r * span] = v[first + r];
          }
        }
      }
    }
    workgroupBarrier();
    span *= radix;
  }
#if REAL_SPLIT
  workgroupBarrier();
#if PAIRED_ROWS
  // Row k1 gives bins k = k1 + N1*e, whose Z_(H-k) is element N2-1-e of the partner row N1 - k1
  // (element (N2 - e) mod N2 of row 0 for k1 = 0); row 0 also gives bin H. A self-paired row in the
  // upper half is left to the lower one.
  let n1 = params.other_factor;
  let row = transform % n1;
  if (in_range && !(upper && row == (n1 - row) % n1)) {
    for (var e = t; e < length; e += threads) {
      let pe = select(length - 1u - e, (length - e) % length, row == 0u);
      write_split_bin(transform / n1, row + n1 * e, exchange[base + e], conj(exchange[partner_base + pe]));
    }
    if (row == 0u && t == 0u) {
      write_split_bin(transform / n1, params.fft_length, exchange[base], conj(exchange[base]));
    }
  }
#else
  if (in_range) {
    for (var k = t; k <= length; k += threads) {
      write_split_bin(transform, k, exchange[base + k % length], conj(exchange[base + (length - k) % length]));
    }
  }
#endif
#endif
}
#endif
