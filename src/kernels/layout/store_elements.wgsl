// Shared tail of the layout shaders: element loads by raw bits and the entry point that writes the
// output. Layout ops only move elements, so they move bit patterns (never convert), which keeps
// every dtype exact: 32-bit storage (f32, i32, i64-as-i32, u8/bool-as-u32) one element per word,
// f16 as two 16-bit halves per word.
//
// The including shader defines `params` (with threads, words_per_row, run_length), `in_buf`,
// `out_buf` and two functions of a linear output index `lin` (row-major over the output region):
//   out_address(lin) -> u32   the output element it lands on;
//   source_bits(lin) -> u32   its bits (low 16 for f16).
// HALF: each invocation produces one whole 32-bit output word, so no two invocations write the
// same word. The region is enumerated as rows of `run_length` elements that are contiguous in the
// output; rows never share a word (a gap between rows is >= 1 element, so their words differ), and
// a word only partly covered by a row keeps its other half (read-modify-write within the owner).

#include "layout/load_bits.wgsl"

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let t = (wg.y * nwg.x + wg.x) * 256u + lid;
  if (t >= params.threads) { return; }
#if HALF
  let row = t / params.words_per_row;
  let first = row * params.run_length;
  let row_base = out_address(first);
  let row_end = row_base + params.run_length;  // exclusive
  let word = row_base / 2u + t % params.words_per_row;
  if (2u * word >= row_end) { return; }
  var old = 0u;
  if (2u * word < row_base || 2u * word + 1u >= row_end) { old = out_buf[word]; }
  var result = 0u;
  for (var h = 0u; h < 2u; h = h + 1u) {
    let e = 2u * word + h;
    var bits = (old >> (16u * h)) & 0xFFFFu;
    if (e >= row_base && e < row_end) { bits = source_bits(first + e - row_base) & 0xFFFFu; }
    result = result | (bits << (16u * h));
  }
  out_buf[word] = result;
#else
  out_buf[out_address(t)] = source_bits(t);
#endif
}
