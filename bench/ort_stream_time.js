// ONNX Runtime's CPU provider (npm onnxruntime-node) on a streaming model, frame by frame, the way
// bench/stream_latency.cpp times onda: every input except `spec` is a state fed from the output of
// the same name with "in" -> "out" / "h0" -> "hn" (bench/make_streaming_model.py's names), zeros at
// the start; WARMUP frames, states back to zeros, then one timed run per frame of FRAMES.bin (raw
// float32 [N, 514]). Prints per-frame p50/p99/mean in ms as JSON and writes every mask to MASKS.bin.
//   node bench/ort_stream_time.js MODEL.onnx FRAMES.bin N MASKS.bin [WARMUP] [THREADS]
const fs = require("fs");
const ort = require("onnxruntime-node");

const stateOutput = (input) => (input === "h0" ? "hn" : input.replace("_in_", "_out_"));

(async () => {
  const [model, framesPath, nArg, masksPath, warmupArg = "20", threadsArg = "1"] = process.argv.slice(2);
  const n = Number(nArg), warmup = Number(warmupArg);
  // One thread by default: a real-time host runs its enhancer on one core beside the audio thread;
  // THREADS 0 lets ONNX Runtime pick.
  const options = { executionProviders: ["cpu"], graphOptimizationLevel: "all" };
  if (Number(threadsArg) > 0) options.intraOpNumThreads = Number(threadsArg);
  const session = await ort.InferenceSession.create(model, options);
  const raw = fs.readFileSync(framesPath);
  const frames = new Float32Array(raw.buffer, raw.byteOffset, raw.byteLength / 4);
  const frameSize = frames.length / n;
  const zeros = () => {
    const states = {};
    for (const meta of session.inputMetadata) {
      if (meta.name === "spec") continue;
      const shape = meta.shape;
      states[meta.name] = new ort.Tensor("float32", new Float32Array(shape.reduce((a, b) => a * b, 1)), shape);
    }
    return states;
  };
  const specShape = session.inputMetadata.find((m) => m.name === "spec").shape;
  let states = zeros();
  const step = async (k) => {
    const feeds = { ...states, spec: new ort.Tensor("float32", frames.subarray(k * frameSize, (k + 1) * frameSize), specShape) };
    const out = await session.run(feeds);
    for (const name of Object.keys(states)) states[name] = out[stateOutput(name)];
    return out.mask.data;
  };
  for (let k = 0; k < warmup; ++k) await step(k % n);
  states = zeros();
  const masks = [];
  const times = [];
  for (let k = 0; k < n; ++k) {
    const start = process.hrtime.bigint();
    const mask = await step(k);
    times.push(Number(process.hrtime.bigint() - start) / 1e6);
    masks.push(Float32Array.from(mask));
  }
  const all = new Float32Array(masks.reduce((a, m) => a + m.length, 0));
  let offset = 0;
  for (const m of masks) {
    all.set(m, offset);
    offset += m.length;
  }
  fs.writeFileSync(masksPath, Buffer.from(all.buffer));
  const sorted = [...times].sort((a, b) => a - b);
  const pick = (q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
  console.log(JSON.stringify({ runtime: "onnxruntime-cpu", threads: Number(threadsArg), frames: n,
                               p50_ms: pick(0.5), p99_ms: pick(0.99), mean_ms: times.reduce((a, b) => a + b, 0) / n,
                               max_ms: sorted[sorted.length - 1] }));
  process.exit(0);
})().catch((e) => {
  console.error(String(e && e.stack ? e.stack : e));
  process.exit(1);
});
