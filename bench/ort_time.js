// Times one model with ONNX Runtime (npm onnxruntime-node) on one execution provider, the peer
// onda is measured against (issue 8): session creation, first run, then median/min/max of timed
// runs on random inputs of the model's static shapes (every dim must be static).
//   node bench/ort_time.js MODEL.onnx webgpu|cpu [RUNS]
// One process per model: ONNX Runtime 1.30 crashes when a second WebGPU session is released.
const ort = require("onnxruntime-node");

function randomTensor(meta) {
  const shape = meta.shape.map((d) => {
    if (typeof d !== "number" || d < 0) throw new Error(`input '${meta.name}' has a dynamic dim ${d}`);
    return d;
  });
  const n = shape.reduce((a, b) => a * b, 1);
  if (meta.type === "float32") {
    const data = new Float32Array(n);
    let seed = 12345;
    for (let i = 0; i < n; ++i) {  // a small LCG: deterministic, numpy-free
      seed = (seed * 1103515245 + 12345) >>> 0;
      data[i] = (seed / 4294967296) * 2 - 1;
    }
    return new ort.Tensor("float32", data, shape);
  }
  if (meta.type === "int64") return new ort.Tensor("int64", new BigInt64Array(n), shape);
  throw new Error(`input '${meta.name}': type ${meta.type} not supported by this script`);
}

(async () => {
  const [model, provider = "webgpu", runsArg = "20"] = process.argv.slice(2);
  const runs = Number(runsArg);
  const options = { executionProviders: [provider], graphOptimizationLevel: "all" };
  if (provider === "cpu") options.intraOpNumThreads = require("os").cpus().length;
  const t0 = process.hrtime.bigint();
  const session = await ort.InferenceSession.create(model, options);
  const loadMs = Number(process.hrtime.bigint() - t0) / 1e6;
  const feeds = {};
  for (const meta of session.inputMetadata) feeds[meta.name] = randomTensor(meta);
  const time = async () => {
    const start = process.hrtime.bigint();
    const out = await session.run(feeds);
    for (const t of Object.values(out)) void t.data;  // outputs on the host, as onda's are
    return Number(process.hrtime.bigint() - start) / 1e6;
  };
  const first = await time();
  const times = [];
  for (let i = 0; i < runs; ++i) times.push(await time());
  times.sort((a, b) => a - b);
  const median = times.length ? times[Math.floor(times.length / 2)] : first;
  console.log(JSON.stringify({ model, provider, load_ms: loadMs, first_ms: first, runs,
                               median_ms: median, min_ms: times[0] ?? first, max_ms: times[times.length - 1] ?? first }));
  process.exit(0);  // skip the session release (see above)
})().catch((e) => {
  console.error(String(e && e.stack ? e.stack : e));
  process.exit(1);
});
