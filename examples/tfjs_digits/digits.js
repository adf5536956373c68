// The digits page: draw on the canvas, see the model's prediction (class and probability
// bars), label digits, fine-tune the model with model.fit, save it with model.save.
// `window.digitsApp` exposes the state the example's test reads (tests/test_tfjs_example.py).
'use strict';

const FINE_TUNE_EPOCHS = 30;
const SIDE = 8;  // the model's input: 8x8 intensities in [0, 1], as the digits data set
const BITMAP = 32;  // the data set's digits are 32x32 bitmaps counted in 4x4 blocks

const pad = document.getElementById('pad');
const ctx = pad.getContext('2d', {willReadFrequently: true});
const el = (id) => document.getElementById(id);
const app = {model: null, ready: false, lastInput: null, examples: [], labels: [],
             probabilities: null};
window.digitsApp = app;

function modelUrl() {
  return new URLSearchParams(location.search).get('model') || 'web_model/model.json';
}

function clearPad() {
  ctx.fillStyle = '#000';
  ctx.fillRect(0, 0, pad.width, pad.height);
  app.lastInput = null;
}

// -- drawing with the mouse ------------------------------------------------------------------
let drawing = false;
function at(event) {
  const r = pad.getBoundingClientRect();
  return [event.clientX - r.left, event.clientY - r.top];
}
pad.addEventListener('mousedown', (e) => {
  drawing = true;
  ctx.strokeStyle = '#fff';
  ctx.lineWidth = 16;
  ctx.lineCap = ctx.lineJoin = 'round';
  ctx.beginPath();
  ctx.moveTo(...at(e));
});
pad.addEventListener('mousemove', (e) => {
  if (!drawing) return;
  ctx.lineTo(...at(e));
  ctx.stroke();
});
window.addEventListener('mouseup', () => {
  if (!drawing) return;
  drawing = false;
  predict();
});

// -- what the model sees -------------------------------------------------------------------
// The ink's bounding box, scaled (aspect kept) to fill a 32x32 bitmap, then averaged in 4x4
// blocks: the preprocessing that made the digits data set from its scans.
function preprocess() {
  const {data, width, height} = ctx.getImageData(0, 0, pad.width, pad.height);
  let [x0, y0, x1, y1] = [width, height, -1, -1];
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      if (data[(y * width + x) * 4] > 32) {
        x0 = Math.min(x0, x); x1 = Math.max(x1, x); y0 = Math.min(y0, y); y1 = Math.max(y1, y);
      }
    }
  }
  if (x1 < 0) return null;
  const side = Math.max(x1 - x0 + 1, y1 - y0 + 1);
  const bitmap = document.createElement('canvas');
  bitmap.width = bitmap.height = BITMAP;
  const b = bitmap.getContext('2d', {willReadFrequently: true});
  b.fillStyle = '#000';
  b.fillRect(0, 0, BITMAP, BITMAP);
  const scale = BITMAP / side;
  const w = (x1 - x0 + 1) * scale;
  const h = (y1 - y0 + 1) * scale;
  b.drawImage(pad, x0, y0, x1 - x0 + 1, y1 - y0 + 1, (BITMAP - w) / 2, (BITMAP - h) / 2, w, h);
  const pixels = b.getImageData(0, 0, BITMAP, BITMAP).data;
  const block = BITMAP / SIDE;
  const input = new Float32Array(SIDE * SIDE);
  for (let i = 0; i < BITMAP * BITMAP; i++) {
    const cell = Math.floor(Math.floor(i / BITMAP) / block) * SIDE +
                 Math.floor((i % BITMAP) / block);
    input[cell] += pixels[i * 4] / 255 / (block * block);
  }
  return input;
}

function showPreview(input) {
  const p = el('preview').getContext('2d');
  const image = p.createImageData(SIDE, SIDE);
  input.forEach((v, i) => {
    image.data.set([v * 255, v * 255, v * 255, 255], i * 4);
  });
  p.putImageData(image, 0, 0);
}

