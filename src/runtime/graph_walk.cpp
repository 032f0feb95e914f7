#include "runtime/graph_walk.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <unordered_set>

#include "gpu/gpu_error.h"
#include "graph/fusion_passes.h"
#include "graph/host_ops.h"
#include "graph/liveness.h"
#include "graph/model_error.h"
#include "graph/subgraph.h"
#include "runtime/control_flow.h"
#include "runtime/roofline.h"

namespace onda::runtime {
namespace {

double ms_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

// Device limits and allocation failures come from the GPU layer, which knows the kernel but not the
// node: the message gets the node (type and name) in front, the exception keeps its type.
std::vector<ops::Value> record_naming_node(const ops::OpEntry& entry, const Node& node,
                                           ops::OpContext& context, const std::vector<ops::Value>& args) {
  try {
    return entry.record(node, context, args);
  } catch (const gpu::DeviceLimitError& error) {
    throw gpu::DeviceLimitError(fmt::format("{}: {}", node.describe(), error.what()));
  } catch (const gpu::OutOfMemoryError& error) {
    throw gpu::OutOfMemoryError(fmt::format("{}: {}", node.describe(), error.what()));
  }
}

// Ops that take sequence inputs (the rest get only tensors: a sequence reaching them is an error,
// not a crash in a kernel that reads a tensor that is not there).
bool takes_sequences(const Node& node) {
  static const std::set<std::string, std::less<>> ops{
      "SequenceAt", "SequenceInsert",     "SequenceErase",      "SequenceLength",    "Identity",
      "Optional",   "ConcatFromSequence", "OptionalHasElement", "OptionalGetElement"};
  return canonical_domain(node.domain).empty() && ops.count(node.op_type) != 0;
}

// "[2,3]" or "seq" per value, for subplan keys.
std::string type_key(const ops::Value& value) {
  if (!value.defined()) return "-";
  if (value.is_sequence()) return "seq";
  return fmt::format("{}[{}]", dtype_name(value.dtype()), fmt::join(value.shape(), ","));
}

}  // namespace

GraphWalk::GraphWalk(WalkResources resources) : r_(resources) {
  r_.op_context.read_back = [this](const ops::Value& value) { return host_value(value); };
}

WalkPlan make_walk_plan(Graph simplified) {
  WalkPlan plan;
  plan.graph = std::move(simplified);
  // The memory plan: each value is dropped (its buffer back to the pool, for the next node's
  // outputs) right after the last node that reads it, or right after its producer when nothing
  // reads it. Computed once per plan, like the op lookups (both cost CPU in every run otherwise).
  plan.released_after = values_released_after(plan.graph);
  for (const Node& node : plan.graph.nodes)
    plan.ops.push_back(ops::find_op(node.domain, node.op_type, plan.graph.opset_version(node.domain)));
  return plan;
}

std::vector<std::string> weights_read(const Graph& graph) {
  std::vector<std::string> names;
  std::unordered_set<std::string> seen;
  for (const Node& node : graph.nodes) {
    for (const std::string& name : node.inputs) {
      const HostTensor* init = name.empty() ? nullptr : graph.find_initializer(name);
      if (init && init->numel() > kMaxHostElements && seen.insert(name).second) names.push_back(name);
    }
  }
  return names;
}

ops::Value GraphWalk::lookup(const Scope& scope, const Node& reader, const std::string& name, bool upload) {
  if (name.empty()) return {};
  for (const Scope* s = &scope; s; s = s->parent) {
    auto it = s->values.find(name);
    if (it != s->values.end()) return it->second;
    const HostTensor* init = s->graph ? s->graph->find_initializer(name) : nullptr;
    if (!init) continue;
    ops::Value v;
    v.host = *init;
    v.constant = true;
    // Large initializers (weights) go to the GPU once and stay there. A subgraph's plan may fold
    // its own values under a name that another plan of it folds differently: keyed by data too.
    if (init->numel() > kMaxHostElements && upload) {
      const std::string key =
          s->parent ? fmt::format("{}@{}", name, static_cast<const void*>(init->data())) : name;
      auto cached = r_.uploaded_initializers.find(key);
      if (cached == r_.uploaded_initializers.end()) {
        const auto start = std::chrono::steady_clock::now();
        Tensor weight =
            Tensor::upload(r_.recorder, r_.weights_pool, init->dtype(), init->shape(), init->data());
        cached = r_.uploaded_initializers.emplace(key, std::move(weight)).first;
        r_.record_ms_by_op["(weights)"] += ms_since(start);
      }
      v.device = cached->second;
      v.host = HostTensor();
    }
    return v;
  }
  throw ModelError(fmt::format("{}: input '{}' has no value", reader.describe(), name));
}

std::vector<ops::Value> GraphWalk::run_on_host_or_gpu(const Node& node, const ops::OpEntry* entry,
                                                      int64_t opset, std::shared_ptr<void>* node_state,
                                                      const std::vector<ops::Value>& args,
                                                      bool cache_constant_results, bool& on_host) {
  bool all_host = true, small = true, any_sequence = false;
  for (const auto& a : args) {
    // A value that lives on the GPU (even with a host copy) makes the node a GPU node.
    all_host = all_host && !a.device.defined();
    small = small && (!a.defined() || a.host.numel() <= kMaxHostElements);
    any_sequence = any_sequence || a.is_sequence();
  }
  if (any_sequence && !takes_sequences(node)) {
    for (size_t i = 0; i < args.size(); ++i)
      if (args[i].is_sequence())
        throw ModelError(fmt::format("{}: input '{}' is a sequence, {} takes tensors", node.describe(),
                                     i < node.inputs.size() ? node.inputs[i] : std::string("?"),
                                     node.op_type));
  }
  const HostOp host_op =
      canonical_domain(node.domain).empty() && !any_sequence ? find_host_op(node.op_type) : nullptr;
  on_host = all_host && host_op && (small || is_view_op(node.op_type));
  std::vector<ops::Value> results;
  if (on_host) {
    bool all_constant = cache_constant_results;
    for (const auto& a : args) all_constant = all_constant && (!a.defined() || a.constant);
    auto cached = all_constant ? r_.constant_host_results.find(&node) : r_.constant_host_results.end();
    if (cached == r_.constant_host_results.end()) {
      std::vector<HostTensor> host_args;
      for (const auto& a : args) host_args.push_back(a.host);
      std::vector<HostTensor> computed = host_op(node, host_args);
      if (!all_constant) {
        for (auto& t : computed) results.push_back(ops::Value{.host = std::move(t)});
        return results;
      }
      cached = r_.constant_host_results.emplace(&node, std::move(computed)).first;
    }
    for (const HostTensor& t : cached->second) results.push_back(ops::Value{.host = t, .constant = true});
    return results;
  }
  if (node.op_type == "Identity" && canonical_domain(node.domain).empty() && args.size() == 1) return args;
  if (!entry) throw ModelError(node.describe() + ": no GPU implementation");
  r_.op_context.opset = opset;
  r_.op_context.node_state = node_state;
  r_.op_context.derived_inputs = 0;
  if (r_.profiling) {
    // "OpType\tnode\tinput shapes": the profile names what each expensive node was given.
    std::string shapes;
    for (const auto& a : args) {
      if (!shapes.empty()) shapes += " ";
      shapes +=
          a.defined() && !a.is_sequence() ? fmt::format("[{}]", fmt::join(a.shape(), ",")) : std::string("-");
    }
    const std::string scope =
        node.op_type + "\t" + (node.name.empty() ? node.outputs.at(0) : node.name) + "\t" + shapes;
    r_.recorder.set_scope(scope);
    results = record_naming_node(*entry, node, r_.op_context, args);
    if (r_.profile_costs) (*r_.profile_costs)[scope] += recorded_node_cost(node, args, results);
    return results;
  }
  return record_naming_node(*entry, node, r_.op_context, args);
}

std::vector<ops::Value> GraphWalk::run_node(WalkPlan& plan, size_t index, const std::vector<ops::Value>& args,
                                            Scope& scope) {
  const Node& node = plan.graph.nodes[index];
  const auto start = std::chrono::steady_clock::now();
  // Its subgraphs' nodes count under their own op types.
  if (is_control_flow_op(node)) return run_control_flow(*this, plan, node, args, scope);
  bool on_host = false;
  std::vector<ops::Value> results =
      run_on_host_or_gpu(node, plan.ops[index], plan.graph.opset_version(node.domain), &r_.node_states[&node],
                         args, true, on_host);
  const double ms = ms_since(start);
  r_.record_ms_by_op[on_host ? std::string("host") : node.op_type] += ms;
  if (r_.slow_nodes && ms > kSlowNodeRecordMs) (*r_.slow_nodes)[node.describe()] += ms;
  return results;
}

std::vector<ops::Value> GraphWalk::run_op(const Node& node, int64_t opset,
                                          const std::vector<ops::Value>& args) {
  std::shared_ptr<void> state;  // a node outside any plan keeps nothing across runs
  bool on_host = false;
  return run_on_host_or_gpu(node, ops::find_op(node.domain, node.op_type, opset), opset, &state, args, false,
                            on_host);
}

void GraphWalk::upload_weights(const WalkPlan& plan, const Scope& scope) {
  // Only a session's first walk: later plans find most weights uploaded already, and the uploads
  // that ops replaced with a packed form of their own must not come back (lookup() uploads
  // whatever a later plan still reads).
  if (!r_.weights_uploaded || *r_.weights_uploaded || scope.parent || !scope.graph) return;
  *r_.weights_uploaded = true;
  const auto start = std::chrono::steady_clock::now();
  bool any = false;
  for (const std::string& name : weights_read(plan.graph)) {
    // A bound value (a graph input with a default) shadows the initializer, as in lookup().
    if (scope.values.count(name) || r_.uploaded_initializers.count(name)) continue;
    const HostTensor* init = scope.graph->find_initializer(name);
    r_.uploaded_initializers.emplace(
        name, Tensor::upload_once(r_.context, r_.weights_pool, init->dtype(), init->shape(), init->data()));
    any = true;
  }
  if (!any) return;
  r_.context.upload_ring().flush(r_.context);
  r_.record_ms_by_op["(weights)"] += ms_since(start);
}

void GraphWalk::walk(WalkPlan& plan, Scope& scope) {
  upload_weights(plan, scope);
  const Graph& graph = plan.graph;
  // Derived inputs only in the outermost graph, whose initializers no subgraph reads: a walk of a
  // graph with control flow keeps every upload.
  const bool derive = !scope.parent && std::none_of(graph.nodes.begin(), graph.nodes.end(),
                                                    [](const Node& n) { return is_control_flow_op(n); });
  bool derived_now = false;
  for (size_t node_index = 0; node_index < graph.nodes.size(); ++node_index) {
    const Node& node = graph.nodes[node_index];
    const uint64_t derived =
        derive && node_index < plan.derived_inputs.size() ? plan.derived_inputs[node_index] : 0;
    std::vector<ops::Value> args;
    for (size_t i = 0; i < node.inputs.size(); ++i)
      args.push_back(lookup(scope, node, node.inputs[i], i >= 64 || !(derived >> i & 1)));
    if (r_.traced_pool && r_.step_marks)
      r_.step_marks->push_back({r_.traced_pool->trace_events(), node.describe()});
    std::vector<ops::Value> results = run_node(plan, node_index, args, scope);
    if (derive && (r_.op_context.derived_inputs & ~derived) != 0) {
      plan.derived_inputs.resize(graph.nodes.size());
      plan.derived_inputs[node_index] |= r_.op_context.derived_inputs;
      derived_now = true;
    }
    if (r_.traced_pool) mark_used_together(args, results);
    for (size_t i = 0; i < node.outputs.size() && i < results.size(); ++i) {
      if (!node.outputs[i].empty()) scope.values[node.outputs[i]] = std::move(results[i]);
    }
    for (const std::string& name : plan.released_after[node_index]) scope.values.erase(name);
    if (r_.submit_after > 0 && r_.recorder.pending_dispatches() >= r_.submit_after) {
      const auto submit_start = std::chrono::steady_clock::now();
      r_.recorder.submit();
      r_.record_ms_by_op["(submit)"] += ms_since(submit_start);
      r_.submit_after = std::min<size_t>(r_.submit_after * 2, size_t{64} * r_.first_submit_dispatches);
    }
  }
  if (derived_now) release_derived_uploads(plan);
}

void GraphWalk::release_derived_uploads(const WalkPlan& plan) {
  const Graph& graph = plan.graph;
  std::unordered_map<std::string, std::pair<size_t, size_t>> reads;  // initializer -> (reads, derived)
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    const uint64_t derived = n < plan.derived_inputs.size() ? plan.derived_inputs[n] : 0;
    const std::vector<std::string>& inputs = graph.nodes[n].inputs;
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (!r_.uploaded_initializers.count(inputs[i])) continue;
      auto& [all, from_derived] = reads[inputs[i]];
      ++all;
      if (i < 64 && (derived >> i & 1)) ++from_derived;
    }
  }
  for (const std::string& output : graph.outputs) reads.erase(output);
  for (const auto& [name, count] : reads) {
    if (count.first != count.second) continue;
    r_.uploaded_initializers.erase(name);
    released_uploads_ = true;
  }
}

