// `fn main` of an unrolled Stockham pass (stockham_unrolled.h): the pass's length, radices and thread
// shape are constants, every stage is unrolled, each thread's points live in constant-indexed
// registers v, and workgroup memory (`exchange`, declared by stockham_pass.wgsl) carries the points
// between stages. MainWriter emits the text piece by piece; its methods follow the shader's order:
// the header (thread roles, the group loop), the stages (sweep), then the real split of an r2c pass.
#include <fmt/format.h>

#include <algorithm>
#include <string>

#include "kernels/fft/stockham_unrolled.h"

namespace onda::kernels::fft {
namespace {

int64_t ceil_div(int64_t a, int64_t b) {
  return (a + b - 1) / b;
}

std::string u(int64_t value) {
  return fmt::format("{}u", value);
}

class MainWriter {
 public:
  MainWriter(const FftPlan& plan, const StockhamPassPlan& pass, bool real_split)
      : plan_(plan),
        pass_(pass),
        real_split_(real_split),
        length_(pass.length),
        threads_(pass.threads_per_transform),
        per_group_(pass.transforms_per_workgroup),
        iterations_(pass.group_iterations),
        prefetch_(iterations_ > 1 && !pass.radices.empty()),
        split_(pass.split_exchange) {}

  std::string write() {
    header();
    if (pass_.radices.empty()) {  // length 1: a copy
      code_ += real_split_ ? "  if (in_range) {\n    exchange[base] = load(transform, 0u);\n  }\n"
                           : "  if (in_range) {\n    store(transform, 0u, load(transform, 0u));\n  }\n";
    } else {
      stages();
    }
    if (real_split_ && pass_.paired_rows) {
      paired_rows_real_split();
    } else if (real_split_ && !split_ && !pair_last_) {
      exchange_real_split();
    }
    if (iterations_ > 1) code_ += "  workgroupBarrier();\n  }\n";  // the group loop
    code_ += "}\n";
    return code_;
  }

 private:
  // Where a stage's inputs come from; convolve_registers: already in v (split exchange), times the
  // kernel spectrum.
  enum class From { global, prefetched, exchange, convolved_exchange, convolve_registers };

  // exchange_index, the entry point, each invocation's slot (transform of the workgroup) and thread t
  // within it, and the group loop's head with `transform` / `in_range` bound.
  void header() {
    code_ = fmt::format("fn exchange_index(p: u32) -> u32 {{\n  return {};\n}}\n\n",
                        pass_.padded_exchange     ? "p + (p >> 3u)"
                        : pass_.swizzled_exchange ? "p ^ ((p >> 3u) & 31u)"
                                                  : "p");
    code_ += fmt::format(
        "@compute @workgroup_size({})\n"
        "fn main(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wg: vec3<u32>,\n"
        "        @builtin(num_workgroups) groups: vec3<u32>) {{\n"
        "  _ = &tables;\n",
        pass_.workgroup_size);
    if (lanes_walk_transforms(pass_)) {
      code_ += fmt::format("  let slot = lid % {0};\n  let t = lid / {0};\n", u(per_group_));
    } else {
      code_ += fmt::format("  let slot = lid / {0};\n  let t = lid % {0};\n", u(threads_));
    }
    const int64_t stride = unrolled_exchange_stride(pass_);
    code_ += fmt::format("  let base = slot * {};\n", u(stride));
    if (pass_.paired_rows) {
      code_ += fmt::format(
          "  let upper = slot >= {0};\n"
          "  let partner_base = ((slot + {0}) % {2}) * {1};\n",
          u(per_group_ / 2), u(stride), u(per_group_));
    }
    const int64_t first_registers =
        pass_.radices.empty() ? 0 : butterfly_rounds(pass_, pass_.radices[0]) * pass_.radices[0];
    code_ += "  let first_group = wg.y * groups.x + wg.x;\n";
    if (iterations_ > 1) {
      // Each workgroup runs `iterations` groups of transforms, a dispatch's worth apart; with prefetch
      // the next group's first-stage inputs load into registers while this group's stages run.
      code_ += "  let group_stride = groups.x * groups.y;\n";
      if (prefetch_) {
        code_ += fmt::format("  var p: array<vec2<f32>, {}>;\n  {{\n", first_registers);
        bind_transform("first_group", "");
        code_ += "  PREFETCH\n  }\n";
      }
      code_ += fmt::format("  for (var it = 0u; it < {}; it++) {{\n", u(iterations_));
      bind_transform("first_group + it * group_stride", "");
    } else {
      bind_transform("first_group", "");
    }
  }

