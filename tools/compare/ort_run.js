// Runs an ONNX model with ONNX Runtime's CPU provider (npm onnxruntime-node) on .npy inputs and
// writes each output as .npy: the reference onda's outputs are compared with (tools/compare/rel_l2.py).
//   node tools/compare/ort_run.js model.onnx OUT_DIR name=input.npy ...
// NODE_PATH must reach onnxruntime-node (npm install --ignore-scripts onnxruntime-node@1.30.0).
const fs = require("fs");
const path = require("path");
const ort = require("onnxruntime-node");

function readNpy(file) {
  const buf = fs.readFileSync(file);
  const headerLen = buf.readUInt16LE(8);
  const header = buf.toString("latin1", 10, 10 + headerLen);
  const descr = /'descr':\s*'([^']+)'/.exec(header)[1];
  const shape = /'shape':\s*\(([^)]*)\)/.exec(header)[1].split(",").map((s) => s.trim()).filter((s) => s).map(Number);
  if (descr !== "<f4") throw new Error(`${file}: only float32 .npy supported, got ${descr}`);
  const data = new Float32Array(buf.buffer.slice(buf.byteOffset + 10 + headerLen, buf.byteOffset + buf.length));
  return new ort.Tensor("float32", data, shape);
}

function writeNpy(file, tensor) {
  if (tensor.type !== "float32") throw new Error(`output type ${tensor.type} not supported`);
  let header = `{'descr': '<f4', 'fortran_order': False, 'shape': (${tensor.dims.join(", ")}${tensor.dims.length === 1 ? "," : ""}), }`;
  while ((10 + header.length + 1) % 64 !== 0) header += " ";
  header += "\n";
  const head = Buffer.alloc(10);
  head.write("\x93NUMPY", 0, "latin1");
  head[6] = 1;
  head[7] = 0;
  head.writeUInt16LE(header.length, 8);
  fs.writeFileSync(file, Buffer.concat([head, Buffer.from(header, "latin1"), Buffer.from(tensor.data.buffer)]));
}

(async () => {
  const [model, outDir, ...assignments] = process.argv.slice(2);
  const feeds = {};
  for (const a of assignments) {
    const eq = a.lastIndexOf("=");
    feeds[a.slice(0, eq)] = readNpy(a.slice(eq + 1));
  }
  const session = await ort.InferenceSession.create(model, { executionProviders: ["cpu"] });
  const start = process.hrtime.bigint();
  const results = await session.run(feeds);
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  fs.mkdirSync(outDir, { recursive: true });
  for (const [name, tensor] of Object.entries(results)) {
    writeNpy(path.join(outDir, name.replace(/[^A-Za-z0-9_.-]/g, "_") + ".npy"), tensor);
  }
  console.log(`ONNX Runtime CPU: ${ms.toFixed(1)} ms`);
})().catch((e) => {
  console.error(e);
  process.exit(1);
});
