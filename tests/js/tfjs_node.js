// Shared by the Node scripts the TF.js tests run: the real @tensorflow/tfjs from js/
// (pure-JS cpu backend) and a file IOHandler, since plain tfjs has no file:// in Node.
'use strict';
const fs = require('fs');
const path = require('path');

const NODE_MODULES = path.join(__dirname, '..', '..', 'js', 'node_modules');
const tf = require(path.join(NODE_MODULES, '@tensorflow', 'tfjs'));

// The bytes of every shard a weightsManifest names, concatenated in manifest order.
function readShards(dir, manifest) {
  const parts = [];
  for (const group of manifest) {
    for (const p of group.paths) parts.push(fs.readFileSync(path.join(dir, p)));
  }
  const buf = Buffer.concat(parts);
  return buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength);
}

// An IOHandler that loads model.json and its shards from disk and saves them back as
// TF.js's own `file://` handler in tfjs-node does (model.json + weights.bin).
function fileHandler(modelJsonPath) {
  const dir = path.dirname(modelJsonPath);
  return {
    load: async () => {
      const json = JSON.parse(fs.readFileSync(modelJsonPath, 'utf8'));
      const specs = [].concat(...json.weightsManifest.map((g) => g.weights));
      return tf.io.getModelArtifactsForJSONSync(
          json, specs, readShards(dir, json.weightsManifest));
    },
    save: async (artifacts) => {
      fs.mkdirSync(dir, {recursive: true});
      const weightsManifest = [{paths: ['weights.bin'], weights: artifacts.weightSpecs}];
      // The fields tfjs-node's file:// handler (io/file_system.ts) writes.
      const json = {modelTopology: artifacts.modelTopology, weightsManifest,
                    format: artifacts.format, generatedBy: artifacts.generatedBy,
                    convertedBy: artifacts.convertedBy};
      for (const key of ['trainingConfig', 'signature', 'userDefinedMetadata']) {
        if (artifacts[key] != null) json[key] = artifacts[key];
      }
      fs.writeFileSync(modelJsonPath, JSON.stringify(json));
      const data = artifacts.weightData;
      const bytes = Array.isArray(data) ? Buffer.concat(data.map((b) => Buffer.from(b))) :
                                          Buffer.from(data);
      fs.writeFileSync(path.join(dir, 'weights.bin'), bytes);
      return {modelArtifactsInfo: {dateSaved: new Date(), modelTopologyType: 'JSON',
                                   weightDataBytes: bytes.length}};
    },
  };
}

// Reads a JSON request from stdin (the tests pass arrays as nested lists).
function readRequest() {
  return JSON.parse(fs.readFileSync(0, 'utf8'));
}

module.exports = {tf, fileHandler, readShards, readRequest};
