"""LSTM, GRU and SimpleRNN against NumPy step loops using the same weights."""
import numpy as np
import pytest

import tensorlite as tf
from tensorlite.keras.layers.embedding import Embedding
from tensorlite.keras.layers.recurrent import (GRU, LSTM, RNN, GRUCell, LSTMCell, SimpleRNN,
                                               SimpleRNNCell)
from tests.op_check import check_op, rand
from tests.test_keras_layers import check_layer, random_weights, substituted

F64 = {"dtype": "float64"}
W3 = ["cell.kernel", "cell.recurrent_kernel", "cell.bias"]


def sig(v):
    return 1 / (1 + np.exp(-v))


def lstm_step(xt, states, W, U, b):
    h, c = states
    i, f, g, o = np.split(xt @ W + h @ U + b, 4, axis=-1)
    c = sig(f) * c + sig(i) * np.tanh(g)
    h = sig(o) * np.tanh(c)
    return h, [h, c]


def gru_step(xt, states, W, U, b, reset_after=True):
    (h,) = states
    u = U.shape[0]
    if reset_after:
        xz, xr, xh = np.split(xt @ W + b[0], 3, axis=-1)
        rz, rr, rh = np.split(h @ U + b[1], 3, axis=-1)
        z, r = sig(xz + rz), sig(xr + rr)
        hh = np.tanh(xh + r * rh)
    else:
        xz, xr, xh = np.split(xt @ W + b, 3, axis=-1)
        z = sig(xz + h @ U[:, :u])
        r = sig(xr + h @ U[:, u:2 * u])
        hh = np.tanh(xh + (r * h) @ U[:, 2 * u:])
    h = z * h + (1 - z) * hh
    return h, [h]


def rnn_step(xt, states, W, U, b):
    h = np.tanh(xt @ W + states[0] @ U + b)
    return h, [h]


def np_rnn(step, x, weights, states, go_backwards=False, mask=None):
    """Keras's loop: masked steps keep the state and repeat the previous output."""
    steps = range(x.shape[1])
    outs, prev = [], np.zeros_like(states[0])
    for t in (reversed(steps) if go_backwards else steps):
        out, new = step(x[:, t], states, *weights)
        if mask is not None:
            m = mask[:, t, None]
            new = [np.where(m, n, s) for n, s in zip(new, states)]
            out = np.where(m, out, prev)
        states, prev = new, out
        outs.append(out)
    return np.stack(outs, 1), prev, states


def zeros_states(n, batch, units):
    return [np.zeros((batch, units)) for _ in range(n)]


# -- values and gradients ---------------------------------------------------------------------
CASES = [
    (LSTM, lstm_step, 2, {}), (LSTM, lstm_step, 2, dict(go_backwards=True)),
    (GRU, gru_step, 1, {}), (GRU, lambda *a: gru_step(*a, reset_after=False), 1,
                             dict(reset_after=False)),
    (SimpleRNN, rnn_step, 1, {}), (GRU, gru_step, 1, dict(go_backwards=True)),
]


@pytest.mark.parametrize("cls,step,n_states,kw", CASES, ids=str)
@pytest.mark.parametrize("return_sequences", [True, False])
def test_rnn_layers_match_numpy_step_loop(cls, step, n_states, kw, return_sequences):
    units = 3
    layer = cls(units, return_sequences=return_sequences, **kw, **F64)
    x = rand(2, 4, 2)

    def ref(x, W, U, b):
        seq, last, _ = np_rnn(step, x, (W, U, b), zeros_states(n_states, 2, units),
                              go_backwards=kw.get("go_backwards", False))
        return seq if return_sequences else last
    check_layer(layer, ref, x, W3, scale=0.5, order=2 if cls is SimpleRNN else 1)


def _concat_outputs(outs):
    return tf.concat([tf.reshape(o, [-1]) for o in outs], axis=0)


@pytest.mark.parametrize("cls,step,n_states", [(LSTM, lstm_step, 2), (GRU, gru_step, 1)])
def test_return_state_and_initial_state(cls, step, n_states):
    units = 3
    layer = cls(units, return_sequences=True, return_state=True, **F64)
    x = rand(2, 5, 4)
    outs = layer(tf.constant(x))
    assert len(outs) == 1 + n_states
    assert [o.shape.as_list() for o in outs] == [[2, 5, 3]] + [[2, 3]] * n_states
    weights = random_weights(layer, W3, scale=0.5)
    init = [rand(2, units, seed=20 + i) for i in range(n_states)]

    def fn(x, *args):
        ws, states = args[:3], list(args[3:])
        with substituted(layer, W3, ws):
            return _concat_outputs(layer(x, initial_state=states))

    def ref(x, *args):
        seq, _, states = np_rnn(step, x, args[:3], list(args[3:]))
        return np.concatenate([seq.ravel()] + [s.ravel() for s in states])
    check_op(fn, ref, [x, *weights, *init], order=1)
    # the [inputs, *states] calling convention is the same call
    a = layer([tf.constant(x)] + [tf.constant(s) for s in init])
    b = layer(tf.constant(x), initial_state=[tf.constant(s) for s in init])
    for u, v in zip(a, b):
        np.testing.assert_allclose(u.numpy(), v.numpy())


