// If, Loop and Scan at run time, walking their subgraphs with the run's GraphWalk.
//
// If: the condition is read on the host (shape arithmetic, int and tiny inputs are host values
// already) or, when only the GPU holds it, read back (one bool: the work recorded so far is
// submitted and waited for). The taken branch is planned for what it reads on first use and kept, so
// later runs taking it plan nothing. An If whose condition folds at plan time never gets here
// (graph/simplify.h inlines its branch).
// Loop: trip count and condition read like If's condition; the body is walked once per iteration
// with the carried values of the previous one; scan outputs are stacked along a new axis 0.
// Scan (opset 9+; opset 8's batched form by running each batch row): each scan input is sliced per
// iteration along its axis (Gather), in either direction; outputs stacked along their axes.
#pragma once
#include <vector>

#include "runtime/graph_walk.h"

namespace onda::runtime {

bool is_control_flow_op(const Node& node);

// One value per node output. ModelError naming the node for a malformed condition, trip count or
// subgraph signature.
std::vector<ops::Value> run_control_flow(GraphWalk& walk, WalkPlan& owner, const Node& node,
                                         const std::vector<ops::Value>& args, const Scope& scope);

}  // namespace onda::runtime