// -- prediction ----------------------------------------------------------------------------
function probabilitiesOf(inputs) {
  return tf.tidy(() => {
    const x = tf.tensor4d(inputs.flatMap((a) => Array.from(a)),
                          [inputs.length, SIDE, SIDE, 1]);
    return app.model.predict(x).arraySync();
  });
}
app.probabilitiesOf = probabilitiesOf;

function showProbabilities(probs) {
  const best = probs.indexOf(Math.max(...probs));
  el('prediction').textContent = String(best);
  el('prediction').dataset.class = String(best);
  el('bars').innerHTML = '';
  probs.forEach((p, k) => {
    const bar = document.createElement('div');
    bar.className = 'bar' + (k === best ? ' best' : '');
    bar.dataset.digit = String(k);
    bar.dataset.prob = String(p);
    const fill = document.createElement('div');
    fill.style.width = `${(100 * p).toFixed(1)}%`;
    bar.appendChild(fill);
    const label = document.createElement('span');
    label.textContent = String(k);
    const value = document.createElement('span');
    value.textContent = `${(100 * p).toFixed(1)}%`;
    el('bars').append(label, bar, value);
  });
}

function predict() {
  if (!app.model) return;
  const input = preprocess();
  app.lastInput = input;
  if (input === null) return;
  showPreview(input);
  app.probabilities = probabilitiesOf([input])[0];
  showProbabilities(app.probabilities);
}

// -- fine-tuning and saving ----------------------------------------------------------------
function addExample() {
  const input = preprocess();
  if (input === null) return;
  app.examples.push(input);
  app.labels.push(Number(el('label').value));
  el('examples-count').textContent = String(app.examples.length);
  el('finetune').disabled = false;
}

async function fineTune() {
  el('finetune').disabled = true;
  const losses = [];
  el('loss').dataset.losses = '[]';
  el('loss').dataset.done = 'false';
  const n = app.examples.length;
  const xs = tf.tensor4d(app.examples.flatMap((a) => Array.from(a)), [n, SIDE, SIDE, 1]);
  const ys = tf.tensor1d(app.labels, 'float32');
  app.model.compile({optimizer: tf.train.adam(1e-3), loss: 'sparseCategoricalCrossentropy'});
  await app.model.fit(xs, ys, {
    epochs: FINE_TUNE_EPOCHS, batchSize: 32, shuffle: true,
    callbacks: {onEpochEnd: async (epoch, logs) => {
      losses.push(logs.loss);
      el('loss').textContent =
          `loss: ${logs.loss.toFixed(4)} (epoch ${epoch + 1} of ${FINE_TUNE_EPOCHS})`;
      el('loss').dataset.losses = JSON.stringify(losses);
      await tf.nextFrame();
    }},
  });
  tf.dispose([xs, ys]);
  el('loss').dataset.done = 'true';
  el('finetune').disabled = false;
  predict();
}

async function save() {
  await app.model.save('downloads://digits-finetuned');
}

// -- start ---------------------------------------------------------------------------------
async function start() {
  for (let k = 0; k < 10; k++) el('label').add(new Option(String(k), String(k)));
  clearPad();
  el('clear').onclick = clearPad;
  el('predict').onclick = predict;
  el('add').onclick = addExample;
  el('finetune').onclick = fineTune;
  el('save').onclick = save;
  try {
    app.model = await tf.loadLayersModel(modelUrl());
  } catch (err) {
    el('status').textContent = `could not load ${modelUrl()}: ${err.message}. Run ` +
        'python examples/tfjs_digits/train_and_convert.py first.';
    return;
  }
  el('status').textContent = `model loaded (TF.js ${tf.version.tfjs}, ${tf.getBackend()} ` +
      'backend); draw a digit';
  app.ready = true;
}

if (typeof tf === 'undefined') {
  el('status').textContent = 'TF.js is missing: run `cd js && npm ci` in the repository';
} else {
  start();
}
