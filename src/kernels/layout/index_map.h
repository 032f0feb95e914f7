// The one gather that most layout ops reduce to: every element of an output region is read from the
// input through a per-dim affine map (x = start + c * step) with an ONNX Pad boundary rule.
// Transpose, Slice, Split, Concat, Expand, Tile and Pad build an IndexMap and call
// record_index_map; it drops unit dims, coalesces dims that stay adjacent on both sides, and
// records one dispatch (one pass over the output, each input element read once per use).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/common/binding_window.h"
#include "kernels/kernel_context.h"
#include "kernels/layout/layout_common.h"
#include "tensor/tensor.h"

namespace onda::kernels {

// What an input coordinate outside [0, in_dim) means (ONNX Pad modes; Wrap also implements Tile).
enum class Boundary { None, Constant, Reflect, Edge, Wrap };

struct IndexMapDim {
  int64_t size = 1;        // region extent
  int64_t out_stride = 0;  // in output elements
  int64_t start = 0;       // input coordinate of c = 0
  int64_t step = 1;        // input coordinate increment per c (0: broadcast, < 0: reversed)
  int64_t in_dim = 1;      // input extent along this dim (boundary rule)
  int64_t in_stride = 0;   // in input elements
};

struct IndexMap {
  std::vector<IndexMapDim> dims;  // outermost first
  int64_t out_base = 0;           // output element of region coordinate 0 (before the view offset)
  int64_t in_base = 0;            // added to the input index (before the view offset)
  Boundary boundary = Boundary::None;
  uint32_t pad_bits = 0;  // Constant: the pad value's bits (f16: low 16 bits)
};

// An index map planned once: simplified (unit dims dropped, adjacent dims coalesced) and checked,
// its pipeline kept; recorded per run on tensors of the planned dtype at any element offsets.
class IndexMapKernel {
 public:
  // Throws std::invalid_argument for more than 8 dims after coalescing.
  IndexMapKernel(const KernelContext& kc, IndexMap map, DType dtype, std::string name);

  // `input` and `output` must have the planned dtype. Throws std::invalid_argument for an index past
  // 2^31 and gpu::DeviceLimitError when no piece of the copy fits the storage binding limit.
  void record(gpu::CommandRecorder& recorder, const Tensor& input, const Tensor& output) const;

 private:
  const wgpu::ComputePipeline& pipeline() const;
  void dispatch_region(gpu::CommandRecorder& recorder, const ElementWindow& in, const ElementWindow& out,
                       const IndexMap& map) const;
  void record_box(gpu::CommandRecorder& recorder, const Tensor& input, const Tensor& output,
                  const IndexMap& box, int64_t capacity) const;

  KernelContext kc_;
  IndexMap map_;  // simplified; no dims when the region is empty
  DType dtype_;
  std::string name_;
  bool empty_ = false;
  mutable const wgpu::ComputePipeline* pipeline_ = nullptr;  // owned by the cache
};

// Plans and records in one call. `input` and `output` must share a dtype; `name` labels errors and
// the dispatch. Throws
// std::invalid_argument for more than 8 dims after coalescing or an index past 2^31, and
// gpu::DeviceLimitError when a tensor exceeds the device's storage binding size.
void record_index_map(const KernelContext& kc, gpu::CommandRecorder& recorder, const Tensor& input,
                      const Tensor& output, IndexMap map, const std::string& name);

// A plain copy between two tensors of the same shape and dtype (materialising a view, Identity into
// another buffer); any dtype, any element offsets.
void record_copy(const KernelContext& kc, gpu::CommandRecorder& recorder, const Tensor& input,
                 const Tensor& output);

}  // namespace onda::kernels
