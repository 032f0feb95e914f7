"""Where do onda's and ONNX Runtime's results part? Exposes intermediate tensors of a model as extra
graph outputs (every node of the chosen op types, in graph order), runs the model (inputs 0.1 N(0, 1)) through ONNX
Runtime's CPU provider and through `onda run`, and prints the rel L2 of each intermediate: the first
large jump names the op to look at.

    python3 bench/trace_divergence.py MODEL.onnx [--ops LSTM,Conv,...] [--every 1] [--onda build/onda]
"""
import argparse
import os
import tempfile

import numpy as np
import onnx
import onnxruntime as ort
from onnx import shape_inference

from onda_vs_ort import random_inputs, run_onda

parser = argparse.ArgumentParser()
parser.add_argument("model")
parser.add_argument("--ops", default="", help="op types to expose (default: all)")
parser.add_argument("--every", type=int, default=1, help="expose every n-th chosen node")
parser.add_argument("--onda", default="build/onda")
parser.add_argument("--max-tensors", type=int, default=150)
args = parser.parse_args()

model = onnx.load(args.model)  # with external data: the modified model is saved next to a copy
inferred = shape_inference.infer_shapes(model)
types = {v.name: v.type for v in inferred.graph.value_info}
ops = set(args.ops.split(",")) if args.ops else None
chosen = []
for i, node in enumerate(model.graph.node):
    if ops and node.op_type not in ops:
        continue
    out = node.output[0]
    t = types.get(out)
    if t is None or t.tensor_type.elem_type != onnx.TensorProto.FLOAT:
        continue
    chosen.append((node.name or out, node.op_type, out, t))
chosen = chosen[:: args.every][: args.max_tensors]
existing = {o.name for o in model.graph.output}
for _, _, out, t in chosen:
    if out not in existing:
        model.graph.output.append(onnx.helper.make_value_info(out, t))

work = tempfile.mkdtemp(prefix="onda-trace-")
path = os.path.join(work, "traced.onnx")
onnx.save(model, path, save_as_external_data=True, all_tensors_to_one_file=True, location="traced.weights.bin")
session = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
feeds, flags = random_inputs(session, work)
names = [o.name for o in session.get_outputs()]
ref = dict(zip(names, session.run(None, feeds)))
got_all = run_onda(args.onda, path, flags, os.path.join(work, "onda"), names)
print(f"{'node':60} {'op':22} {'rel L2':>9} {'max |ref|':>10}")
for name, op, out, _ in chosen + [(o, "(output)", o, None) for o in existing]:
    got = got_all[out].astype(np.float64)
    r = ref[out].astype(np.float64)
    err = np.linalg.norm(got - r) / max(np.linalg.norm(r), 1e-30)
    print(f"{name[-60:]:60} {op:22} {err:9.2e} {np.abs(r).max():10.3g}")