  // `transform` and `in_range` of the workgroup's group of transforms `group`.
  void bind_transform(const std::string& group, const std::string& also) {
    if (pass_.paired_rows) {
      code_ += fmt::format(
          "  let pair = ({1}) * {0} + slot % {0};\n"
          "  let transform = paired_row_transform(pair, upper);\n"
          "  let in_range = 2u * pair < params.transform_count{2};\n",
          u(per_group_ / 2), group, also);
    } else {
      code_ += fmt::format(
          "  let transform = ({}) * {} + slot;\n"
          "  let in_range = transform < params.transform_count{};\n",
          group, u(per_group_), also);
    }
  }

  // The stages of the pass (and of Bluestein's second FFT, or the pair-mode real split).
  void stages() {
    // The real split from registers (pair mode): the last stage's butterflies in pairs j, S - j.
    pair_last_ = real_split_ && !pass_.paired_rows && !prefetch_ && pass_.pair_real_split;
    last_stage_radix_ = pass_.radices.back();
    last_stage_span_ = length_ / last_stage_radix_;
    // Pairs p = 0..S/2. For even S, p = S/2 is self-paired like p = 0, and thread 0 takes it as its
    // j2 (see for_each_pair): S/2 pairs, so that S = 2 * threads needs one round, not a second one for
    // a single pair with every register doubled (r2c 4096 and 16384: 257 / 1025 pairs otherwise).
    pair_count_ = (last_stage_span_ + 1) / 2;
    pair_rounds_ = ceil_div(pair_count_, threads_);
    const int64_t registers =
        pair_last_ ? std::max<int64_t>(pass_.max_registers, 2 * last_stage_radix_ * pair_rounds_)
                   : pass_.max_registers;
    code_ += fmt::format("  var v: array<vec2<f32>, {}>;\n", registers);
    if (prefetch_) {
      const size_t at = code_.find("  PREFETCH\n");
      code_.replace(at, 11, prefetch_text());
    }
    const From first_source = prefetch_ ? From::prefetched : From::global;
    if (pass_.shape == PassShape::rows_convolve || pass_.convolve_in_workgroup) {
      // Bluestein's convolution in one pass: the row's forward FFT, the pointwise product with the
      // kernel spectrum, and the first FFT of the inverse (see PassShape::rows_convolve).
      sweep(first_source, true);
      if (split_) {
        split_boundary(last_radix_, last_span_,
                       [&](const char* c) { load_stage(pass_.radices[0], From::exchange, "v", c); });
        sweep(From::convolve_registers, false);
      } else {
        code_ += "  workgroupBarrier();\n";
        sweep(From::convolved_exchange, false);
      }
    } else {
      sweep(first_source, real_split_, pair_last_);
    }
    if (real_split_ && split_ && !pair_last_) split_exchange_real_split();
  }

  // Each generated statement block runs for butterfly j = t + b * threads of a stage; only the last
  // round can be partial.
  template <class Body>
  void for_each_butterfly(int radix, Body&& body) {
    const int64_t butterflies = length_ / radix;
    const int64_t count = butterfly_rounds(pass_, radix);
    for (int64_t b = 0; b < count; ++b) {
      const bool partial = (b + 1) * threads_ > butterflies;
      code_ += fmt::format("  {{\n    let j = t + {};\n", u(b * threads_));
      if (partial) code_ += fmt::format("    if (j < {}) {{\n", u(butterflies));
      body(b, butterflies);
      if (partial) code_ += "    }\n";
      code_ += "  }\n";
    }
  }