@pytest.mark.parametrize("cls,step,n_states", [(LSTM, lstm_step, 2), (GRU, gru_step, 1)])
@pytest.mark.parametrize("go_backwards", [False, True])
def test_masking_keeps_state_and_repeats_output(cls, step, n_states, go_backwards):
    mask = np.array([[True, True, False, True, False], [False, True, True, True, True]])
    layer = cls(3, return_sequences=True, go_backwards=go_backwards, **F64)
    x = rand(2, 5, 2)

    def ref(x, W, U, b):
        return np_rnn(step, x, (W, U, b), zeros_states(n_states, 2, 3),
                      go_backwards=go_backwards, mask=mask)[0]
    check_layer(layer, ref, x, W3, scale=0.5, call_kwargs={"mask": tf.constant(mask)})
    last = cls(3, go_backwards=go_backwards, **F64)
    last.build(tf.TensorShape([2, 5, 2]))
    last.set_weights(layer.get_weights())
    got = last(tf.constant(x), mask=tf.constant(mask)).numpy()
    want = np_rnn(step, x, [w.numpy() for w in layer.weights], zeros_states(n_states, 2, 3),
                  go_backwards=go_backwards, mask=mask)[1]
    np.testing.assert_allclose(got, want, rtol=1e-10)


def test_embedding_mask_zero_feeds_lstm_mask():
    emb = Embedding(6, 2, mask_zero=True, **F64)
    lstm = LSTM(3, **F64)
    ids = tf.constant([[4, 2, 0, 0], [1, 3, 5, 0]])
    padded = lstm(emb(ids), mask=emb.compute_mask(ids)).numpy()
    short = lstm(emb(tf.constant([[4, 2]]))).numpy()
    np.testing.assert_allclose(padded[0], short[0], rtol=1e-10)


def test_time_major_and_rnn_wrapper_match_lstm():
    lstm = LSTM(3, return_sequences=True, **F64)
    x = rand(2, 4, 2)
    want = lstm(tf.constant(x)).numpy()
    tm = LSTM(3, return_sequences=True, time_major=True, **F64)
    tm(tf.constant(x.transpose(1, 0, 2)))
    tm.set_weights(lstm.get_weights())
    np.testing.assert_allclose(tm(tf.constant(x.transpose(1, 0, 2))).numpy(),
                               want.transpose(1, 0, 2), rtol=1e-10)
    wrapped = RNN(LSTMCell(3, **F64), return_sequences=True, **F64)
    wrapped(tf.constant(x))
    wrapped.set_weights(lstm.get_weights())
    np.testing.assert_allclose(wrapped(tf.constant(x)).numpy(), want, rtol=1e-10)


class UserCell(tf.keras.layers.Layer):
    """A cell the RNN layer only knows through call/state_size (the generic path)."""

    state_size = 2

    def build(self, input_shape):
        self.w = self.add_weight("w", (input_shape[-1], 2), dtype="float64")

    def call(self, x, states):
        h = tf.tanh(tf.matmul(x, self.w) + states[0])
        return h, [h]


def test_rnn_with_a_user_cell():
    cell = UserCell(dtype="float64")
    layer = RNN(cell, return_sequences=True, **F64)
    x = rand(2, 3, 4)
    layer(tf.constant(x))
    w = cell.w.numpy()

    def step(xt, states):
        h = np.tanh(xt @ w + states[0])
        return h, [h]
    np.testing.assert_allclose(layer(tf.constant(x)).numpy(),
                               np_rnn(step, x, (), [np.zeros((2, 2))])[0], rtol=1e-10)


@pytest.mark.parametrize("cell_cls,step,n", [(LSTMCell, lstm_step, 2), (GRUCell, gru_step, 1),
                                             (SimpleRNNCell, rnn_step, 1)])
