// Loads a Layers model.json and trains it as loaded: TF.js compiles it from the file's
// trainingConfig. stdin: {"model", "x", "y", "epochs"}
// stdout: {"optimizer", "loss", "losses", "compiled"}
'use strict';
const {tf, fileHandler, readRequest, useBackend} = require('./tfjs_node');

async function main() {
  const req = readRequest();
  await useBackend('cpu');
  const model = await tf.loadLayersModel(fileHandler(req.model));
  if (model.optimizer == null) {
    process.stdout.write(JSON.stringify({compiled: false}));
    return;
  }
  const history = await model.fit(tf.tensor(req.x), tf.tensor(req.y),
                                  {epochs: req.epochs, batchSize: 16, verbose: 0});
  process.stdout.write(JSON.stringify({
    compiled: true, optimizer: model.optimizer.getClassName(),
    optimizerConfig: model.optimizer.getConfig(), loss: model.loss,
    metrics: model.metricsNames, losses: history.history.loss}));
}
main().catch((e) => { console.error(e.stack || String(e)); process.exit(1); });
