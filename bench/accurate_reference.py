"""Is a gap between onda and ONNX Runtime's CPU provider onda's error or ONNX Runtime's? Runs a model
three ways on the same inputs (0.1 N(0, 1), seed 0):
  ort      ONNX Runtime CPU as is;
  ort_f64  ONNX Runtime CPU with every float Reduce* node computed in float64 (Cast to double before,
           Cast back to float after): large reductions summed in float32 lose digits with the
           length of the sum, so this is the more accurate reference;
  onda     `onda run` on the unmodified model;
and prints the rel L2 of each output for every pair. If onda sits much closer to ort_f64 than ort
does, the remaining gap to plain ONNX Runtime is ONNX Runtime's own rounding.

    python3 bench/accurate_reference.py MODEL.onnx [--onda build/onda] [--ops ReduceMean,ReduceSum]
"""
import argparse
import os
import tempfile

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, shape_inference

from onda_vs_ort import random_inputs, run_onda

parser = argparse.ArgumentParser()
parser.add_argument("model")
parser.add_argument("--onda", default="build/onda")
parser.add_argument("--ops", default="ReduceMean,ReduceSum,ReduceSumSquare,ReduceL2")
args = parser.parse_args()

model = onnx.load(args.model)
inferred = shape_inference.infer_shapes(model)
float_values = {v.name for v in list(inferred.graph.value_info) + list(inferred.graph.input)
                if v.type.tensor_type.elem_type == TensorProto.FLOAT}
ops = set(args.ops.split(","))

work = tempfile.mkdtemp(prefix="onda-accurate-")
plain_path = os.path.join(work, "plain.onnx")
onnx.save(model, plain_path, save_as_external_data=True, all_tensors_to_one_file=True, location="plain.weights.bin")

nodes, widened, cast_already = [], [], set()
for node in model.graph.node:
    if node.op_type in ops and node.input[0] in float_values:
        wide_in, wide_out = node.input[0] + "__f64", node.output[0] + "__f64"
        if wide_in not in cast_already:  # several reductions may read one value
            nodes.append(helper.make_node("Cast", [node.input[0]], [wide_in], to=TensorProto.DOUBLE))
            cast_already.add(wide_in)
        node.input[0] = wide_in
        out = node.output[0]
        node.output[0] = wide_out
        nodes.append(node)
        nodes.append(helper.make_node("Cast", [wide_out], [out], to=TensorProto.FLOAT))
        widened.append(node.name or out)
    else:
        nodes.append(node)
del model.graph.node[:]
model.graph.node.extend(nodes)
wide_path = os.path.join(work, "f64.onnx")
onnx.save(model, wide_path, save_as_external_data=True, all_tensors_to_one_file=True, location="f64.weights.bin")
print(f"{len(widened)} reductions computed in float64: {', '.join(widened[:8])}{' ...' if len(widened) > 8 else ''}")

session = ort.InferenceSession(plain_path, providers=["CPUExecutionProvider"])
feeds, flags = random_inputs(session, work)
names = [o.name for o in session.get_outputs()]
results = {"ort": dict(zip(names, session.run(None, feeds)))}
del session
wide = ort.InferenceSession(wide_path, providers=["CPUExecutionProvider"])
results["ort_f64"] = dict(zip(names, wide.run(None, feeds)))
del wide
results["onda"] = run_onda(args.onda, plain_path, flags, os.path.join(work, "onda"), names)


def rel_l2(a, b):
    a, b = a.astype(np.float64), b.astype(np.float64)
    return np.linalg.norm(a - b) / max(np.linalg.norm(b), 1e-30)


pairs = [("onda", "ort"), ("onda", "ort_f64"), ("ort", "ort_f64")]
print(f"{'output':24} " + " ".join(f"{a + ' vs ' + b:>18}" for a, b in pairs))
for n in names:
    print(f"{n[:24]:24} " + " ".join(f"{rel_l2(results[a][n], results[b][n]):18.2e}" for a, b in pairs))