  // A stage's inputs into `target`; `component` is "" for complex values, or ".x" / ".y" for one half
  // of a split exchange.
  void load_stage(int radix, From from, const char* target = "v", const char* component = "") {
    for_each_butterfly(radix, [&](int64_t b, int64_t butterflies) {
      if (from == From::global) code_ += "    if (in_range) {\n";
      for (int r = 0; r < radix; ++r) {
        const std::string e = fmt::format("j + {}", u(r * butterflies));
        const std::string shared = fmt::format("exchange[base + exchange_index({})]", e);
        std::string value = shared;
        if (from == From::global) value = fmt::format("load(transform, {})", e);
        if (from == From::convolved_exchange) value = fmt::format("convolve(transform, {}, {})", e, shared);
        if (from == From::convolve_registers)
          value = fmt::format("convolve(transform, {}, v[{}])", e, b * radix + r);
        if (from == From::prefetched) value = fmt::format("p[{}]", b * radix + r);
        code_ += fmt::format("      {}[{}]{} = {};\n", target, b * radix + r, component, value);
      }
      if (from == From::global) code_ += "    }\n";
    });
  }

  // Pair mode's last stage: round b of thread t takes pair p = t + b * threads (p <= S / 2 for odd S;
  // p < S / 2 for even S, where p = 0 takes the self-paired S / 2 as its j2), that is butterflies
  // j1 = p and j2 = (S - p) mod S, whose outputs are each other's Hermitian partners
  // (Z_(H - k) of k = j1 + r S is output R-1-r of j2; of k = r S, output (R - r) mod R of j = 0), in
  // registers b 2R + r (j1) and b 2R + R + r (j2).
  template <class Body>
  void for_each_pair(Body&& body) {
    for (int64_t b = 0; b < pair_rounds_; ++b) {
      const bool partial = (b + 1) * threads_ > pair_count_;
      code_ += fmt::format("  {{\n    let p = t + {};\n", u(b * threads_));
      if (partial) code_ += fmt::format("    if (p < {}) {{\n", u(pair_count_));
      if (last_stage_span_ % 2 == 0) {
        code_ += fmt::format("    let j1 = p;\n    let j2 = select({0} - p, {1}, p == 0u);\n",
                             u(last_stage_span_), u(last_stage_span_ / 2));
      } else {
        code_ += fmt::format("    let j1 = p;\n    let j2 = ({0} - p) % {0};\n", u(last_stage_span_));
      }
      body(b);
      if (partial) code_ += "    }\n";
      code_ += "  }\n";
    }
  }

  void load_pairs(From from, const char* component = "") {
    const int radix = last_stage_radix_;
    for_each_pair([&](int64_t b) {
      if (from == From::global) code_ += "    if (in_range) {\n";
      for (int half = 0; half < 2; ++half) {
        for (int r = 0; r < radix; ++r) {
          const std::string e = fmt::format("j{} + {}", half + 1, u(r * last_stage_span_));
          const std::string value = from == From::global
                                        ? fmt::format("load(transform, {})", e)
                                        : fmt::format("exchange[base + exchange_index({})]", e);
          code_ += fmt::format("      v[{}]{} = {};\n", b * 2 * radix + half * radix + r, component, value);
        }
      }
      if (from == From::global) code_ += "    }\n";
    });
  }

  // Output index o of butterfly j of a stage (radix, span): its outputs go to o + r * span.
  static std::string output_index(int radix, int64_t span) {
    if (span > 1)
      return fmt::format("    let k = j % {};\n    let o = (j / {}) * {} + k;\n", u(span), u(span),
                         u(span * radix));
    return fmt::format("    let o = j * {};\n", u(radix));
  }

  // Split exchange: a stage's outputs, kept in v, go through workgroup memory one half at a time
  // (`next_loads(component)` reads the next inputs' half into v, whose other half still holds the
  // outputs until its own turn): write .x, barrier, read .x, barrier, write .y, barrier, read .y, barrier.
  template <class Loads>
  void split_boundary(int radix, int64_t span, Loads&& next_loads) {
    for (const char* component : {".x", ".y"}) {
      for_each_butterfly(radix, [&](int64_t b, int64_t) {
        code_ += output_index(radix, span);
        for (int r = 0; r < radix; ++r) {
          code_ += fmt::format("    exchange[base + exchange_index(o + {})] = v[{}]{};\n", u(r * span),
                               b * radix + r, component);
        }
      });
      code_ += "  workgroupBarrier();\n";
      next_loads(component);
      code_ += "  workgroupBarrier();\n";
    }
  }

