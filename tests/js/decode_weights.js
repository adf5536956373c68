// Decodes a weightsManifest and its shards with TF.js's own tf.io.decodeWeights.
// stdin: {"dir": ..., "manifest": [...]}; stdout: {name: {"shape", "dtype", "values"}}.
'use strict';
const {tf, readShards, readRequest} = require('./tfjs_node');

const req = readRequest();
const specs = [].concat(...req.manifest.map((g) => g.weights));
const tensors = tf.io.decodeWeights(readShards(req.dir, req.manifest), specs);
const out = {};
for (const [name, t] of Object.entries(tensors)) {
  let values = t.dataSync();
  if (t.dtype === 'string') values = t.dataSync().map((b) => Buffer.from(b).toString('utf8'));
  out[name] = {shape: t.shape, dtype: t.dtype, values: Array.from(values)};
}
process.stdout.write(JSON.stringify(out));