def test_cells_take_one_step(cell_cls, step, n):
    cell = cell_cls(3, **F64)
    x = rand(2, 4)
    states = [rand(2, 3, seed=5 + i) for i in range(n)]
    cell(tf.constant(x), [tf.constant(s) for s in states])
    weights = random_weights(cell, ["kernel", "recurrent_kernel", "bias"], scale=0.5)

    def fn(x, W, U, b, *s):
        with substituted(cell, ["kernel", "recurrent_kernel", "bias"], (W, U, b)):
            out, new = cell(x, list(s))
        return _concat_outputs([out] + new)

    def ref(x, W, U, b, *s):
        out, new = step(x, list(s), W, U, b)
        return np.concatenate([out.ravel()] + [v.ravel() for v in new])
    check_op(fn, ref, [x, *weights, *states], order=2)
    assert [t.shape.as_list() for t in cell.get_initial_state(batch_size=2, dtype="float64")] \
        == [[2, 3]] * n


# -- weights and Keras layout -----------------------------------------------------------------
def test_weight_layout_names_and_unit_forget_bias():
    lstm = LSTM(4)
    lstm(tf.ones([1, 2, 3]))
    assert [w.name for w in lstm.weights] == [f"{lstm.name}/lstm_cell/kernel:0",
                                              f"{lstm.name}/lstm_cell/recurrent_kernel:0",
                                              f"{lstm.name}/lstm_cell/bias:0"]
    assert [w.shape.as_list() for w in lstm.weights] == [[3, 16], [4, 16], [16]]
    np.testing.assert_array_equal(lstm.cell.bias.numpy(), [0] * 4 + [1] * 4 + [0] * 8)
    no_fb = LSTM(2, unit_forget_bias=False)
    no_fb(tf.ones([1, 2, 3]))
    np.testing.assert_array_equal(no_fb.cell.bias.numpy(), np.zeros(8))
    rk = lstm.cell.recurrent_kernel.numpy()  # orthogonal initializer: orthonormal rows
    np.testing.assert_allclose(rk @ rk.T, np.eye(4), atol=1e-5)
    gru = GRU(4)
    gru(tf.ones([1, 2, 3]))
    assert [w.shape.as_list() for w in gru.weights] == [[3, 12], [4, 12], [2, 12]]
    gru_v1 = GRU(4, reset_after=False)
    gru_v1(tf.ones([1, 2, 3]))
    assert gru_v1.cell.bias.shape.as_list() == [12]
    assert lstm.units == 4 and gru.reset_after is True  # cell arguments seen on the layer


def test_dropout_only_in_training():
    layer = LSTM(4, dropout=0.5, recurrent_dropout=0.5, return_sequences=True, **F64)
    x = tf.constant(rand(3, 5, 2))
    a, b = layer(x).numpy(), layer(x, training=False).numpy()
    np.testing.assert_array_equal(a, b)
    c = layer(x, training=True).numpy()
    assert not np.allclose(a, c)
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(layer(x, training=True))
    grads = tape.gradient(loss, layer.trainable_variables)
    assert all(g is not None for g in grads)


def test_stateful_carries_state_between_calls():
    layer = GRU(3, stateful=True, **F64)
    x = rand(2, 6, 2)
    layer(tf.constant(x[:, :3]))
    second = layer(tf.constant(x[:, 3:])).numpy()
    full = GRU(3, **F64)
    full(tf.constant(x))
    full.set_weights(layer.get_weights())
    np.testing.assert_allclose(second, full(tf.constant(x)).numpy(), rtol=1e-10)
    with pytest.raises(ValueError, match="carries states for a batch of 2"):
        layer(tf.constant(x[:1]))
    layer.reset_states()
    np.testing.assert_allclose(layer(tf.constant(x[:, 3:])).numpy(),
                               full(tf.constant(x[:, 3:])).numpy(), rtol=1e-10)


def test_rnn_errors_name_the_layer():
    layer = LSTM(3, name="seq_model")
    with pytest.raises(ValueError, match='"seq_model".*expected ndim=3, found ndim=2'):
        layer(tf.ones([2, 3]))
    layer(tf.ones([2, 4, 5]))
    with pytest.raises(ValueError, match="seq_model expects 2 state"):
        layer(tf.ones([2, 4, 5]), initial_state=[tf.zeros([2, 3])])
    with pytest.raises(ValueError, match="seq_model.*initial state has shape"):
        layer(tf.ones([2, 4, 5]), initial_state=[tf.zeros([2, 4]), tf.zeros([2, 4])])
    with pytest.raises(ValueError, match='"seq_model".*axis -1'):
        layer(tf.ones([2, 4, 6]))
    with pytest.raises(ValueError, match="seq_model.*mask"):
        layer(tf.ones([2, 4, 5]), mask=tf.ones([2, 3], dtype=tf.bool))
    with pytest.raises(ValueError, match="units"):
        GRU(0)


