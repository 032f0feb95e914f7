// The attention kernel's bindings and loads (attention.cpp fills the uniform): q, k, v at bindings 0-2, o at 3
// (the output, or the key slices' f32 partials with SPLIT), the parameters at 4, the reads of one
// key or value element (past the head dims: 0) and the staging of a tile of values (attention.wgsl
// declares v_tile [BC][DV4] and BC). Each operand's logical [B, rows, cols] lies in its binding as
// element (b, r, c) at offset + b * batch + r * row + c * col (AttentionOperand: a contiguous tensor,
// K^T, or a transpose folded into the node); K_TRANSPOSED stages keys along the keys (row stride 1).
{{Q_ACCESS}}
{{K_ACCESS}}
{{V_ACCESS}}
{{O_ACCESS}}

struct AttentionParams {
  batch: u32,
  lq: u32,
  lk: u32,
  scale: f32,
  q_offset: u32,
  k_offset: u32,
  v_offset: u32,
  o_offset: u32,
  splits: u32,
  keys_per_split: u32,
  pad0: u32,
  pad1: u32,
  q_batch: u32,
  q_row: u32,
  q_col: u32,
  k_batch: u32,
  k_row: u32,
  k_col: u32,
  v_batch: u32,
  v_row: u32,
  v_col: u32,
  o_batch: u32,
  o_row: u32,
  o_col: u32,
}
@group(0) @binding(4) var<uniform> params: AttentionParams;

const D: u32 = {{D}}u;
const DV: u32 = {{DV}}u;
const DV4: u32 = {{DV4}}u;

// Element d of key j (j < lk) of batch row b.
fn key(b: u32, j: u32, d: u32) -> f32 {
  if (d >= D) { return 0.0; }
  return load_k(params.k_offset + b * params.k_batch + j * params.k_row + d * params.k_col);
}

fn value(b: u32, j: u32, d: u32) -> f32 {
  if (d >= DV) { return 0.0; }
  return load_v(params.v_offset + b * params.v_batch + j * params.v_row + d * params.v_col);
}

// Element (b, r, c) of the query and of the output (not the SPLIT partials, which are contiguous).
fn q_index(b: u32, r: u32, c: u32) -> u32 {
  return params.q_offset + b * params.q_batch + r * params.q_row + c * params.q_col;
}
fn o_index(b: u32, r: u32, c: u32) -> u32 {
  return params.o_offset + b * params.o_batch + r * params.o_row + c * params.o_col;
}

// Values j0 .. j0 + n - 1 of batch row b into v_tile [BC][DV4] (rows past n zero), the invocations
// taking slots first, first + step, ...
fn stage_values(b: u32, j0: u32, n: u32, first: u32, step: u32) {
  for (var e = first; e < BC * DV4; e = e + step) {
    let j = e / DV4;
    let c = (e % DV4) * 4u;
    var x = vec4<f32>(0.0);
    if (j < n) {
      x = vec4<f32>(value(b, j0 + j, c), value(b, j0 + j, c + 1u), value(b, j0 + j, c + 2u),
                    value(b, j0 + j, c + 3u));
    }
    v_tile[e] = x;
  }
}
