// Prepacking of a constant B (weights) into the layout both GEMM paths read fastest: [N, K_pad],
// K contiguous, K_pad = packed_row_length(K) (packed_b.h: K rounded up to 4, more for 1 KiB-multiple
// rows) with zeros, so every row starts 16-byte (f32) or 8-byte (f16) aligned and the GEMMs use
// vector loads along K. One thread writes one 32-bit word (one
// f32, or two neighbouring halves), so f16 output needs no atomics.
// Template values: F16, B_TRANS (the source is stored [N, K] rather than [K, N]).

struct Params { K: u32, N: u32, K_pad: u32, src_offset: u32, words: u32 }
@group(0) @binding(2) var<uniform> params: Params;

#if F16
@group(0) @binding(0) var<storage, read> src: array<u32>;
@group(0) @binding(1) var<storage, read_write> dst: array<u32>;
fn src_elem(e: u32) -> f32 { return unpack2x16float(src[e >> 1u])[e & 1u]; }
const PER_WORD: u32 = 2u;
#else
@group(0) @binding(0) var<storage, read> src: array<f32>;
@group(0) @binding(1) var<storage, read_write> dst: array<f32>;
fn src_elem(e: u32) -> f32 { return src[e]; }
const PER_WORD: u32 = 1u;
#endif

fn source(n: u32, k: u32) -> f32 {
  let kk = min(k, params.K - 1u);
#if B_TRANS
  let e = params.src_offset + n * params.K + kk;
#else
  let e = params.src_offset + kk * params.N + n;
#endif
  return select(0.0, src_elem(e), k < params.K);
}

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let word = (wg.y * groups.x + wg.x) * 256u + lid;
  if (word >= params.words) { return; }
  let e = word * PER_WORD;  // first packed element of this word
  let n = e / params.K_pad;
  let k = e % params.K_pad;
#if F16
  dst[word] = pack2x16float(vec2<f32>(source(n, k), source(n, k + 1u)));
#else
  dst[word] = source(n, k);
#endif
}
