// ONNX Einsum's equation ("bij,bjk->bik", "...ii->...i", "i,i" in implicit form), parsed against
// the ranks of the inputs into one label per dim. Host-only: the op lowers the parsed form onto
// transposes, reductions and batched MatMuls (ops/einsum_op.cpp); shape inference
// uses it for the output shape.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace onda {

struct EinsumEquation {
  // One label per dim of each input, and of the output. Letters keep their own character; the dims
  // an ellipsis stands for get the labels '0', '1', ... (right-aligned across the inputs, as numpy
  // broadcasts them).
  std::vector<std::string> inputs;
  std::string output;
};

// Throws std::invalid_argument saying what is wrong: a character that is not a letter, ',', '->'
// or '...', a term count or term length that does not match `ranks`, an output label that no input
// has or that repeats, more than one ellipsis in a term.
EinsumEquation parse_einsum(std::string_view equation, const std::vector<int64_t>& ranks);

}  // namespace onda
