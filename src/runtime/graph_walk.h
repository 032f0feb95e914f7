// One run's walk over a planned graph: each node evaluated on the host (small all-host inputs with
// a host implementation) or recorded as GPU work through its op, each value released after its last
// reader (graph/liveness.h). If, Loop and Scan (runtime/control_flow.h) walk their subgraphs through
// the same object: a subgraph reads the enclosing graphs' values through a chain of Scopes, and its
// plan (the subgraph specialized and simplified for what it is given, graph/subgraph.h) is made on
// first use and kept with the plan of the graph holding it, so a run that takes the same branch as
// an earlier one plans nothing.
#pragma once
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "gpu/buffer_pool.h"
#include "gpu/command_recorder.h"
#include "gpu/context.h"
#include "graph/graph.h"
#include "graph/node_cost.h"
#include "ops/op_context.h"
#include "ops/op_registry.h"
#include "runtime/memory_planning.h"

namespace onda::runtime {

// Host evaluation is for shape arithmetic: small tensors (or free views) only.
constexpr int64_t kMaxHostElements = 1 << 16;

// A graph ready to walk: simplified for what it is given, with its memory plan and op lookups, and
// the plans of its subgraphs made so far (by node, attribute and the types the subgraph was given).
struct WalkPlan {
  Graph graph;
  std::vector<std::vector<std::string>> released_after;  // per node: values dropped after it
  std::vector<const ops::OpEntry*> ops;                  // per node: its GPU op (null: none)
  std::map<std::string, std::unique_ptr<WalkPlan>> subplans;
  // Per node (empty until one is set): its inputs whose derived form its op keeps
  // (ops::OpContext::derived_inputs), passed without an upload from then on.
  std::vector<uint64_t> derived_inputs;
};
WalkPlan make_walk_plan(Graph simplified);

// The weights a walk of `graph` uploads in its first pass (GraphWalk::upload_weights): initializers
// over kMaxHostElements that its nodes read, each named once, in the order the nodes read them.
std::vector<std::string> weights_read(const Graph& graph);

// The values of one graph being walked; names not found here are looked up in the enclosing scopes.
struct Scope {
  const Graph* graph = nullptr;  // for its initializers
  const Scope* parent = nullptr;
  std::unordered_map<std::string, ops::Value> values;
};

// What the session lends a walk: the run's recorder and op context, and the caches that live as
// long as the plan (their owner clears them with it).
struct WalkResources {
  gpu::Context& context;
  gpu::CommandRecorder& recorder;
  ops::OpContext& op_context;
  gpu::BufferPool& weights_pool;
  std::unordered_map<std::string, Tensor>& uploaded_initializers;
  std::unordered_map<const Node*, std::shared_ptr<void>>& node_states;
  std::unordered_map<const Node*, std::vector<HostTensor>>& constant_host_results;
  std::map<std::string, double>& record_ms_by_op;
  bool profiling = false;
  // Chunked submits (SessionOptions::first_submit_dispatches); 0: one submit at the end.
  size_t submit_after = 0;
  size_t first_submit_dispatches = 0;
  // Profiled runs: each recorded node's cost (runtime/roofline.h), summed by its profile name.
  std::map<std::string, NodeCost>* profile_costs = nullptr;
  // A run traced for the memory plan (gpu/buffer_pool.h): the run's pool, told after each node which
  // of its loans the node used together, and where each node's allocation events start.
  gpu::BufferPool* traced_pool = nullptr;
  std::vector<StepMark>* step_marks = nullptr;
  // The session's flag that its weights went up in one pass before its first walk
  // (GraphWalk::upload_weights); null: each is uploaded as lookup() meets it.
  bool* weights_uploaded = nullptr;
  // Nodes whose recording took over kSlowNodeRecordMs: their time by "OpType name" (RunStats).
  std::map<std::string, double>* slow_nodes = nullptr;
};

// A node recorded slower than this is named in RunStats::slow_node_record_ms (first runs: the nodes
// that created pipelines).
inline constexpr double kSlowNodeRecordMs = 0.5;

class GraphWalk {
 public:
  // Lends the op context its read-back (ops::OpContext::read_back): host_value below.
  explicit GraphWalk(WalkResources resources);
  GraphWalk(const GraphWalk&) = delete;  // the op context holds a pointer to this walk
  GraphWalk& operator=(const GraphWalk&) = delete;

  // Walks every node of `plan` with its values in `scope` (inputs bound by the caller).
  void walk(WalkPlan& plan, Scope& scope);
  // A value by name: the scope's, an enclosing scope's, or an initializer of one of their graphs
  // (a large one uploaded once and kept, unless `upload` is false: then only its host value).
  ops::Value lookup(const Scope& scope, const Node& reader, const std::string& name, bool upload = true);
  // Runs one node that is not part of a plan (Scan's slicing, stacking): on the host when it can.
  std::vector<ops::Value> run_op(const Node& node, int64_t opset, const std::vector<ops::Value>& args);
  // The plan of `subgraph` (an attribute of `node`, a node of `owner`) for the given input values
  // and the enclosing scope's values it reads: made on first use, then kept in `owner`.
  WalkPlan& subplan(WalkPlan& owner, const Node& node, const Graph& subgraph,
                    const std::vector<ops::Value>& inputs, const Scope& scope);
  // The host copy of a small value, read back from the GPU when it lives only there (submits the
  // work recorded so far and waits: the run can no longer be captured for replay).
  HostTensor host_value(const ops::Value& value);

  bool read_back() const { return read_back_; }
  // Whether this walk dropped uploads of initializers that only nodes with their derived forms read
  // (their buffers are back in the weights pool's free list: trim it once the run is submitted).
  bool released_uploads() const { return released_uploads_; }
  size_t plans_made() const { return plans_made_; }  // subplans made during this walk

 private:
  std::vector<ops::Value> run_node(WalkPlan& plan, size_t index, const std::vector<ops::Value>& args,
                                   Scope& scope);
  std::vector<ops::Value> run_on_host_or_gpu(const Node& node, const ops::OpEntry* entry, int64_t opset,
                                             std::shared_ptr<void>* node_state,
                                             const std::vector<ops::Value>& args, bool cache_constant_results,
                                             bool& on_host);

  // Before a session's first walk: the large initializers its nodes read, uploaded in one pass
  // through the context's upload ring (gpu/upload_ring.h) instead of one staging buffer each as
  // lookup() meets them.
  void upload_weights(const WalkPlan& plan, const Scope& scope);

  // A traced run: the loans of one node's arguments and results (and its scratch) were used together.
  void mark_used_together(const std::vector<ops::Value>& args, const std::vector<ops::Value>& results);
  // Drops the uploads of `plan`'s initializers that every node reading them has a derived form of.
  void release_derived_uploads(const WalkPlan& plan);

  WalkResources r_;
  bool read_back_ = false;
  bool released_uploads_ = false;
  size_t plans_made_ = 0;
};

}  // namespace onda::runtime
