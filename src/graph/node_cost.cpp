#include "graph/node_cost.h"

#include <cmath>
#include <map>
#include <string>
#include <string_view>

#include "graph/einsum_equation.h"
#include "graph/fold_attention_transposes.h"
#include "graph/fuse_activations.h"
#include "graph/fuse_attention.h"
#include "graph/fuse_elementwise.h"
#include "graph/fuse_epilogue.h"
#include "graph/fuse_rotate_half.h"
#include "graph/split_gemm_columns.h"
#include "tensor/dtype.h"

namespace onda {
namespace {

using Types = std::vector<std::optional<TensorType>>;

double numel(const std::optional<TensorType>& t) {
  return t ? static_cast<double>(shape_numel(t->shape)) : 0.0;
}
double bytes_of(const std::optional<TensorType>& t) {
  return t ? numel(t) * static_cast<double>(device_element_size(t->dtype)) : 0.0;
}
double total_bytes(const Types& types) {
  double sum = 0;
  for (const auto& t : types) sum += bytes_of(t);
  return sum;
}
const std::optional<TensorType>& at(const Types& types, size_t i) {
  static const std::optional<TensorType> none;
  return i < types.size() ? types[i] : none;
}
int64_t dim(const std::optional<TensorType>& t, int64_t axis) {
  if (!t || t->shape.empty()) return 1;
  const auto rank = static_cast<int64_t>(t->shape.size());
  if (axis < 0) axis += rank;
  return axis >= 0 && axis < rank ? t->shape[static_cast<size_t>(axis)] : 1;
}
double kernel_volume(const std::optional<TensorType>& weight) {  // W [M, C, k...]: prod k
  double v = 1;
  if (weight)
    for (size_t d = 2; d < weight->shape.size(); ++d) v *= static_cast<double>(weight->shape[d]);
  return v;
}
double fft_flops(double n) {
  return n > 1 ? 5.0 * n * std::log2(n) : 0.0;
}

// Whether `op` is one of the space-separated names in `names` (which starts and ends with a space).
bool listed(std::string_view names, std::string_view op) {
  if (op.empty() || op.find(' ') != std::string_view::npos) return false;
  for (size_t at = names.find(op); at != std::string_view::npos; at = names.find(op, at + 1)) {
    if (names[at - 1] == ' ' && at + op.size() < names.size() && names[at + op.size()] == ' ') return true;
  }
  return false;
}

// FLOPs per output element of elementwise ops: arithmetic, comparisons and selects count 1,
// functions the GPU evaluates by a polynomial or special-function unit count 4. (Lower-case names:
// the activations fused into a Conv, graph/fuse_activations.h.)
double elementwise_flops_per_element(std::string_view op) {
  constexpr std::string_view kTranscendental =
      " Exp Log Tanh Sigmoid Erf Gelu GeluTanh Sin Cos Atan Pow Sqrt Softplus Softsign Elu Selu "
      "Mish HardSwish HardSigmoid Reciprocal sigmoid tanh Tan Asin Acos Sinh Cosh Asinh Acosh Atanh "
      "Celu ";
  return listed(kTranscendental, op) ? 4.0 : 1.0;
}

// Per output element of a fused group's body: each of its ops (Expand is the kernel's indexing).
double fused_flops_per_element(const Graph& body) {
  double per_element = 0;
  for (const Node& member : body.nodes)
    if (member.op_type != "Expand")
      per_element += elementwise_flops_per_element(member.op_type) * (member.op_type == "Clip" ? 2.0 : 1.0);
  return per_element;
}

bool is_elementwise(std::string_view op) {
  constexpr std::string_view kElementwise =
      " Abs Add And Atan Ceil Clip Cos Div Elu Equal Erf Exp Floor Gelu GeluTanh Greater "
      "GreaterOrEqual HardSigmoid HardSwish IsInf IsNaN LeakyRelu Less LessOrEqual Log Max Mean "
      "Min Mod ModTruncated Mul Neg Not Or PRelu Pow Reciprocal Relu Round Selu Sigmoid Sign Sin "
      "Softplus Softsign Sqrt Sub Sum Tanh ThresholdedRelu Where Xor Mish Tan Asin Acos Sinh Cosh "
      "Asinh Acosh Atanh Celu Shrink BitwiseAnd BitwiseOr BitwiseXor BitwiseNot BitShift ";
  return listed(kElementwise, op);
}

// Data movement only (and the sequence ops, which move tensors by reference).
bool is_layout(std::string_view op) {
  constexpr std::string_view kLayout =
      " Cast Concat ConstantOfShape DepthToSpace Expand Flatten Identity Pad Range Reshape "
      "ScatterND ScatterElements Shape Size Split SpaceToDepth Squeeze Tile Transpose Unsqueeze "
      "Trilu ConcatFromSequence SplitToSequence SequenceAt SequenceConstruct SequenceInsert "
      "SequenceErase SequenceLength SequenceEmpty Optional OptionalGetElement OptionalHasElement "
      "CastLike EyeLike Dropout Scatter OneHot HannWindow HammingWindow BlackmanWindow ";
  return listed(kLayout, op);
}

// Einsum: the product of the sizes of every distinct label (each combination is one multiply-add).
double einsum_products(const Node& node, const Types& in) {
  std::vector<int64_t> ranks;
  for (const auto& t : in) ranks.push_back(t ? static_cast<int64_t>(t->shape.size()) : 0);
  EinsumEquation equation;
  try {
    equation = parse_einsum(node.attribute_string("equation", ""), ranks);
  } catch (const std::exception&) {
    return 0;  // the op reports a bad equation itself
  }
  std::map<char, int64_t> sizes;
  for (size_t i = 0; i < equation.inputs.size() && i < in.size(); ++i) {
    for (size_t d = 0; d < equation.inputs[i].size(); ++d)
      sizes[equation.inputs[i][d]] = std::max<int64_t>(1, dim(in[i], d));
  }
  double products = 1;
  for (const auto& [label, size] : sizes) products *= static_cast<double>(size);
  return products;
}

// What elementwise ops fused after a normalization or GEMM (graph/fuse_epilogue.h) add.
double fused_epilogue_flops(const Node& node, double outputs) {
  if (!node.has_attribute(kFusedEpilogueAttribute)) return 0;
  return outputs * fused_flops_per_element(node.attribute_graph(kFusedEpilogueAttribute));
}

// What a fused activation adds to a Conv's or GEMM's epilogue.
double fused_activation_flops(const Node& node, double outputs) {
  const Attribute* a = node.find_attribute(kFusedActivationAttribute);
  if (!a || a->type() != AttributeType::string) return 0;
  return outputs * elementwise_flops_per_element(std::get<std::string>(a->value));
}

NodeCost recurrent_cost(const Node& node, const Types& in, const Types& out) {
  // X [seq, batch, I] (layout 1: [batch, seq, I]); W [dirs, gates * H, I]; R [dirs, gates * H, H].
  const int64_t gates = node.op_type == "LSTM" ? 4 : node.op_type == "GRU" ? 3 : 1;
  const bool batch_first = node.attribute_int("layout", 0) == 1;
  const double seq = static_cast<double>(dim(at(in, 0), batch_first ? 1 : 0));
  const double batch = static_cast<double>(dim(at(in, 0), batch_first ? 0 : 1));
  const double input = static_cast<double>(dim(at(in, 0), 2));
  const double dirs = static_cast<double>(dim(at(in, 1), 0));
  const double hidden = static_cast<double>(dim(at(in, 2), 2));
  // Per gate element: the activation (4) and the state update (a few); LSTM also adds the bias.
  const double per_step = 2 * batch * gates * hidden * (input + hidden) + batch * gates * hidden * 6;
  NodeCost cost;
  cost.flops = dirs * seq * per_step;
  cost.bytes = total_bytes(in) + total_bytes(out);
  cost.sequential_steps = static_cast<int64_t>(seq);
  cost.modeled = true;
  return cost;
}

// DFT's transform length and count from its output: [..., n or n/2+1 (onesided), ..., 2].
NodeCost dft_cost(const Node& node, const Types& in, const Types& out, int64_t opset_axis) {
  const auto& y = at(out, 0);
  NodeCost cost;
  cost.bytes = total_bytes(in) + total_bytes(out);
  cost.modeled = true;
  if (!y || y->shape.size() < 2) return cost;
  const int64_t axis = opset_axis;
  const int64_t bins = dim(y, axis);
  const bool onesided = node.attribute_int("onesided", 0) != 0;
  const double n = onesided ? 2.0 * static_cast<double>(bins - 1) : static_cast<double>(bins);
  const double transforms = numel(y) / (static_cast<double>(bins) * 2.0);
  cost.flops = transforms * fft_flops(n);
  return cost;
}

NodeCost stft_cost(const Node& node, const Types& in, const Types& out) {
  // Y [batch, frames, bins, 2]; the window (input 2), when given, has the frame length.
  const auto& y = at(out, 0);
  NodeCost cost;
  cost.bytes = total_bytes(in) + total_bytes(out);
  cost.modeled = true;
  if (!y || y->shape.size() != 4) return cost;
  const int64_t bins = y->shape[2];
  const bool onesided = node.attribute_int("onesided", 1) != 0;
  double n = onesided ? 2.0 * static_cast<double>(bins - 1) : static_cast<double>(bins);
  if (at(in, 2)) n = numel(at(in, 2));
  const double transforms = static_cast<double>(y->shape[0] * y->shape[1]);
  cost.flops = transforms * (fft_flops(n) + n);
  return cost;
}

}  // namespace

NodeCost& NodeCost::operator+=(const NodeCost& other) {
  flops += other.flops;
  bytes += other.bytes;
  sequential_steps += other.sequential_steps;
  modeled = modeled || other.modeled;
  return *this;
}

namespace {

// Attention, onda's fused one (graph/fuse_attention.h) and ONNX's: Q [.., Lq, D], K [.., Lk, D] (or
// K^T), V [.., Lk, Dv]: the two products, 2·Lq·Lk·(D + Dv) per batch row; the softmax's few per score.
// With Transposes folded into the node (graph/fold_attention_transposes.h), Q and V are read through
// their permutations.
double attention_flops(const Node& node, const Types& in) {
  const auto& q = at(in, 0);
  const auto& v = at(in, 2);
  if (!q || !v) return 0;
  const Shape q_shape = attention_operand_shape(node, 0, q->shape), v_shape = attention_operand_shape(node, 2, v->shape);
  const double keys = static_cast<double>(v_shape.size() >= 2 ? v_shape[v_shape.size() - 2] : 1);
  const double d = static_cast<double>(q_shape.empty() ? 1 : q_shape.back());
  const double rows = numel(q) / std::max(1.0, d);
  const double dv = static_cast<double>(v_shape.empty() ? 1 : v_shape.back());
  return rows * keys * (2.0 * (d + dv) + 5.0);
}

}  // namespace

NodeCost node_cost(const Node& node, const Types& in, const Types& out,
                   const std::vector<const HostTensor*>& constant_inputs) {
  const std::string& op = node.op_type;
  NodeCost cost;
  cost.bytes = total_bytes(in) + total_bytes(out);
  cost.modeled = true;
  if (node.domain == kOndaDomain && op == kFusedElementwiseOp) {
    // A fused group (graph/fuse_elementwise.h): its inputs read and output written once.
    cost.flops = numel(at(out, 0)) * fused_flops_per_element(node.attribute_graph(kFusedElementwiseBody));
    return cost;
  }
  if (node.domain == kOndaDomain && op == kRotateHalfOp) {
    cost.flops = numel(at(out, 0)) / 2;  // half the elements negated
    return cost;
  }
  if (node.domain == kOndaDomain && op == kFusedAttentionOp) {
    cost.flops = attention_flops(node, in);
    return cost;
  }
  if (!canonical_domain(node.domain).empty()) {
    cost.modeled = false;
    return cost;
  }
  const auto& x = at(in, 0);
  const auto& y = at(out, 0);
  // A product stored in column parts (graph/split_gemm_columns.h) has one output per part.
  const double y_numel = numel(y) * static_cast<double>(node.attribute_int(kColumnPartsAttribute, 1)),
               x_numel = numel(x);

  if (op == "MatMul") {  // input 2: a bias fused at plan time (graph/fuse_matmul_bias.h)
    cost.flops = 2.0 * y_numel * static_cast<double>(dim(x, -1)) + (at(in, 2) ? y_numel : 0.0) +
                 fused_activation_flops(node, y_numel) + fused_epilogue_flops(node, y_numel);
  } else if (op == "Gemm") {
    const int64_t k = node.attribute_int("transA", 0) ? dim(x, 0) : dim(x, 1);
    cost.flops = 2.0 * y_numel * static_cast<double>(k) + (at(in, 2) ? y_numel : 0.0) +
                 fused_activation_flops(node, y_numel) + fused_epilogue_flops(node, y_numel);
  } else if (op == "Conv") {
    const auto& w = at(in, 1);
    cost.flops = 2.0 * y_numel * static_cast<double>(dim(w, 1)) * kernel_volume(w) +
                 (at(in, 2) ? y_numel : 0.0) + fused_activation_flops(node, y_numel);
  } else if (op == "ConvTranspose") {
    const auto& w = at(in, 1);
    cost.flops = 2.0 * x_numel * static_cast<double>(dim(w, 1)) * kernel_volume(w) +
                 (at(in, 2) ? y_numel : 0.0) + fused_activation_flops(node, y_numel);
  } else if (op == "LSTM" || op == "GRU" || op == "RNN") {
    return recurrent_cost(node, in, out);
  } else if (op == "DFT") {
    // Opsets < 20: attribute `axis` (default 1); opset 20: input 2 (default -2, the same axis as 1
    // for the usual [batch, n, 2] signal).
    int64_t axis = node.attribute_int("axis", 1);
    if (node.inputs.size() > 2 && !node.inputs[2].empty()) {
      const HostTensor* given = constant_inputs.size() > 2 ? constant_inputs[2] : nullptr;
      axis = given && given->numel() == 1 ? given->to_int64()[0] : -2;
    }
    return dft_cost(node, in, out, axis);
  } else if (op == "STFT") {
    return stft_cost(node, in, out);
  } else if (is_elementwise(op)) {
    // Variadic Sum/Max/Min/Mean combine their inputs pairwise.
    double arity = 1;
    if (op == "Sum" || op == "Max" || op == "Min" || op == "Mean")
      arity = std::max<double>(1, static_cast<double>(in.size()) - 1);
    if (op == "Clip") arity = 2;
    cost.flops = y_numel * arity * elementwise_flops_per_element(op);
  } else if (op == "Attention") {
    cost.flops = attention_flops(node, in);
  } else if (op == "Einsum") {
    // Every combination of the equation's labels is one multiply-add.
    cost.flops = 2.0 * einsum_products(node, in);
  } else if (op.rfind("Reduce", 0) == 0 || op == "ArgMax" || op == "ArgMin" || op == "Hardmax" ||
             op == "NegativeLogLikelihoodLoss" || op == "SoftmaxCrossEntropyLoss") {
    const bool squares = op == "ReduceSumSquare" || op == "ReduceL2" || op == "ReduceLogSumExp";
    cost.flops = x_numel * (squares ? 2.0 : 1.0);
  } else if (op == "LayerNormalization" || op == "InstanceNormalization" || op == "GroupNormalization" ||
             op == "RMSNormalization" || op == "LpNormalization" || op == "MeanVarianceNormalization" ||
             op == "LRN") {
    cost.flops = 5.0 * x_numel + fused_epilogue_flops(node, x_numel);
  } else if (op == "BatchNormalization") {
    cost.flops = 2.0 * x_numel;  // inference: one scale and one shift per element
  } else if (op == "Softmax" || op == "LogSoftmax") {
    cost.flops = 5.0 * x_numel;
  } else if (op == "MaxPool" || op == "AveragePool" || op == "LpPool") {
    double window = 1;
    for (int64_t k : node.attribute_ints("kernel_shape", {})) window *= static_cast<double>(k);
    cost.flops = y_numel * window;
  } else if (op == "GlobalAveragePool" || op == "GlobalMaxPool") {
    cost.flops = x_numel;
  } else if (op == "CumSum") {
    cost.flops = x_numel;  // one add per element
  } else if (op == "TopK") {
    // onda's top_k kernel ranks each element against its whole row (src/kernels/reduce/top_k.h).
    cost.flops = x_numel * static_cast<double>(std::max<int64_t>(1, dim(x, node.attribute_int("axis", -1))));
  } else if (op == "NonMaxSuppression") {
    // Read back and selected on the host: at worst every box against every other, per class.
    const double boxes = static_cast<double>(dim(x, 1));
    cost.flops = numel(at(in, 1)) * boxes * 10.0;
  } else if (op == "Unique") {
    // Read back and sorted on the host: n log2 n comparisons (no GPU arithmetic, but counted).
    cost.flops = x_numel * std::log2(std::max(2.0, x_numel));
  } else if (op == "NonZero" || op == "Compress") {
    // Stream compaction: the input (condition) read twice (count, then scatter), one compare each.
    cost.flops = x_numel;
    cost.bytes += bytes_of(op == "Compress" ? at(in, 1) : x);
  } else if (op.starts_with("Random") || op == "Bernoulli") {
    // Philox4x32-10: ten rounds of two 32x32 products and a few xors per element, ~40 operations.
    cost.flops = 40.0 * y_numel;
  } else if (op == "GridSample") {
    // Per output element: a few per spatial dim to place the point, then one multiply-add per tap.
    const std::string mode = node.attribute_string("mode", "linear");
    const double spatial = static_cast<double>(std::max<size_t>(x ? x->shape.size() : 4, 3) - 2);
    const double taps =
        mode == "nearest" ? 1.0 : std::pow(mode == "cubic" || mode == "bicubic" ? 4.0 : 2.0, spatial);
    cost.flops = y_numel * (2.0 * taps + 10.0 * spatial);
  } else if (op == "Det") {
    // Gaussian elimination: about 2/3 n^3 per matrix.
    const double n = static_cast<double>(dim(x, -1));
    cost.flops = x_numel / std::max(1.0, n * n) * (2.0 / 3.0) * n * n * n;
  } else if (op == "MelWeightMatrix") {
    cost.flops = 0.0;  // a table built on the host (its inputs are known before the run), written once
  } else if (op == "Resize" || op == "Upsample") {
    // Linear and cubic interpolation weigh a few neighbours per output; nearest only copies.
    const std::string mode = node.attribute_string("mode", "nearest");
    cost.flops = mode == "nearest" ? 0.0 : y_numel * (mode == "cubic" ? 16.0 : 4.0);
    cost.bytes = bytes_of(x) + bytes_of(y);  // the scales / sizes inputs are a few numbers
  } else if (op == "MaxUnpool") {
    cost.flops = 0.0;  // zeros, then each input element written once
  } else if (op == "Slice" || op == "Gather" || op == "GatherElements" || op == "GatherND" ||
             op == "ReverseSequence") {
    // Only the selected elements are read: the output's bytes once in and once out, plus the indices.
    cost.bytes = 2.0 * bytes_of(y);
    for (size_t i = 1; i < in.size(); ++i) cost.bytes += bytes_of(in[i]);
  } else if (!is_layout(op)) {
    cost.modeled = false;
  }
  return cost;
}

}  // namespace onda
