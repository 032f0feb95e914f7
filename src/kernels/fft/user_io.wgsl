// Reading and writing the caller's tensors: strided (outer, axis, inner) layout, f32 or packed f16,
// complex / real / onesided Hermitian, with the conjugation of inverse(x) = conj(forward(conj(x))) and
// the 1/N scale folded in. Transform b is (outer, inner) = (b / inner_count, b % inner_count).

#if USER_INPUT
#if INPUT_F16
@group(0) @binding({{INPUT_BINDING}}) var<storage, read> user_input: array<u32>;
fn input_scalar(i: u32) -> f32 {
  let pair = unpack2x16float(user_input[i >> 1u]);
  return select(pair.x, pair.y, (i & 1u) == 1u);
}
fn input_complex(i: u32) -> vec2<f32> {
  return unpack2x16float(user_input[i >> 1u]);
}
#else
#if IO_VEC2
// Even offsets and strides (checked by the kernel): a complex value is one 8-byte load.
@group(0) @binding({{INPUT_BINDING}}) var<storage, read> user_input: array<vec2<f32>>;
fn input_scalar(i: u32) -> f32 {
  return user_input[i >> 1u][i & 1u];
}
fn input_complex(i: u32) -> vec2<f32> {
  return user_input[i >> 1u];
}
#else
@group(0) @binding({{INPUT_BINDING}}) var<storage, read> user_input: array<f32>;
fn input_scalar(i: u32) -> f32 {
  return user_input[i];
}
fn input_complex(i: u32) -> vec2<f32> {
  return vec2<f32>(user_input[i], user_input[i + 1u]);
}
#endif
#endif

#if WINDOWED
// STFT: sample n is multiplied by window[n] (same dtype as the input).
#if INPUT_F16
@group(0) @binding({{WINDOW_BINDING}}) var<storage, read> window: array<u32>;
fn window_value(n: u32) -> f32 {
  let i = params.window_offset + n;
  let pair = unpack2x16float(window[i >> 1u]);
  return select(pair.x, pair.y, (i & 1u) == 1u);
}
#else
@group(0) @binding({{WINDOW_BINDING}}) var<storage, read> window: array<f32>;
fn window_value(n: u32) -> f32 {
  return window[params.window_offset + n];
}
#endif
#endif

fn input_address(b: u32, n: u32) -> u32 {
  let outer = b / params.inner_count;
  let inner = b - outer * params.inner_count;
  return params.in_offset + outer * params.in_outer_stride + inner * params.in_inner_stride + n * params.in_axis_stride;
}

// Real sample n (zero past the input, times the window).
fn real_sample(b: u32, n: u32) -> f32 {
  if (n >= params.input_length) {
    return 0.0;
  }
#if WINDOWED
  return input_scalar(input_address(b, n)) * window_value(n);
#else
  return input_scalar(input_address(b, n));
#endif
}

// Sample n of transform b, conjugated for an inverse transform (params.conjugate = -1). The domain is a
// uniform in generic passes (one pipeline for every domain), a constant in unrolled ones (INPUT_KIND):
//   0 complex; 1 real; 2 onesided Hermitian (X[0..N/2] stored, X[n] = conj(X[N - n]) above);
//   3 real, packed: z_n = x_2n + i x_2n+1, n < N/2, for the half-length real FFT;
//   4 onesided Hermitian, packed for the half-length inverse: with X_(k+N/2) = conj(X_(N/2-k)) (k > 0),
//     Z_k = (X_k + X_(k+N/2)) + i W_N^-k (X_k - X_(k+N/2)), whose inverse FFT is x_2m + i x_2m+1.
fn read_user(b: u32, n: u32) -> vec2<f32> {
  var v = vec2<f32>(0.0, 0.0);
  switch {{INPUT_KIND}} {
    case 1u: {
      v = vec2<f32>(real_sample(b, n), 0.0);
    }
    case 2u: {
      if (n <= params.half_length) {
        v = input_complex(input_address(b, n));
      } else {
        v = conj(input_complex(input_address(b, params.length - n)));
      }
    }
    case 3u: {
#if IO_VEC2
      // A dense real input's pair (2n, 2n+1) is one vec2 at an even index (see vec2_user_io).
      if (params.in_axis_stride == 1u && 2u * n + 1u < params.input_length) {
        v = input_complex(input_address(b, 2u * n));
#if WINDOWED
        v = v * vec2<f32>(window_value(2u * n), window_value(2u * n + 1u));
#endif
      } else {
        v = vec2<f32>(real_sample(b, 2u * n), real_sample(b, 2u * n + 1u));
      }
#else
      v = vec2<f32>(real_sample(b, 2u * n), real_sample(b, 2u * n + 1u));
#endif
    }
    case 4u: {
      var low = input_complex(input_address(b, n));
      var high = conj(input_complex(input_address(b, params.half_length - n)));
      if (n == 0u) {
        // Bins 0 and N/2 of a real signal are real: their imaginary parts are dropped (numpy irfft).
        low.y = 0.0;
        high.y = 0.0;
      }
      let odd = cmul(conj(tables[params.real_offset + n]), low - high);
      v = (low + high) + vec2<f32>(-odd.y, odd.x);
    }
    default: {
      if (n < params.input_length) {
        v = input_complex(input_address(b, n));
#if WINDOWED
        v = v * window_value(n);
#endif
      }
    }
  }
  return vec2<f32>(v.x, v.y * params.conjugate);
}
#endif