void GraphWalk::mark_used_together(const std::vector<ops::Value>& args,
                                   const std::vector<ops::Value>& results) {
  std::vector<const gpu::PooledBuffer*> read, written;
  std::function<void(const ops::Value&, std::vector<const gpu::PooledBuffer*>&)> add =
      [&](const ops::Value& v, std::vector<const gpu::PooledBuffer*>& into) {
        if (v.device.defined()) into.push_back(v.device.storage().get());
        if (v.is_sequence())
          for (const ops::Value& item : *v.sequence) add(item, into);
      };
  for (const ops::Value& v : args) add(v, read);
  for (const ops::Value& v : results) add(v, written);  // a view of an argument counts as written
  r_.traced_pool->mark_step(read, written);
}

WalkPlan& GraphWalk::subplan(WalkPlan& owner, const Node& node, const Graph& subgraph,
                             const std::vector<ops::Value>& inputs, const Scope& scope) {
  const std::vector<std::string> outer = outer_values_read(subgraph);
  std::vector<ops::Value> outer_values;
  std::string key =
      fmt::format("{}/{}", static_cast<const void*>(&node), static_cast<const void*>(&subgraph));
  for (const ops::Value& v : inputs) key.append(" ").append(type_key(v));
  key += " |";
  for (const std::string& name : outer) {
    outer_values.push_back(lookup(scope, node, name));
    key.append(" ").append(type_key(outer_values.back()));
  }
  auto found = owner.subplans.find(key);
  if (found != owner.subplans.end()) return *found->second;

  const auto start = std::chrono::steady_clock::now();
  auto described = [](const ops::Value& v) {
    SubgraphValue value;
    if (v.defined() && !v.is_sequence()) value.type = TensorType{v.dtype(), v.shape()};
    if (v.constant && v.host.defined()) value.constant = &v.host;
    return value;
  };
  std::vector<SubgraphValue> input_types;
  for (const ops::Value& v : inputs) input_types.push_back(described(v));
  std::map<std::string, SubgraphValue> outer_types;
  for (size_t i = 0; i < outer.size(); ++i) outer_types[outer[i]] = described(outer_values[i]);
  // The same passes as the main graph's plan (Session::Impl::submit).
  Graph specialized = specialized_subgraph(subgraph, node, input_types, outer_types);
  run_fusion_passes(specialized);
  auto plan = std::make_unique<WalkPlan>(make_walk_plan(std::move(specialized)));
  r_.record_ms_by_op["(plan)"] += ms_since(start);
  ++plans_made_;
  return *owner.subplans.emplace(key, std::move(plan)).first->second;
}

HostTensor GraphWalk::host_value(const ops::Value& value) {
  if (value.host.defined()) return value.host;
  if (!value.device.defined()) throw ModelError("internal: reading back an undefined value");
  const auto start = std::chrono::steady_clock::now();
  gpu::PendingDownload download = value.device.begin_download(r_.context, r_.recorder);
  r_.recorder.submit();
  const std::vector<uint8_t> bytes = value.device.host_bytes_from_device(download.finish(r_.context));
  read_back_ = true;
  r_.record_ms_by_op["(read back)"] += ms_since(start);
  return HostTensor::copy_of(value.device.dtype(), value.device.shape(), bytes.data(), bytes.size());
}

}  // namespace onda::runtime
