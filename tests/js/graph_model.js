// Runs a TF.js Graph model in Node with the real @tensorflow/tfjs (js/node_modules): the
// judge of tensorlite's Graph-format files (tests/test_tfjs_graph.py, bench/tfjs_inference.py).
//
//   node tests/js/graph_model.js < request.json
//
// request: {"model": "<path of model.json>", "backend": "cpu" | "wasm",
//           "inputs": {"<signature key>": {"shape": [...], "dtype": "float32",
//                                         "values": [...flat...]}},
//           "async": false, "repeat": 0, "warmup": 0}
// stdout: {"backend", "metadata" (userDefinedMetadata),
//          "outputs": {"<signature key>": {"shape", "dtype", "values"}},
//          "ms_per_run"} (ms_per_run: the mean wall time of `repeat` further runs after
//          `warmup` untimed ones, when asked).
// Values travel as flat lists of numbers: float32 values are exact in JSON's doubles.
'use strict';
const fs = require('fs');
const path = require('path');
const {tf, readShards, readRequest} = require('./tfjs_node.js');

const NODE_MODULES = path.join(__dirname, '..', '..', 'js', 'node_modules');

// An IOHandler loading model.json and its weight shards from disk.
function graphFileHandler(modelJsonPath) {
  return {
    load: async () => {
      const json = JSON.parse(fs.readFileSync(modelJsonPath, 'utf8'));
      return tf.io.getModelArtifactsForJSON(json, async (manifest) => [
        [].concat(...manifest.map((g) => g.weights)),
        readShards(path.dirname(modelJsonPath), manifest)]);
    },
  };
}

async function useBackend(name) {
  if (name === 'wasm') {
    const wasm = require(path.join(NODE_MODULES, '@tensorflow', 'tfjs-backend-wasm'));
    wasm.setWasmPaths(path.join(NODE_MODULES, '@tensorflow', 'tfjs-backend-wasm', 'dist') +
                      path.sep);
  }
  if (!(await tf.setBackend(name))) {
    throw new Error(`TF.js backend ${name} could not be initialised`);
  }
  await tf.ready();
}

// Runs the model once; outputs in the signature's order (its keys), else the graph's.
async function run(model, inputs, asyncRun) {
  const keys = Object.keys(model.signature && model.signature.outputs || {});
  const names = keys.length ? keys : model.outputNodes;
  let outs = asyncRun ? await model.executeAsync(inputs, names) : model.execute(inputs, names);
  if (!Array.isArray(outs)) outs = [outs];
  return {names, outs};
}

// The TensorFlow op names TF.js's graph executor maps (tfjs-converter's op_list tables).
function opList() {
  const dir = path.join(NODE_MODULES, '@tensorflow', 'tfjs-converter', 'dist', 'operations',
                        'op_list');
  const names = new Set();
  for (const file of fs.readdirSync(dir).filter((f) => f.endsWith('.js'))) {
    for (const op of require(path.join(dir, file)).json) names.add(op.tfOpName);
  }
  return [...names].sort();
}

async function main() {
  const request = readRequest();
  if (request.op_list) {
    process.stdout.write(JSON.stringify({ops: opList()}));
    return;
  }
  await useBackend(request.backend || 'cpu');
  const model = await tf.loadGraphModel(graphFileHandler(request.model));
  const inputs = {};
  for (const [key, entry] of Object.entries(request.inputs)) {
    inputs[key] = tf.tensor(entry.values, entry.shape, entry.dtype || 'float32');
  }
  const {names, outs} = await run(model, inputs, !!request.async);
  const result = {backend: tf.getBackend(), outputs: {}, metadata: model.metadata || null};
  names.forEach((name, i) => {
    result.outputs[name] = {shape: outs[i].shape, dtype: outs[i].dtype,
                            values: Array.from(outs[i].dataSync())};
  });
  const repeat = request.repeat || 0;
  for (let i = 0; repeat > 0 && i < (request.warmup || 0); i++) {
    const r = await run(model, inputs, !!request.async);
    await Promise.all(r.outs.map((t) => t.data()));
    tf.dispose(r.outs);
  }
  if (repeat > 0) {
    const start = process.hrtime.bigint();
    for (let i = 0; i < repeat; i++) {
      const r = await run(model, inputs, !!request.async);
      await Promise.all(r.outs.map((t) => t.data()));
      tf.dispose(r.outs);
    }
    result.ms_per_run = Number(process.hrtime.bigint() - start) / 1e6 / repeat;
  }
  process.stdout.write(JSON.stringify(result));
}

main().catch((err) => {
  process.stderr.write(`${err && err.stack ? err.stack : err}\n`);
  process.exit(1);
});
