// libFuzzer target for the model loader: bytes -> parse_onnx_model -> simplify_graph (shape
// inference and constant folding) for a fixed input binding -> liveness plan (load_and_plan.h).
//
// The loader's contract (src/onnx/onnx_loader.h): any input either loads or throws onda::ModelError
// naming the problem. So ModelError is caught here and everything else is a finding: another
// exception type (std::terminate aborts), a crash, an AddressSanitizer or UndefinedBehaviorSanitizer
// report, a leak, a timeout (-timeout) or a runaway allocation (-malloc_limit_mb).
//
// Run by scripts/fuzz.sh on the seed corpus written by make_seed_models; each finding, once fixed,
// goes to fuzz/regressions/ (replayed by the fuzzer's seeds and by tests/onnx/test_fuzz_regressions.cpp).
#include <cstddef>
#include <cstdint>

#include "graph/model_error.h"
#include "load_and_plan.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    onda::fuzz::load_and_plan(std::string_view(reinterpret_cast<const char*>(data), size));
  } catch (const onda::ModelError&) {
    // The documented outcome for a malformed model.
  }
  return 0;
}
