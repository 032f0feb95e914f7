// Environment overrides of the recurrent kernels' automatic choices: a bench_rnn variant tried on a
// whole model (`onda run`) without a rebuild. Tilings are comma-separated unsigned numbers; a
// malformed value throws std::invalid_argument naming the variable and the expected form.
#pragma once
#include <optional>

#include "kernels/rnn/rnn_kernel.h"
#include "kernels/rnn/rnn_step_tiling.h"

namespace onda::kernels::rnn {

// ONDA_RNN_COOP="JT,BM,KQ,RC" forces the cooperative kernel with that tiling; "0" turns its automatic
// choice off (*disabled).
std::optional<CooperativeTiling> cooperative_tiling_from_env(bool* disabled);

// ONDA_RNN_RESIDENT="BM,KQ" forces the resident kernel with that tiling; "0" turns its automatic
// choice off.
std::optional<ResidentTiling> resident_tiling_from_env(bool* disabled);

// ONDA_RNN_ROWS="BM,TM,UV,KS,KB" forces the row-sequence kernel with that tiling; "0" turns its
// automatic choice off.
std::optional<RowSequenceTiling> row_tiling_from_env(bool* disabled);

// `requested` unless automatic; then ONDA_RNN_STEP_KERNEL=dot|tiled|gemm|vec4 where set.
StepKernel resolve_step_kernel(StepKernel requested);

// ONDA_RNN_TILED="BM,TM,BU,TU,KT,KS" forces the tiled step's tiling; unset: choose_tiled_step_tiling.
std::optional<TiledStepTiling> tiled_tiling_from_env();

// ONDA_RNN_VEC4="WGX,WGY,TM,NV,BK,KS[,PREFETCH[,PERSISTENT]]" forces the vec4 step's tiling (PREFETCH 0:
// none, 1: register prefetch, the default, 2: prefetch into double-buffered tiles; PERSISTENT 1: every
// step in one dispatch); unset: choose_vec4_step_tiling.
std::optional<Vec4StepTiling> vec4_tiling_from_env();

}  // namespace onda::kernels::rnn