def test_rnn_over_a_list_of_cells_stacks_them_per_step(tmp_path):
    """`RNN([LSTMCell, GRUCell])`: at each step the GRU cell takes the LSTM cell's output;
    states come back as one flat list [h1, c1, h2]."""
    from tensorlite.keras.layers.recurrent import StackedRNNCells
    x = np.random.default_rng(3).standard_normal((2, 5, 3)).astype(np.float32)
    rnn = RNN([LSTMCell(4), GRUCell(3)], return_sequences=True, return_state=True)
    seq, h1, c1, h2 = rnn(x)
    assert isinstance(rnn.cell, StackedRNNCells)
    (W1, U1, b1), (W2, U2, b2) = [[w.numpy() for w in cell.weights] for cell in rnn.cell.cells]
    states, outs = [np.zeros((2, 4)), np.zeros((2, 4)), np.zeros((2, 3))], []
    for t in range(5):
        o1, s1 = lstm_step(x[:, t], states[:2], W1, U1, b1)
        o2, s2 = gru_step(o1, states[2:], W2, U2, b2)
        states = s1 + s2
        outs.append(o2)
    np.testing.assert_allclose(seq.numpy(), np.stack(outs, 1), rtol=1e-5, atol=1e-6)
    for got, want in zip([h1, c1, h2], states):
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-5, atol=1e-6)
    # initial states are the flat list too; the stack saves and reloads with its cells
    init = [np.ones((2, 4), np.float32), np.zeros((2, 4), np.float32), np.ones((2, 3), np.float32)]
    inputs = tf.keras.Input((5, 3))
    model = tf.keras.Model(inputs, RNN([LSTMCell(4), GRUCell(3)])(inputs))
    model.save(str(tmp_path / "stacked.keras"))
    loaded = tf.keras.models.load_model(str(tmp_path / "stacked.keras"))
    np.testing.assert_allclose(loaded(x).numpy(), model(x).numpy(), rtol=1e-6)
    assert rnn(x, initial_state=init)[0].shape == (2, 5, 3)
    with pytest.raises(ValueError, match="expects 3 state"):
        rnn(x, initial_state=init[:2])
    with pytest.raises(ValueError, match="`state_size`"):
        StackedRNNCells([LSTMCell(2), "not a cell"])


class NestedCell(tf.keras.layers.Layer):
    """tf.keras 2's RNN guide cell: two inputs per step, a vector and a matrix state."""

    def __init__(self, unit_1, unit_2, unit_3, **kwargs):
        self.unit_1, self.unit_2, self.unit_3 = unit_1, unit_2, unit_3
        self.state_size = [tf.TensorShape([unit_1]), tf.TensorShape([unit_2, unit_3])]
        self.output_size = [tf.TensorShape([unit_1]), tf.TensorShape([unit_2, unit_3])]
        super().__init__(**kwargs)

    def build(self, input_shapes):
        i1, i2, i3 = input_shapes[0][1], input_shapes[1][1], input_shapes[1][2]
        self.kernel_1 = self.add_weight(shape=(i1, self.unit_1), initializer="uniform",
                                        name="kernel_1")
        self.kernel_2_3 = self.add_weight(shape=(i2, i3, self.unit_2, self.unit_3),
                                          initializer="uniform", name="kernel_2_3")

    def call(self, inputs, states):
        input_1, input_2 = tf.nest.flatten(inputs)
        s1, s2 = states
        output_1 = tf.matmul(input_1, self.kernel_1)
        output_2_3 = tf.einsum("bij,ijkl->bkl", input_2, self.kernel_2_3)
        return (output_1, output_2_3), (s1 + output_1, s2 + output_2_3)


