#include "kernels/fft/stockham_codegen.h"

#include <fmt/format.h>

#include <cmath>
#include <cstdlib>
#include <numbers>

#include "kernels/fft/fft_tables.h"
#include "kernels/fft/stockham_unrolled.h"
#include "kernels/shader_template.h"

namespace onda::kernels::fft {
namespace {

std::string literal(double value) {
  return fmt::format("{:.17e}", value);
}

// `fn butterfly` applies the radix-R DFT to registers first..first+R-1, for every radix a plan can
// choose (the radix is a uniform, so the switch is uniform too).
std::string butterfly_dispatch(int max_registers) {
  std::string code = fmt::format(
      "fn butterfly(v: ptr<function, array<vec2<f32>, {}>>, first: u32, radix: u32) {{\n  switch radix {{\n",
      max_registers);
  for (int radix : {2, 3, 4, 5, 7, 8}) {
    std::string args, writes;
    for (int r = 0; r < radix; ++r) {
      args += fmt::format("{}(*v)[first + {}u]", r ? ", " : "", r);
      writes += fmt::format("      (*v)[first + {0}u] = y[{0}];\n", r);
    }
    code += fmt::format("    case {0}u: {{\n      let y = dft{0}(array<vec2<f32>, {0}>({1}));\n{2}    }}\n",
                        radix, args, writes);
  }
  code += "    default: {}\n  }\n}\n";
  return code;
}

}  // namespace

std::string odd_radix_butterfly(int radix) {
  const int half = (radix - 1) / 2;
  std::string code = fmt::format("fn dft{0}(v: array<vec2<f32>, {0}>) -> array<vec2<f32>, {0}> {{\n", radix);
  std::string sum = "v[0]";
  for (int m = 1; m <= half; ++m) {
    code += fmt::format("  let s{0} = v[{0}] + v[{1}];\n  let d{0} = v[{0}] - v[{1}];\n", m, radix - m);
    sum += fmt::format(" + s{}", m);
  }
  code += fmt::format("  var y: array<vec2<f32>, {}>;\n  y[0] = {};\n", radix, sum);
  for (int k = 1; k <= half; ++k) {
    std::string a = "v[0]", b;
    for (int m = 1; m <= half; ++m) {
      const double angle = 2.0 * std::numbers::pi * static_cast<double>((m * k) % radix) / radix;
      a += fmt::format(" + {} * s{}", literal(std::cos(angle)), m);
      b += fmt::format("{}{} * d{}", m > 1 ? " + " : "", literal(std::sin(angle)), m);
    }
    code += fmt::format("  let a{0} = {1};\n  let b{0} = mul_neg_i({2});\n", k, a, b);
    code += fmt::format("  y[{0}] = a{0} + b{0};\n  y[{1}] = a{0} - b{0};\n", k, radix - k);
  }
  code += "  return y;\n}\n";
  return code;
}

UserKinds user_kinds(const FftPlan& plan) {
  UserKinds kinds;
  if (plan.description.domain == FftDomain::real_to_complex) {
    kinds.input = plan.real_packed ? 3 : 1;
    kinds.output = 1;
  } else if (plan.description.domain == FftDomain::complex_to_real) {
    kinds.input = plan.real_packed ? 4 : 2;
    kinds.output = plan.real_packed ? 3 : 2;
  }
  return kinds;
}

bool vec2_user_io(const FftPlan& plan) {
  const FftDescription& d = plan.description;
  // Complex values at even element indices; a real side may also be dense (axis stride 1), whose
  // sample pairs (2n, 2n+1) are then one vec2 (the packed half-length transforms read and write pairs).
  // A stride that is never stepped (one outer or one inner index) does not matter: a real signal's
  // contiguous layout has inner stride 1, and demanding it even kept every dense r2c / c2r on scalar
  // loads and stores.
  auto fits = [&](const FftLayout& l, bool real) {
    return l.offset % 2 == 0 && (l.outer_stride % 2 == 0 || d.outer_count == 1) &&
           (l.inner_stride % 2 == 0 || d.inner_count == 1) &&
           (l.axis_stride % 2 == 0 || (real && l.axis_stride == 1));
  };
  return d.dtype == DType::f32 && fits(d.input, d.domain == FftDomain::real_to_complex) &&
         fits(d.output, d.domain == FftDomain::complex_to_real) && !plan.passes.empty() && plan.passes.front().unrolled;
}

namespace {

// What a pass reads and writes, from its shape and its sequence source and sink.
struct PassRoles {
  bool convolve, columns_out, inner_columns, inner_rows;
  bool reads_sequence, writes_sequence;
  bool user_input, user_output, spectrum, stage;
  bool real_split;  // writes the caller's bins of a packed real forward FFT, splitting them
};

PassRoles roles_of(const FftPlan& plan, const StockhamPassPlan& pass) {
  PassRoles r;
  r.convolve = pass.shape == PassShape::rows_convolve;
  r.columns_out = pass.shape == PassShape::columns_out;
  r.inner_columns = pass.shape == PassShape::inner_columns;
  r.inner_rows = pass.shape == PassShape::inner_rows;
  r.reads_sequence = pass.shape == PassShape::whole || pass.shape == PassShape::columns;
  r.writes_sequence =
      pass.shape == PassShape::whole || pass.shape == PassShape::rows || r.columns_out || r.inner_rows;
  r.user_input = r.reads_sequence && pass.source != SequenceSource::spectrum_product;
  r.user_output = r.writes_sequence && pass.sink != SequenceSink::spectrum;
  r.spectrum = (r.reads_sequence && pass.source == SequenceSource::spectrum_product) ||
               (r.writes_sequence && pass.sink == SequenceSink::spectrum) || r.convolve || r.columns_out ||
               r.inner_columns || r.inner_rows;
  r.stage =
      pass.shape == PassShape::columns || pass.shape == PassShape::rows || r.convolve || r.inner_columns;
  // The pass that writes the caller's bins of a packed real forward FFT splits them (whole or rows).
  r.real_split = plan.real_packed && plan.description.domain == FftDomain::real_to_complex &&
                 (pass.shape == PassShape::whole || pass.shape == PassShape::rows);
  return r;
}

// Binding numbers in the template and the buffers the pass binds, in order.
void bind_buffers(const PassRoles& r, bool windowed, TemplateValues& values, GeneratedPass& generated) {
  auto bind = [&](PassBinding binding, const char* name, bool used) {
    values[name] = std::to_string(generated.bindings.size());
    if (used) generated.bindings.push_back(binding);
  };
  bind(PassBinding::user_input, "INPUT_BINDING", r.user_input);
  bind(PassBinding::window, "WINDOW_BINDING", r.user_input && windowed);
  bind(PassBinding::spectrum, "SPECTRUM_BINDING", r.spectrum);
  bind(PassBinding::stage_scratch, "STAGE_BINDING", r.stage);
  bind(PassBinding::user_output, "OUTPUT_BINDING", r.user_output);
  bind(PassBinding::tables, "TABLES_BINDING", true);
  values["PARAMS_BINDING"] = std::to_string(generated.bindings.size());
}

// The template's switches: where the sequence comes from and goes, the pass shape, the exchange.
void set_flags(const FftPlan& plan, const StockhamPassPlan& pass, const PassRoles& r, bool vec2_io,
               TemplateValues& values) {
  const FftDescription& d = plan.description;
  auto flag = [&](const char* name, bool on) { values[name] = std::string(1, on ? '1' : '0'); };
  flag("USER_INPUT", r.user_input);
  flag("WINDOWED", r.user_input && d.windowed);
  flag("USER_OUTPUT", r.user_output);
  flag("INPUT_F16", d.dtype == DType::f16);
  flag("OUTPUT_F16", d.dtype == DType::f16);
  flag("IO_VEC2", vec2_io);
  flag("SOURCE_USER", r.reads_sequence && pass.source == SequenceSource::user_input);
  flag("SOURCE_CHIRP", r.reads_sequence && pass.source == SequenceSource::chirp_input);
  flag("SOURCE_PRODUCT", r.reads_sequence && pass.source == SequenceSource::spectrum_product);
  flag("SINK_USER", r.writes_sequence && pass.sink == SequenceSink::user_output);
  flag("SINK_SPECTRUM", r.writes_sequence && pass.sink == SequenceSink::spectrum);
  flag("SINK_BLUESTEIN", r.writes_sequence && pass.sink == SequenceSink::bluestein_output);
  flag("REAL_SPLIT", r.real_split);
  values["REAL_SPLIT_WGSL"] = r.real_split ? "true" : "false";
  flag("SHAPE_WHOLE", pass.shape == PassShape::whole);
  flag("SHAPE_COLUMNS", pass.shape == PassShape::columns);
  flag("SHAPE_ROWS", pass.shape == PassShape::rows);
  flag("PAIRED_ROWS", pass.paired_rows);
  flag("SHAPE_ROWS_CONVOLVE", r.convolve);
  flag("WHOLE_CONVOLVE", pass.convolve_in_workgroup);
  flag("SHAPE_COLUMNS_OUT", r.columns_out);
  flag("SHAPE_INNER_COLUMNS", r.inner_columns);
  flag("SHAPE_INNER_ROWS", r.inner_rows);
  flag("FOUR_STEP_TWIDDLE", pass.shape == PassShape::columns || r.convolve || r.inner_columns);
  values["SPLIT_TWIDDLE_LOW"] = std::to_string(kSplitTwiddleLow);
  values["EXCHANGE_LENGTH"] = std::to_string(pass.exchange_length);
  values["EXCHANGE_TYPE"] = pass.split_exchange ? "f32" : "vec2<f32>";
  values["WORKGROUP_SIZE"] = std::to_string(pass.workgroup_size);
  values["MAX_REGISTERS"] = std::to_string(pass.max_registers);
  flag("UNROLLED", pass.unrolled);
}

// The butterflies and, for an unrolled pass, its whole `fn main`.
void set_code(const FftPlan& plan, const StockhamPassPlan& pass, bool real_split, TemplateValues& values) {
  const std::string odd = odd_radix_butterfly(3) + odd_radix_butterfly(5) + odd_radix_butterfly(7);
  // Unrolled passes inline load/store at every register: constant kinds let the shader compiler drop
  // the other kinds' code before it multiplies (lavapipe compile time).
  const UserKinds kinds = user_kinds(plan);
  values["INPUT_KIND"] = pass.unrolled ? fmt::format("{}u", kinds.input) : "params.input_kind";
  values["OUTPUT_KIND"] = pass.unrolled ? fmt::format("{}u", kinds.output) : "params.output_kind";
  if (pass.unrolled) {
    values["BUTTERFLIES"] = odd;
    values["UNROLLED_MAIN"] = unrolled_stockham_main(plan, pass, real_split);
  } else {
    values["BUTTERFLIES"] = odd + butterfly_dispatch(pass.max_registers);
  }
}

}  // namespace

// Generic passes: only what changes the code enters the text; lengths, radices and strides are
// uniforms. Unrolled passes (stockham_unrolled.h) also bake in the length, radices and thread shape.
GeneratedPass generate_stockham_pass(const FftPlan& plan, size_t pass_index, bool vec2_io) {
  const StockhamPassPlan& pass = plan.passes.at(pass_index);
  const PassRoles roles = roles_of(plan, pass);
  GeneratedPass generated;
  TemplateValues values;
  bind_buffers(roles, plan.description.windowed, values, generated);
  set_flags(plan, pass, roles, vec2_io, values);
  set_code(plan, pass, roles.real_split, values);
  generated.wgsl = render_shader("fft/stockham_pass.wgsl", values);
  return generated;
}

}  // namespace onda::kernels::fft
