// Builds and trains a model in TF.js (Node, cpu backend), then saves it as `file://` does
// in tfjs-node (model.json + weights.bin, TF.js's own names such as dense_Dense1/kernel).
// stdin: {"kind": "mlp"|"lstm", "dir", "x", "y"}; stdout: {"losses", "predictions"}.
'use strict';
const path = require('path');
const {tf, fileHandler, readRequest} = require('./tfjs_node');

function build(kind, x) {
  const model = tf.sequential();
  if (kind === 'mlp') {
    model.add(tf.layers.dense({units: 16, activation: 'relu', inputShape: [x[0].length]}));
    model.add(tf.layers.batchNormalization());
    model.add(tf.layers.dropout({rate: 0.2}));
    model.add(tf.layers.dense({units: 2, activation: 'softmax'}));
  } else {
    model.add(tf.layers.embedding({inputDim: 50, outputDim: 8, inputLength: x[0].length}));
    model.add(tf.layers.lstm({units: 12}));
    model.add(tf.layers.dense({units: 2, activation: 'softmax'}));
  }
  return model;
}

async function main() {
  const req = readRequest();
  await tf.setBackend('cpu');
  const model = build(req.kind, req.x);
  model.compile({optimizer: tf.train.adam(0.01), loss: 'sparseCategoricalCrossentropy'});
  const xs = tf.tensor(req.x);
  const ys = tf.tensor(req.y, undefined, 'float32');
  const history = await model.fit(xs, ys, {epochs: 20, batchSize: 16, verbose: 0});
  await model.save(tf.io.withSaveHandler(fileHandler(path.join(req.dir, 'model.json')).save));
  const predictions = model.predict(xs).arraySync();
  process.stdout.write(JSON.stringify({losses: history.history.loss, predictions}));
}
main().catch((e) => { console.error(e.stack || String(e)); process.exit(1); });
