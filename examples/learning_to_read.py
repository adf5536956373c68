"""The TF Dev Summit 2020 talk "Learning to read with TensorFlow and Keras", end to end.

The pipeline and the model follow the talk's code: TextLineDataset -> filter the book-title
lines with regex_full_match -> replace punctuation with regex_replace -> split into words ->
windows of 11 words (10 words of context, the 11th the label) -> a TextVectorization layer
adapted on the lines -> an encoder LSTM, Keras Attention and a decoder LSTM with a projection
(tensorflow_addons' BasicDecoder is not part of TensorFlow: `Decoder` below stands in for it
with the same call and outputs) -> the seed's custom `train_step` -> generation of new text by
feeding each predicted word back in (`predict`, as the seed writes it).

The training text is written by this program (sentences from a small public-domain-style
grammar, with `_BOOK_TITLE_` lines for the filter to drop); nothing is downloaded.

    python examples/learning_to_read.py [--epochs 12] [--sentences 1500]

Deviations from the seed's text, each needed for it to run at all (also in TensorFlow):
- the seed's punctuation class `[...{|}~\\]` never closes (RE2 rejects it: "missing ]"),
  so the closing `]` is unescaped here;
- `rnn_unitss` is a typo for `rnn_units`; `loss`, `trainable_variables` and `y_pred`,
  which the seed's notes leave out, are computed as Keras's custom-train_step guide does;
- Keras's Attention takes `[query, value]` with a time axis, so the decoder's query is
  `state_h` with a time axis of 1 attending over `encoder_outputs`.
"""
import argparse
import os
import tempfile

import numpy as np

import tensorlite as tf

TextVectorization = tf.keras.layers.experimental.preprocessing.TextVectorization

PUNCTUATION = r'[!"#$%&()\*\+,-\./:;<=>?@[\\\]^_`{|}~]'


def write_text(path, sentences=1500, seed=0):
    """A small corpus with regular structure (so a short training run learns something)."""
    rng = np.random.default_rng(seed)
    subjects = ["the old man", "the young girl", "a tired sailor", "the king", "my brother",
                "the quiet dog", "a clever fox", "the farmer", "our teacher", "the queen"]
    verbs = ["walked to", "looked at", "dreamed of", "sang about", "ran toward",
             "spoke with", "waited for", "laughed at"]
    objects = ["the river", "the green hills", "a small house", "the dark forest",
               "the sea", "an open window", "the morning sun", "the silver moon"]
    tails = ["and smiled.", "in the rain.", "before night fell.", "with great joy!",
             "once again.", "for a long time;", "without a word.", "at dawn."]
    with open(path, "w", encoding="utf-8") as f:
        for i in range(sentences):
            if i % 200 == 0:
                f.write(f"_BOOK_TITLE_ Volume {i // 200 + 1}\n")
            s = [rng.choice(subjects), rng.choice(verbs), rng.choice(objects),
                 rng.choice(tails)]
            f.write(" ".join(s).capitalize() + "\n")


class Decoder(tf.keras.layers.Layer):
    """Stands in for tfa.seq2seq.BasicDecoder(cell, sampler, output_layer): an LSTM over
    the decoder inputs, projected to the vocabulary; returns (outputs, state_h, state_c)."""

    def __init__(self, rnn_units, output_layer, **kwargs):
        super().__init__(**kwargs)
        self.cell = tf.keras.layers.LSTM(rnn_units, return_sequences=True, return_state=True)
        self.output_layer = output_layer

    def call(self, inputs, initial_state=None):
        outputs, state_h, state_c = self.cell(inputs, initial_state=initial_state)
        return self.output_layer(outputs), state_h, state_c


