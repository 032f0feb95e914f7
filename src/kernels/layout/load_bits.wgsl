// Raw bits of input element `index` of `in_buf` (array<u32>): one word for 32-bit dtypes, the low or
// high half of a word for f16 (HALF). Layout shaders move bits, never values, so every dtype is exact.
fn load_bits(index: u32) -> u32 {
#if HALF
  return (in_buf[index >> 1u] >> ((index & 1u) << 4u)) & 0xFFFFu;
#else
  return in_buf[index];
#endif
}