  // The first stage's loads of a group into the prefetch registers p.
  std::string prefetch_text() {
    std::string saved;
    std::swap(code_, saved);
    load_stage(pass_.radices[0], From::global, "p");
    std::swap(code_, saved);
    return saved;
  }

  // Twiddles, the radix-R DFT and the outputs' index o of butterfly j (a WGSL `j` in scope) whose
  // inputs are registers first..first+R-1; the results in `y`.
  void butterfly(int radix, int64_t span, int64_t step, int64_t first) {
    if (span > 1) {
      code_ += fmt::format("    let k = j % {};\n", u(span));
      // w = W^k from the table, w^r by products (w^2 = w w, w^3 = w^2 w, w^4 = w^2 w^2, ...): one table
      // load per butterfly instead of R - 1 (table twiddles ran slower: docs/benchmark-log.md).
      code_ += fmt::format("    let w1 = tables[k * {}];\n", u(step));
      for (int r = 2; r < radix; ++r) {
        code_ += fmt::format("    let w{} = cmul(w{}, w{});\n", r, r / 2, r - r / 2);
      }
      for (int r = 1; r < radix; ++r)
        code_ += fmt::format("    v[{0}] = cmul(v[{0}], w{1});\n", first + r, r);
      code_ += fmt::format("    let o = (j / {}) * {} + k;\n", u(span), u(span * radix));
    } else {
      code_ += fmt::format("    let o = j * {};\n", u(radix));
    }
    std::string args;
    for (int r = 0; r < radix; ++r) args += fmt::format("{}v[{}]", r ? ", " : "", first + r);
    code_ += fmt::format("    let y = dft{0}(array<vec2<f32>, {0}>({1}));\n", radix, args);
  }

  // Pair mode's last stage (span S, so j < S and o = j): both butterflies of each pair, then every
  // bin X_k = split(Z_k, conj Z_(H-k)) from registers, bin H from Z_0 (see for_each_pair).
  void pair_stage(int64_t span, int64_t step) {
    const int radix = last_stage_radix_;
    for_each_pair([&](int64_t b) {
      const int64_t f1 = b * 2 * radix, f2 = f1 + radix;
      for (int half = 0; half < 2; ++half) {
        code_ += fmt::format("    {{\n    let j = j{};\n", half + 1);
        butterfly(radix, span, step, half ? f2 : f1);
        for (int r = 0; r < radix; ++r) code_ += fmt::format("    v[{}] = y[{}];\n", (half ? f2 : f1) + r, r);
        code_ += "    }\n";
      }
      code_ += "    if (in_range) {\n      if (p == 0u) {\n";
      for (int r = 0; r < radix; ++r) {
        code_ += fmt::format("        write_split_bin(transform, {}, v[{}], conj(v[{}]));\n", u(r * span),
                             f1 + r, f1 + (radix - r) % radix);
      }
      code_ +=
          fmt::format("        write_split_bin(transform, {}, v[{}], conj(v[{}]));\n", u(length_), f1, f1);
      if (span % 2 == 0) {
        // j2 = S/2, self-paired: Z_(H-k) of k = S/2 + r S is its output R-1-r.
        for (int r = 0; r < radix; ++r) {
          code_ += fmt::format("        write_split_bin(transform, {}, v[{}], conj(v[{}]));\n",
                               u(span / 2 + r * span), f2 + r, f2 + radix - 1 - r);
        }
      }
      code_ += "      } else {\n";
      for (int r = 0; r < radix; ++r) {
        code_ += fmt::format("        write_split_bin(transform, j1 + {}, v[{}], conj(v[{}]));\n",
                             u(r * span), f1 + r, f2 + radix - 1 - r);
      }
      code_ += "        if (j2 != j1) {\n";
      for (int r = 0; r < radix; ++r) {
        code_ += fmt::format("          write_split_bin(transform, j2 + {}, v[{}], conj(v[{}]));\n",
                             u(r * span), f2 + r, f1 + radix - 1 - r);
      }
      code_ += "        }\n      }\n    }\n";
    });
  }