def test_nested_inputs_and_matrix_states_run_step_by_step():
    """`RNN(cell)((x1, x2))`: a tuple is nested inputs (a list is [inputs, *states])."""
    rng = np.random.default_rng(5)
    x1 = rng.random((4, 6, 3)).astype(np.float32)
    x2 = rng.random((4, 6, 2, 5)).astype(np.float32)
    rnn = RNN(NestedCell(7, 2, 3), return_sequences=True, return_state=True)
    (seq1, seq2), s1, s2 = rnn((x1, x2))
    k1, k23 = rnn.cell.kernel_1.numpy(), rnn.cell.kernel_2_3.numpy()
    o1 = np.einsum("bti,iu->btu", x1, k1)
    o23 = np.einsum("btij,ijkl->btkl", x2, k23)
    close = {"rtol": 1e-5, "atol": 1e-6}  # float32 sums of products near 0
    np.testing.assert_allclose(seq1.numpy(), o1, **close)
    np.testing.assert_allclose(seq2.numpy(), o23, **close)
    np.testing.assert_allclose(s1.numpy(), o1.sum(1), **close)  # the states sum the steps
    np.testing.assert_allclose(s2.numpy(), o23.sum(1), **close)
    in1, in2 = tf.keras.Input((None, 3)), tf.keras.Input((None, 2, 5))
    model = tf.keras.Model([in1, in2], RNN(NestedCell(7, 2, 3))((in1, in2)))
    assert [t.shape.as_list() for t in model.outputs] == [[None, 7], [None, 2, 3]]
    model.compile(optimizer="adam", loss="mse")
    model.fit([x1, x2], [o1[:, -1], o23[:, -1]], verbose=0)


def test_reset_states_zeroes_a_stateful_layers_states():
    x = np.random.default_rng(6).random((3, 4, 5)).astype(np.float32)
    layer = LSTM(2, stateful=True)
    assert layer.states == [None, None]  # before any call
    layer(x)
    layer.reset_states()
    h, c = layer.states
    assert h.shape == (3, 2) and not h.numpy().any() and not c.numpy().any()
    np.testing.assert_allclose(LSTM(2)(x, initial_state=layer.states).shape, (3, 2))


def test_fit_on_ragged_word_ids_as_the_ragged_tensors_guide():
    """The ragged-tensors guide's Keras model: Input(ragged=True) -> Embedding -> LSTM, fit
    on a RaggedTensor of hashed words (fit used to take it for a dataset); the LSTM's last
    output of each sentence is that of its own last word (as on the padded batch with
    its mask)."""
    sentences = tf.constant(["What makes you think she is a witch?",
                             "She turned me into a newt.", "A newt?", "Well, I got better."])
    is_question = tf.constant([True, False, True, False])
    hashed_words = tf.strings.to_hash_bucket_fast(tf.strings.split(sentences, " "), 1000)
    model = tf.keras.Sequential([
        tf.keras.layers.Input(shape=[None], dtype=tf.int64, ragged=True),
        tf.keras.layers.Embedding(1000, 16), tf.keras.layers.LSTM(32, use_bias=False),
        tf.keras.layers.Dense(32), tf.keras.layers.Activation(tf.nn.relu),
        tf.keras.layers.Dense(1)])
    model.compile(loss="binary_crossentropy", optimizer="rmsprop")
    history = model.fit(hashed_words, is_question, epochs=2, batch_size=3, verbose=0)
    assert len(history.history["loss"]) == 2
    ragged_out = model.predict(hashed_words, verbose=0)
    padded = hashed_words.to_tensor()
    lengths = hashed_words.row_lengths().numpy()
    embedded = model.layers[0](padded)
    mask = tf.sequence_mask(lengths, padded.shape[1])
    last = model.layers[1](embedded, mask=mask)
    for layer in model.layers[2:]:
        last = layer(last)
    np.testing.assert_allclose(ragged_out, last.numpy(), rtol=1e-5, atol=1e-6)


def test_lstm_on_ragged_input_returns_ragged_sequences():
    rt = tf.ragged.constant([[[1.0], [2.0]], [[3.0]], [[4.0], [5.0], [6.0]]], ragged_rank=1)
    out = tf.keras.layers.LSTM(2, return_sequences=True)(rt)
    assert isinstance(out, tf.RaggedTensor)
    assert out.row_lengths().numpy().tolist() == [2, 1, 3]
    with pytest.raises(ValueError, match="time_major"):
        tf.keras.layers.LSTM(2, time_major=True)(rt)


def test_fit_on_a_sparse_tensor_batches_its_rows():
    rng = np.random.RandomState(0)
    dense = (rng.rand(10, 6) > 0.6).astype("float32") * rng.rand(10, 6).astype("float32")
    sparse = tf.sparse.from_dense(dense)
    y = rng.rand(10, 1).astype("float32")
    model = tf.keras.Sequential([tf.keras.layers.Input((6,), sparse=True),
                                 tf.keras.layers.Dense(1)])
    model.compile(optimizer="sgd", loss="mse")
    model.fit(sparse, y, batch_size=4, epochs=1, verbose=0)
    np.testing.assert_allclose(model.predict(sparse, batch_size=3, verbose=0),
                               model.predict(dense, verbose=0), rtol=1e-5, atol=1e-6)
