// Loads a Layers model.json with TF.js's tf.loadLayersModel (cpu backend) and predicts.
// stdin: {"model": path, "inputs": [array per model input], "dtypes": [...]}
// stdout: {"outputs": [{"shape", "values"}], "layers": [class names], "weights": n}
'use strict';
const {tf, fileHandler, readRequest} = require('./tfjs_node');

async function main() {
  const req = readRequest();
  await tf.setBackend(req.backend || 'cpu');
  const model = await tf.loadLayersModel(fileHandler(req.model));
  const xs = req.inputs.map((x, i) => tf.tensor(x, undefined, (req.dtypes || [])[i]));
  let ys = model.predict(xs.length === 1 ? xs[0] : xs);
  if (!Array.isArray(ys)) ys = [ys];
  const outputs = ys.map((y) => ({shape: y.shape, values: Array.from(y.dataSync())}));
  process.stdout.write(JSON.stringify({
    outputs, backend: tf.getBackend(),
    layers: model.layers.map((l) => l.getClassName()),
    weights: model.weights.length}));
}
main().catch((e) => { console.error(e.stack || String(e)); process.exit(1); });
