// The sequence a pass transforms and where its result goes (see SequenceSource / SequenceSink in
// fft_plan.h). Bluestein (chirp-z): X_k = conj(c_k) * sum_n (x_n conj(c_n)) c_(k-n), c_n = exp(i pi n^2/N),
// computed as a circular convolution of length M >= 2N-2 (bluestein_min_length): the spectrum of the
// chirped input times the kernel spectrum (host double precision, already divided by M), then an
// inverse FFT written as conj(FFT(conj(.))).

#if SOURCE_USER
fn read_sequence(b: u32, n: u32) -> vec2<f32> {
  return read_user(b, n);
}
#endif

#if SOURCE_CHIRP
fn read_sequence(b: u32, n: u32) -> vec2<f32> {
  if (n >= params.length) {
    return vec2<f32>(0.0, 0.0);
  }
  return cmul(read_user(b, n), conj(tables[params.chirp_offset + n]));
}
#endif

#if SOURCE_PRODUCT
@group(0) @binding({{SPECTRUM_BINDING}}) var<storage, read> spectrum: array<vec2<f32>>;
fn read_sequence(b: u32, n: u32) -> vec2<f32> {
  return conj(cmul(spectrum[b * params.fft_length + n], tables[params.kernel_offset + n]));
}
#endif

#if SINK_USER
fn write_sequence(b: u32, k: u32, v: vec2<f32>) {
  write_user(b, k, v);
}
#endif

#if SINK_SPECTRUM
@group(0) @binding({{SPECTRUM_BINDING}}) var<storage, read_write> spectrum: array<vec2<f32>>;
fn write_sequence(b: u32, k: u32, v: vec2<f32>) {
  spectrum[b * params.fft_length + k] = v;
}
#endif

#if SINK_BLUESTEIN
fn write_sequence(b: u32, k: u32, v: vec2<f32>) {
  if (k < params.length) {
    write_user(b, k, conj(cmul(tables[params.chirp_offset + k], v)));
  }
}
#endif