#if USER_OUTPUT
#if OUTPUT_F16
// Real f16 outputs of two transforms may share one 32-bit word: a real value replaces only its half,
// atomically; a complex value is a whole word.
@group(0) @binding({{OUTPUT_BINDING}}) var<storage, read_write> user_output: array<atomic<u32>>;
fn output_scalar(i: u32, x: f32) {
  let shift = (i & 1u) * 16u;
  let bits = pack2x16float(vec2<f32>(x, 0.0)) & 0xFFFFu;
  atomicAnd(&user_output[i >> 1u], ~(0xFFFFu << shift));
  atomicOr(&user_output[i >> 1u], bits << shift);
}
fn output_complex(i: u32, v: vec2<f32>) {
  atomicStore(&user_output[i >> 1u], pack2x16float(v));
}
#else
#if IO_VEC2
@group(0) @binding({{OUTPUT_BINDING}}) var<storage, read_write> user_output: array<vec2<f32>>;
fn output_scalar(i: u32, x: f32) {
  user_output[i >> 1u][i & 1u] = x;
}
fn output_complex(i: u32, v: vec2<f32>) {
  user_output[i >> 1u] = v;
}
#else
@group(0) @binding({{OUTPUT_BINDING}}) var<storage, read_write> user_output: array<f32>;
fn output_scalar(i: u32, x: f32) {
  user_output[i] = x;
}
fn output_complex(i: u32, v: vec2<f32>) {
  user_output[i] = v.x;
  user_output[i + 1u] = v.y;
}
#endif
#endif

fn output_address(b: u32, k: u32) -> u32 {
  let outer = b / params.inner_count;
  let inner = b - outer * params.inner_count;
  return params.out_offset + outer * params.out_outer_stride + inner * params.out_inner_stride + k * params.out_axis_stride;
}

// Bin k of transform b, given the forward transform z of the (conjugated) input. Output kind (a
// uniform, or a constant in unrolled passes): 0 complex, 1 onesided complex (bins 0..N/2), 2 real, 3 real pair (samples 2k, 2k+1).
fn write_user(b: u32, k: u32, z: vec2<f32>) {
  if ({{OUTPUT_KIND}} == 1u && k > params.half_length) {
    return;
  }
  let v = vec2<f32>(z.x, z.y * params.conjugate) * params.scale;
  if ({{OUTPUT_KIND}} == 2u) {
    output_scalar(output_address(b, k), v.x);
  } else if ({{OUTPUT_KIND}} == 3u) {
#if IO_VEC2
    if (params.out_axis_stride == 1u) {
      output_complex(output_address(b, 2u * k), v);  // a dense real pair, one vec2 (see vec2_user_io)
      return;
    }
#endif
    output_scalar(output_address(b, 2u * k), v.x);
    output_scalar(output_address(b, 2u * k + 1u), v.y);
  } else {
    output_complex(output_address(b, k), v);
  }
}
#endif
