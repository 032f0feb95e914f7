// ONNX LSTM, GRU, RNN onto their kernel families (being written: registers nothing yet).
#include "ops/op_registry.h"

namespace onda::ops {

void register_rnn_ops(std::vector<OpEntry>&) {}

}  // namespace onda::ops
