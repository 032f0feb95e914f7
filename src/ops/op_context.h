// What an op implementation may use while recording one node: kernels, the recorder of the run,
// the buffer pool, and upload of host values (cached for initializers by the runtime).
#pragma once
#include <functional>
#include <memory>
#include <string>

#include "gpu/buffer_pool.h"
#include "gpu/command_recorder.h"
#include "graph/graph.h"
#include "kernels/kernel_context.h"
#include "ops/op_value.h"

namespace onda::ops {

struct OpContext {
  kernels::KernelContext kernels;
  gpu::CommandRecorder& recorder;
  gpu::BufferPool& pool;
  // For buffers an op keeps across runs in node_state and fills with queue writes (FFT tables):
  // nothing in it is released during a run, so such a write cannot race with recorded work on a
  // reused buffer (see CommandRecorder::upload).
  gpu::BufferPool& persistent_pool;
  int64_t opset = 0;  // of the node's domain
  // Returns a GPU tensor for a value (uploading a host value, with caching by the runtime).
  std::function<Tensor(const Value&)> to_device;
  // State the op keeps for this node across runs (e.g. prepacked constant weights); starts empty.
  std::shared_ptr<void>* node_state = nullptr;
  // The host copy of a value that only the GPU holds: submits the work recorded so far and waits
  // (runtime/graph_walk.h: the mechanism that reads an If's condition back). For ops whose output
  // shape depends on values (NonZero, Compress): they read back a count mid-run. Unset outside a
  // Session's walk (such an op is then a ModelError).
  std::function<HostTensor(const Value&)> read_back{};
  // Set by an op whose recorded work differs between runs given the same inputs (a random draw
  // without a seed takes a new key each run): the runtime then never replays the run from a capture.
  bool differs_per_run = false;
  // Set by an op (bit i for input i, reset before each node) whose node state now keeps all it needs
  // of a constant input (a prepacked weight) and that records without reading the input: the walk
  // then drops its upload of that initializer where no other node reads it, and passes it to this
  // node on later runs of the plan as a host value (Value::host, constant) without uploading it.
  // Such an op calls to_device on it only if it must derive again (which uploads it once more).
  uint64_t derived_inputs = 0;

  // Where an op puts what it derives once from constant weights and keeps in node_state (prepacked
  // B): the session's weights pool, so peak memory reports weights apart from activations. nullptr:
  // `pool`.
  gpu::BufferPool* weights_pool = nullptr;

  gpu::BufferPool& pool_for_weights() { return weights_pool ? *weights_pool : pool; }
  Tensor allocate(DType dtype, const Shape& shape) { return Tensor::empty(pool, dtype, shape); }
};

}  // namespace onda::ops