class EncoderDecoder(tf.keras.Model):
    def __init__(self, max_features=5000, embedding_dims=200, rnn_units=512):
        super().__init__()
        self.max_features = max_features
        self.vectorize_layer = TextVectorization(max_tokens=max_features,
                                                 output_sequence_length=10)

        self.encoder_embedding = tf.keras.layers.Embedding(max_features + 1, embedding_dims)
        self.lstm_layer = tf.keras.layers.LSTM(rnn_units, return_state=True,
                                               return_sequences=True)

        self.decoder_embedding = tf.keras.layers.Embedding(max_features + 1, embedding_dims)

        projection_layer = tf.keras.layers.Dense(max_features)
        self.decoder = Decoder(rnn_units, output_layer=projection_layer)
        self.attention = tf.keras.layers.Attention()

    def _forward(self, x, y):
        inputs = self.encoder_embedding(x)
        encoder_outputs, state_h, state_c = self.lstm_layer(inputs)

        attn_output = self.attention([tf.expand_dims(state_h, 1), encoder_outputs])[:, 0]
        attn_output = tf.expand_dims(attn_output, axis=1)

        targets = self.decoder_embedding(tf.zeros_like(y))
        concat_output = tf.concat([targets, attn_output], axis=-1)

        outputs, _, _ = self.decoder(concat_output, initial_state=[state_h, state_c])
        return outputs

    def train_step(self, data):
        x, y = data[0], data[1]
        x = self.vectorize_layer(x)
        # The vectorize layer pads; labels only need the first val
        y = self.vectorize_layer(y)[:, 0:1]
        y_one_hot = tf.one_hot(y, self.max_features)

        with tf.GradientTape() as tape:
            y_pred = self._forward(x, y)
            loss = self.compiled_loss(y_one_hot, y_pred)

        trainable_variables = self.trainable_variables
        gradients = tape.gradient(loss, trainable_variables)
        self.optimizer.apply_gradients(zip(gradients, trainable_variables))

        self.compiled_metrics.update_state(y_one_hot, y_pred)
        return {m.name: m.result() for m in self.metrics}

    def predict_step(self, data, select_from_top_n=1):
        x = data
        if isinstance(x, tuple) and len(x) == 2:
            x = x[0]
        x = self.vectorize_layer(x)
        outputs = self._forward(x, tf.zeros([x.shape[0], 1], tf.int64))
        y_pred = tf.squeeze(outputs, axis=1)
        top_n = tf.math.top_k(y_pred, k=select_from_top_n).indices
        pick = np.random.randint(select_from_top_n, size=top_n.shape[0])
        indices = tf.constant(np.stack([np.arange(top_n.shape[0]), pick], axis=1))
        choices = tf.gather_nd(top_n, indices)
        vocabulary = self.vectorize_layer.get_vocabulary()
        words = [vocabulary[i].encode() for i in choices.numpy()]
        return words

    def predict(self, string_in, num_steps=50, select_from_top_n=1):
        s = tf.compat.as_bytes(string_in).split(b' ')
        for _ in range(num_steps):
            windowed = [b' '.join(s[-10:])]
            pred = self.predict_step([windowed], select_from_top_n=select_from_top_n)
            s.append(pred[0])
        return b' '.join(s)


def make_data(path):
    lines = tf.data.TextLineDataset(path)
    lines = lines.filter(lambda x: not tf.strings.regex_full_match(x, "_BOOK_TITLE_.*"))

    punctuation = PUNCTUATION

    lines = lines.map(lambda x: tf.strings.regex_replace(x, punctuation, ' '))

    words = lines.map(tf.strings.split)
    wordsets = words.unbatch().batch(11)

    def get_example_label(row):
        example = tf.strings.reduce_join(row[:-1], separator=' ')
        example = tf.expand_dims(example, axis=0)
        label = row[-1:]
        return example, label

    data = wordsets.map(get_example_label)
    data = data.shuffle(1000, seed=0)
    return lines, data


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--epochs", type=int, default=12)
    parser.add_argument("--sentences", type=int, default=1500)
    parser.add_argument("--units", type=int, default=64)
    parser.add_argument("--workdir", default=None)
    args = parser.parse_args(argv)
    workdir = args.workdir or tempfile.mkdtemp(prefix="learning_to_read_")
    path = os.path.join(workdir, "train.txt")
    write_text(path, args.sentences)
    np.random.seed(0)

    lines, data = make_data(path)
    vocab_size = 200
    model = EncoderDecoder(max_features=vocab_size, embedding_dims=32, rnn_units=args.units)
    model.vectorize_layer.adapt(lines.batch(64))
    print("vocabulary:", model.vectorize_layer.get_vocabulary()[:5], "...",
          model.vectorize_layer.get_vocabulary()[-5:])

    model.compile(loss=tf.keras.losses.CategoricalCrossentropy(from_logits=True),
                  optimizer=tf.keras.optimizers.Adam(0.01),
                  metrics=['accuracy'])
    history = model.fit(data.batch(64), epochs=args.epochs)
    losses = history.history["loss"]
    print(f"loss: first epoch {losses[0]:.3f}, last epoch {losses[-1]:.3f}")
    for start in ("the old man walked to", "a clever fox"):
        print("generated:", model.predict(start, num_steps=12).decode())
    return losses


if __name__ == "__main__":
    main()