  // One FFT of the pass length: first inputs from `from`, last outputs to store() or, with to_exchange,
  // to workgroup memory (split: left in v, for split_boundary with last_radix_ / last_span_); `pairs`:
  // the last stage in pair mode, writing the r2c bins.
  void sweep(From from, bool to_exchange, bool pairs = false) {
    int64_t span = 1;
    if (pairs && pass_.radices.size() == 1) {
      load_pairs(from);
    } else {
      load_stage(pass_.radices[0], from);
    }
    if (from == From::prefetched) {
      code_ += "  {\n";
      bind_transform("first_group + (it + 1u) * group_stride",
                     fmt::format(" && it + 1u < {}", u(iterations_)));
      code_ += prefetch_text() + "  }\n";
    }
    if (from == From::exchange || from == From::convolved_exchange) code_ += "  workgroupBarrier();\n";
    for (size_t s = 0; s < pass_.radices.size(); ++s) {
      const int radix = pass_.radices[s];
      const bool last = s + 1 == pass_.radices.size();
      const int64_t step = plan_.fft_length / (span * radix);  // W_(Ns*R)^m = W_F^(m * F/(Ns*R))
      code_ += fmt::format("  // stage {}: radix {}, span {}\n", s, radix, span);
      if (last && pairs) {
        pair_stage(span, step);
        break;
      }
      for_each_butterfly(radix, [&](int64_t b, int64_t) {
        const int64_t first = b * radix;
        butterfly(radix, span, step, first);
        if (last && !to_exchange) {
          code_ += "    if (in_range) {\n";
          for (int r = 0; r < radix; ++r)
            code_ += fmt::format("      store(transform, o + {}, y[{}]);\n", u(r * span), r);
          code_ += "    }\n";
        } else if (split_) {
          for (int r = 0; r < radix; ++r) code_ += fmt::format("    v[{}] = y[{}];\n", first + r, r);
        } else {
          for (int r = 0; r < radix; ++r)
            code_ += fmt::format("    exchange[base + exchange_index(o + {})] = y[{}];\n", u(r * span), r);
        }
      });
      const bool next_pairs = pairs && s + 2 == pass_.radices.size();
      if (last) {
        last_radix_ = radix;
        last_span_ = span;
      } else if (split_) {
        const int next = pass_.radices[s + 1];
        split_boundary(radix, span, [&](const char* c) {
          if (next_pairs) {
            load_pairs(From::exchange, c);
          } else {
            load_stage(next, From::exchange, "v", c);
          }
        });
      } else {
        code_ += "  workgroupBarrier();\n";
        if (next_pairs) {
          load_pairs(From::exchange);
        } else {
          load_stage(pass_.radices[s + 1], From::exchange);
        }
        code_ += "  workgroupBarrier();\n";
      }
      span *= radix;
    }
  }

  // The r2c split of a split-exchange pass, X_k = E_k + W_N^k O_k, in Hermitian pairs (k, H - k) for
  // k = 0..H/2: Z_k and Z_(H-k), gathered into registers half by half, serve both X_k and X_(H-k), so
  // each Z is read once. k = 0 also gives X_H (Z_H = Z_0); for even H the self-paired k = H/2 goes to
  // thread 0 as well (an extra register), so that H/2 pairs fill whole rounds of threads.
  void split_exchange_real_split() {
    const bool even = length_ % 2 == 0;
    const int64_t pairs = (length_ + 1) / 2;
    const int64_t count = ceil_div(pairs, threads_);
    code_ += fmt::format("  var zk: array<vec2<f32>, {0}>;\n  var zc: array<vec2<f32>, {0}>;\n", count);
    if (even) code_ += "  var zm: vec2<f32>;\n";
    auto for_each_pair_of_bins = [&](auto&& body) {
      for (int64_t b = 0; b < count; ++b) {
        code_ += fmt::format("  {{\n    let k = t + {};\n    if (k < {}) {{\n", u(b * threads_), u(pairs));
        body(b);
        code_ += "    }\n  }\n";
      }
    };
    split_boundary(last_radix_, last_span_, [&](const char* c) {
      for_each_pair_of_bins([&](int64_t b) {
        code_ += fmt::format(
            "      zk[{0}]{1} = exchange[base + exchange_index(k)];\n"
            "      zc[{0}]{1} = exchange[base + exchange_index(({2} - k) % {2})];\n",
            b, c, u(length_));
      });
      if (even)
        code_ += fmt::format("  if (t == 0u) {{ zm{} = exchange[base + exchange_index({})]; }}\n", c,
                             u(length_ / 2));
    });
    code_ += "  if (in_range) {\n";
    for_each_pair_of_bins([&](int64_t b) {
      code_ += fmt::format(
          "      write_split_bin(transform, k, zk[{0}], conj(zc[{0}]));\n"
          "      write_split_bin(transform, {1} - k, zc[{0}], conj(zk[{0}]));\n",
          b, u(length_));
    });
    if (even) {
      code_ += fmt::format("    if (t == 0u) {{ write_split_bin(transform, {}, zm, conj(zm)); }}\n",
                           u(length_ / 2));
    }
    code_ += "  }\n";
  }

