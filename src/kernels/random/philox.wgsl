// Philox4x32-10 (Salmon, Moraes, Dror, Shaw, "Parallel random numbers: as easy as 1, 2, 3", SC'11;
// the constants and round of Random123's philox4x32): a counter-based generator, so element i's
// numbers are a pure function of (key, i): no state, the same bits on every adapter, and any
// element computable alone. WGSL has no 64-bit product: the high word is built from 16-bit halves.

fn philox_mulhilo(a: u32, b: u32) -> vec2<u32> {  // (high, low) words of the 64-bit a * b
  let a_lo = a & 0xFFFFu;
  let a_hi = a >> 16u;
  let b_lo = b & 0xFFFFu;
  let b_hi = b >> 16u;
  let lo_lo = a_lo * b_lo;
  let lo_hi = a_lo * b_hi;
  let hi_lo = a_hi * b_lo;
  let middle = (lo_lo >> 16u) + (lo_hi & 0xFFFFu) + (hi_lo & 0xFFFFu);
  let high = a_hi * b_hi + (lo_hi >> 16u) + (hi_lo >> 16u) + (middle >> 16u);
  return vec2<u32>(high, a * b);
}

fn philox4x32_10(counter: vec4<u32>, key_in: vec2<u32>) -> vec4<u32> {
  var c = counter;
  var key = key_in;
  for (var round = 0u; round < 10u; round = round + 1u) {
    let p0 = philox_mulhilo(0xD2511F53u, c.x);
    let p1 = philox_mulhilo(0xCD9E8D57u, c.z);
    c = vec4<u32>(p1.x ^ c.y ^ key.x, p1.y, p0.x ^ c.w ^ key.y, p0.y);
    key = key + vec2<u32>(0x9E3779B9u, 0xBB67AE85u);
  }
  return c;
}

// [0, 1) from the top 24 bits of a word (exactly representable in f32).
fn unit_interval(bits: u32) -> f32 {
  return f32(bits >> 8u) * (1.0 / 16777216.0);
}
