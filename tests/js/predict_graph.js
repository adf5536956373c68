// Loads a Graph model.json (format graph-model) with TF.js's tf.loadGraphModel and runs it.
// stdin: {"model": path, "inputs": [array per input], "backend": "cpu"|"wasm"}
// stdout: {"outputs": [{"shape", "values"}], "backend"}
'use strict';
const {tf, fileHandler, readRequest, useBackend} = require('./tfjs_node');

async function main() {
  const req = readRequest();
  const backend = await useBackend(req.backend);
  const model = await tf.loadGraphModel(fileHandler(req.model));
  const xs = req.inputs.map((x) => tf.tensor(x));
  let ys = await model.executeAsync(xs.length === 1 ? xs[0] : xs);
  if (!Array.isArray(ys)) ys = [ys];
  const outputs = ys.map((y) => ({shape: y.shape, values: Array.from(y.dataSync())}));
  process.stdout.write(JSON.stringify({outputs, backend}));
}
main().catch((e) => { console.error(e.stack || String(e)); process.exit(1); });