  // Row k1 gives bins k = k1 + N1*e; Z_(H-k) is element N2-1-e of the partner row N1 - k1 (element
  // (N2 - e) mod N2 of row 0 for k1 = 0); row 0 also gives bin H. A self-paired row in the upper half
  // is left to the lower one.
  void paired_rows_real_split() {
    const int64_t n1 = pass_.other_factor;
    code_ += fmt::format(
        "  workgroupBarrier();\n"
        "  let row = transform % {0};\n"
        "  let batch = transform / {0};\n"
        "  if (in_range && !(upper && row == ({0} - row) % {0})) {{\n",
        u(n1));
    for (int64_t b = 0; b * threads_ < length_; ++b) {
      const bool partial = (b + 1) * threads_ > length_;
      code_ += fmt::format("    {{\n      let e = t + {};\n", u(b * threads_));
      if (partial) code_ += fmt::format("      if (e < {}) {{\n", u(length_));
      code_ += fmt::format(
          "      let pe = select({0} - e, ({1} - e) % {1}, row == 0u);\n"
          "      write_split_bin(batch, row + {2} * e, exchange[base + exchange_index(e)],\n"
          "                      conj(exchange[partner_base + exchange_index(pe)]));\n",
          u(length_ - 1), u(length_), u(n1));
      if (partial) code_ += "      }\n";
      code_ += "    }\n";
    }
    code_ += fmt::format(
        "    if (row == 0u && t == 0u) {{\n"
        "      let z0 = exchange[base + exchange_index(0u)];\n"
        "      write_split_bin(batch, {}, z0, conj(z0));\n"
        "    }}\n"
        "  }}\n",
        u(plan_.fft_length));
  }

  // As in the generic pass: X_k = E_k + W_N^k O_k from Z_k and conj Z_(H-k), k = 0..H; constant trips.
  void exchange_real_split() {
    code_ += "  workgroupBarrier();\n  if (in_range) {\n";
    for (int64_t b = 0; b * threads_ <= length_; ++b) {
      const bool partial = (b + 1) * threads_ > length_ + 1;
      code_ += fmt::format("    {{\n      let k = t + {};\n", u(b * threads_));
      if (partial) code_ += fmt::format("      if (k <= {}) {{\n", u(length_));
      code_ += fmt::format(
          "      write_split_bin(transform, k, exchange[base + exchange_index(k % {0})],\n"
          "                      conj(exchange[base + exchange_index(({0} - k) % {0})]));\n",
          u(length_));
      if (partial) code_ += "      }\n";
      code_ += "    }\n";
    }
    code_ += "  }\n";
  }

  const FftPlan& plan_;
  const StockhamPassPlan& pass_;
  const bool real_split_;
  const int64_t length_, threads_, per_group_;
  const int iterations_;
  const bool prefetch_, split_;
  // Pair mode (set by stages()): the last stage's radix R and span S, its pairs and rounds of them.
  bool pair_last_ = false;
  int last_stage_radix_ = 1;
  int64_t last_stage_span_ = 1, pair_count_ = 0, pair_rounds_ = 0;
  // The last stage a sweep ran (its outputs' radix and span), for the boundary after it.
  int last_radix_ = 1;
  int64_t last_span_ = 1;
  std::string code_;
};

}  // namespace

std::string unrolled_stockham_main(const FftPlan& plan, const StockhamPassPlan& pass, bool real_split) {
  return MainWriter(plan, pass, real_split).write();
}

}  // namespace onda::kernels::fft
