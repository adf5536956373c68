"""Recurrent layers: RNN, SimpleRNN, LSTM, GRU and their cells.

Weights follow Keras's layout: kernel [input_dim, gates * units], recurrent_kernel
[units, gates * units], bias [gates * units] (GRU with reset_after: [2, 3 * units], input
and recurrent biases), gate order i, f, c, o (LSTM) and z, r, h (GRU); they live on the
cell, so they are named `lstm/lstm_cell/kernel:0` as in Keras.

A sequence runs as: one matmul projecting the inputs of every step at once, then a Python
loop over time doing one matmul with the recurrent kernel per step. A `mask` ([batch,
steps] bool, e.g. `Embedding(mask_zero=True).compute_mask(ids)`) freezes the state and
repeats the previous output on masked steps, as Keras does.

Example:
    >>> lstm = tf.keras.layers.LSTM(8, return_sequences=True, return_state=True)
    >>> seq, h, c = lstm(tf.ones([2, 5, 3]))
    >>> seq.shape, h.shape
    (TensorShape([2, 5, 8]), TensorShape([2, 8]))
"""
from tensorlite.ops import nn_ops as nn
from tensorlite.framework import nest
from tensorlite.framework.convert import convert_to_tensor
from tensorlite.framework.name_scope import name_scope
from tensorlite.framework.tensor_shape import TensorShape
from tensorlite.keras import activations, initializers
from tensorlite.keras.layers.base_layer_utils import (check_axis_value, check_ndim,
                                                      serialize_constraint,
                                                      serialize_initializer,
                                                      serialize_regularizer, weight_args)
from tensorlite.keras.layers.layer import Layer
from tensorlite.ops import array_ops, gather_ops, math_ops
from tensorlite.ragged.ragged_tensor import RaggedTensor


# -- cells ------------------------------------------------------------------------------------
class _Cell(Layer):
    """A cell split in two so a layer can project every step's input in one matmul:
    `_project(x)` (x @ kernel + input bias, any leading dims) and `_step(xp, states, ...)`
    (the recurrence, one step). `call` is the Keras cell API: (output, new_states)."""

    _gates = 1

    def __init__(self, units, activation="tanh", use_bias=True,
                 kernel_initializer="glorot_uniform", recurrent_initializer="orthogonal",
                 bias_initializer="zeros", kernel_regularizer=None, recurrent_regularizer=None,
                 bias_regularizer=None, kernel_constraint=None, recurrent_constraint=None,
                 bias_constraint=None, dropout=0.0, recurrent_dropout=0.0, **kwargs):
        super().__init__(**kwargs)
        if not isinstance(units, int) or units <= 0:
            raise ValueError(f"Received an invalid value for argument `units`, expected a "
                             f"positive integer, got {units}.")
        self.units = units
        self.activation = activations.get(activation)
        self.use_bias = bool(use_bias)
        self.kernel_initializer, self.kernel_regularizer, self.kernel_constraint = \
            weight_args(kernel_initializer, kernel_regularizer, kernel_constraint)
        self.recurrent_initializer, self.recurrent_regularizer, self.recurrent_constraint = \
            weight_args(recurrent_initializer, recurrent_regularizer, recurrent_constraint)
        self.bias_initializer, self.bias_regularizer, self.bias_constraint = \
            weight_args(bias_initializer, bias_regularizer, bias_constraint)
        self.dropout = min(1.0, max(0.0, float(dropout)))
        self.recurrent_dropout = min(1.0, max(0.0, float(recurrent_dropout)))

    @property
    def state_size(self):
        return self.units

    @property
    def output_size(self):
        return self.units

    def _bias_shape(self):
        return (self._gates * self.units,)

    def _bias_init(self):
        return self.bias_initializer

    def build(self, input_shape):
        dim = TensorShape(input_shape).as_list()[-1]
        if dim is None:
            raise ValueError(f"The last dimension of the inputs to layer {self.name!r} should "
                             f"be defined. Found None.")
        self._input_dim = dim
        width = self._gates * self.units
        self.kernel = self.add_weight("kernel", (dim, width),
                                      initializer=self.kernel_initializer,
                                      regularizer=self.kernel_regularizer,
                                      constraint=self.kernel_constraint)
        self.recurrent_kernel = self.add_weight("recurrent_kernel", (self.units, width),
                                                initializer=self.recurrent_initializer,
                                                regularizer=self.recurrent_regularizer,
                                                constraint=self.recurrent_constraint)
        self.bias = self.add_weight("bias", self._bias_shape(), initializer=self._bias_init(),
                                    regularizer=self.bias_regularizer,
                                    constraint=self.bias_constraint) if self.use_bias else None
        self.built = True

    # -- the two halves -------------------------------------------------------------------
    def _input_bias(self):
        return self.bias

    def _project(self, x):
        """x [..., input_dim] -> [..., gates * units] with one matmul."""
        shape = x.shape.as_list()
        flat = array_ops.reshape(x, (-1, shape[-1])) if len(shape) != 2 else x
        out = math_ops.matmul(flat, self.kernel)
        bias = self._input_bias()
        if bias is not None:
            out = math_ops.add(out, bias)
        return array_ops.reshape(out, shape[:-1] + [out.shape[-1]]) if len(shape) != 2 else out

    def _prepare(self):
        """Per-sequence constants for _step (weights read once, not once per step)."""
        return {"U": convert_to_tensor(self.recurrent_kernel)}

    def _masks(self, batch, dtype, training):
        """Dropout masks for the inputs and the recurrent state, shared by every step."""
        def mask(rate, width):
            if not training or rate <= 0:
                return None
            return nn.dropout(array_ops.ones((batch, width), dtype), rate)
        return mask(self.dropout, self._input_dim), mask(self.recurrent_dropout, self.units)

    def _states_list(self, states):
        return list(states) if isinstance(states, (list, tuple)) else [states]

    def call(self, inputs, states, training=None):
        states = self._states_list(states)
        check_axis_value(self, inputs.shape, -1, self._input_dim)
        dp, rec = self._masks(inputs.shape[0], inputs.dtype, training)
        if dp is not None:
            inputs = math_ops.multiply(inputs, dp)
        return self._step(self._project(inputs), states, rec, self._prepare())

    def get_initial_state(self, inputs=None, batch_size=None, dtype=None):
        if inputs is not None:
            batch_size = inputs.shape[0]
            dtype = dtype or inputs.dtype
        sizes = self.state_size if isinstance(self.state_size, (list, tuple)) else \
            [self.state_size]
        return [array_ops.zeros((batch_size, n), dtype or self.dtype) for n in sizes]

    def get_config(self):
        return {**super().get_config(), "units": self.units,
                "activation": activations.serialize(self.activation),
                "use_bias": self.use_bias,
                "kernel_initializer": serialize_initializer(self.kernel_initializer),
                "recurrent_initializer": serialize_initializer(self.recurrent_initializer),
                "bias_initializer": serialize_initializer(self.bias_initializer),
                "kernel_regularizer": serialize_regularizer(self.kernel_regularizer),
                "recurrent_regularizer": serialize_regularizer(self.recurrent_regularizer),
                "bias_regularizer": serialize_regularizer(self.bias_regularizer),
                "kernel_constraint": serialize_constraint(self.kernel_constraint),
                "recurrent_constraint": serialize_constraint(self.recurrent_constraint),
                "bias_constraint": serialize_constraint(self.bias_constraint),
                "dropout": self.dropout, "recurrent_dropout": self.recurrent_dropout}


def _dropped(h, mask):
    return h if mask is None else math_ops.multiply(h, mask)


class SimpleRNNCell(_Cell):
    """`tf.keras.layers.SimpleRNNCell`: h = activation(x @ kernel + h @ recurrent + bias)."""

    def _step(self, xp, states, rec_mask, prep):
        h = self.activation(math_ops.add(xp, math_ops.matmul(_dropped(states[0], rec_mask),
                                                             prep["U"])))
        return h, [h]


class LSTMCell(_Cell):
    """`tf.keras.layers.LSTMCell`: gates i, f, c, o; states [h, c]."""

    _gates = 4

    def __init__(self, units, activation="tanh", recurrent_activation="sigmoid",
                 use_bias=True, kernel_initializer="glorot_uniform",
                 recurrent_initializer="orthogonal", bias_initializer="zeros",
                 unit_forget_bias=True, kernel_regularizer=None, recurrent_regularizer=None,
                 bias_regularizer=None, kernel_constraint=None, recurrent_constraint=None,
                 bias_constraint=None, dropout=0.0, recurrent_dropout=0.0, implementation=2,
                 **kwargs):
        super().__init__(units, activation, use_bias, kernel_initializer,
                         recurrent_initializer, bias_initializer, kernel_regularizer,
                         recurrent_regularizer, bias_regularizer, kernel_constraint,
                         recurrent_constraint, bias_constraint, dropout, recurrent_dropout,
                         **kwargs)
        self.recurrent_activation = activations.get(recurrent_activation)
        self.unit_forget_bias = bool(unit_forget_bias)
        self.implementation = implementation

    @property
    def state_size(self):
        return [self.units, self.units]

    def _bias_init(self):
        if not self.unit_forget_bias:
            return self.bias_initializer
        init, units = self.bias_initializer, self.units

        def forget_bias_one(shape, dtype=None, **kwargs):
            return array_ops.concat([init((units,), dtype=dtype),
                                     initializers.Ones()((units,), dtype=dtype),
                                     init((2 * units,), dtype=dtype)], axis=0)
        return forget_bias_one

    def _step(self, xp, states, rec_mask, prep):
        h_tm1, c_tm1 = states
        z = math_ops.add(xp, math_ops.matmul(_dropped(h_tm1, rec_mask), prep["U"]))
        zi, zf, zc, zo = array_ops.split(z, 4, axis=-1)
        act, gate = self.activation, self.recurrent_activation
        c = math_ops.add(math_ops.multiply(gate(zf), c_tm1), math_ops.multiply(gate(zi), act(zc)))
        h = math_ops.multiply(gate(zo), act(c))
        return h, [h, c]

    def get_config(self):
        return {**super().get_config(),
                "recurrent_activation": activations.serialize(self.recurrent_activation),
                "unit_forget_bias": self.unit_forget_bias,
                "implementation": self.implementation}


class GRUCell(_Cell):
    """`tf.keras.layers.GRUCell`: gates z, r, h; with reset_after (the default) the reset
    gate multiplies the recurrent projection (bias [2, 3 * units]), otherwise the state."""

    _gates = 3

    def __init__(self, units, activation="tanh", recurrent_activation="sigmoid",
                 use_bias=True, kernel_initializer="glorot_uniform",
                 recurrent_initializer="orthogonal", bias_initializer="zeros",
                 kernel_regularizer=None, recurrent_regularizer=None, bias_regularizer=None,
                 kernel_constraint=None, recurrent_constraint=None, bias_constraint=None,
                 dropout=0.0, recurrent_dropout=0.0, reset_after=True, implementation=2,
                 **kwargs):
        super().__init__(units, activation, use_bias, kernel_initializer,
                         recurrent_initializer, bias_initializer, kernel_regularizer,
                         recurrent_regularizer, bias_regularizer, kernel_constraint,
                         recurrent_constraint, bias_constraint, dropout, recurrent_dropout,
                         **kwargs)
        self.recurrent_activation = activations.get(recurrent_activation)
        self.reset_after = bool(reset_after)
        self.implementation = implementation

    def _bias_shape(self):
        return (2, 3 * self.units) if self.reset_after else (3 * self.units,)

    def _input_bias(self):
        if self.bias is None or not self.reset_after:
            return self.bias
        return gather_ops.gather(self.bias, 0)

    def _prepare(self):
        u = self.units
        U = convert_to_tensor(self.recurrent_kernel)
        if self.reset_after:
            rb = gather_ops.gather(self.bias, 1) if self.bias is not None else None
            return {"U": U, "rb": rb}
        uzr, uh = array_ops.split(U, [2 * u, u], axis=-1)
        return {"Uzr": uzr, "Uh": uh}

    def _step(self, xp, states, rec_mask, prep):
        h_tm1 = states[0]
        h_rec = _dropped(h_tm1, rec_mask)
        xz, xr, xh = array_ops.split(xp, 3, axis=-1)
        gate = self.recurrent_activation
        if self.reset_after:
            rec = math_ops.matmul(h_rec, prep["U"])
            if prep["rb"] is not None:
                rec = math_ops.add(rec, prep["rb"])
            rz, rr, rh = array_ops.split(rec, 3, axis=-1)
            z, r = gate(math_ops.add(xz, rz)), gate(math_ops.add(xr, rr))
            hh = self.activation(math_ops.add(xh, math_ops.multiply(r, rh)))
        else:
            rz, rr = array_ops.split(math_ops.matmul(h_rec, prep["Uzr"]), 2, axis=-1)
            z, r = gate(math_ops.add(xz, rz)), gate(math_ops.add(xr, rr))
            hh = self.activation(math_ops.add(
                xh, math_ops.matmul(math_ops.multiply(r, h_rec), prep["Uh"])))
        h = math_ops.add(math_ops.multiply(z, h_tm1),
                         math_ops.multiply(math_ops.subtract(1.0, z), hh))
        return h, [h]

    def get_config(self):
        return {**super().get_config(),
                "recurrent_activation": activations.serialize(self.recurrent_activation),
                "reset_after": self.reset_after, "implementation": self.implementation}


def _sizes(cell):
    """A cell's state sizes as a list (an int state_size is one state)."""
    s = cell.state_size
    return list(s) if isinstance(s, (list, tuple)) else [s]


def _state_shapes(state_size):
    """Each state's shape beyond the batch, flat: an int is [n], a TensorShape its dims
    (a cell's states may be matrices: tf.keras 2's NestedCell)."""
    if isinstance(state_size, (list, tuple)):
        return [shape for s in state_size for shape in _state_shapes(s)]
    if isinstance(state_size, int):
        return [(state_size,)]
    return [tuple(TensorShape(state_size).as_list())]


class StackedRNNCells(Layer):
    """`tf.keras.layers.StackedRNNCells`: at each step the cells run one after another,
    each fed the previous one's output (`RNN([cell, cell])` wraps its list so). Its states
    are every cell's states in order as one flat list (tf.keras 2 nests them per cell)."""

    def __init__(self, cells, **kwargs):
        cells = list(cells)
        for cell in cells:
            if not hasattr(cell, "call") or not hasattr(cell, "state_size"):
                raise ValueError(f"All cells must have a `call` method and a `state_size` "
                                 f"attribute. Received cells={cells}")
        if not cells:
            raise ValueError("StackedRNNCells needs at least one cell")
        super().__init__(**kwargs)
        self.cells = cells

    @property
    def state_size(self):
        return [n for cell in self.cells for n in _sizes(cell)]

    @property
    def output_size(self):
        last = self.cells[-1]
        return getattr(last, "output_size", _sizes(last)[0])

    def build(self, input_shape):
        dims = TensorShape(input_shape).as_list()
        for cell in self.cells:
            if isinstance(cell, Layer) and not cell.built:
                with name_scope(cell._scope_name):
                    cell.build(TensorShape(dims))
                cell.built = True
            dims = dims[:-1] + [getattr(cell, "output_size", _sizes(cell)[0])]
        self.built = True

    def call(self, inputs, states, training=None):
        states = list(states) if isinstance(states, (list, tuple)) else [states]
        new_states, at = [], 0
        for cell in self.cells:
            n = len(_sizes(cell))
            inputs, new = cell(inputs, states[at:at + n], training=training)
            new_states += list(new) if isinstance(new, (list, tuple)) else [new]
            at += n
        return inputs, new_states

    def get_initial_state(self, inputs=None, batch_size=None, dtype=None):
        if inputs is not None:
            batch_size, dtype = inputs.shape[0], dtype or inputs.dtype
        return [array_ops.zeros((batch_size, n), dtype or self.dtype) for n in self.state_size]

    def get_config(self):
        return {**super().get_config(), "cells": [_cell_entry(c) for c in self.cells]}

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        return cls([_cell_from_entry(c) for c in config.pop("cells")], **config)


_CELLS = {c.__name__: c for c in (SimpleRNNCell, LSTMCell, GRUCell, StackedRNNCells)}


def _cell_entry(cell):
    return {"class_name": type(cell).__name__, "config": cell.get_config()}


def _cell_from_entry(cell):
    """A cell from its saved {"class_name", "config"} (tensorlite's own cell classes)."""
    if not isinstance(cell, dict):
        return cell
    cell_cls = _CELLS.get(cell["class_name"])
    if cell_cls is None:
        raise ValueError(f"Unknown cell class {cell['class_name']!r}; build the RNN yourself "
                         f"from your cell")
    return cell_cls.from_config(cell["config"])


# -- the sequence layer -----------------------------------------------------------------------
class RNN(Layer):
    """`tf.keras.layers.RNN`: runs a cell over the time axis of [batch, steps, features]."""
    _casts_numeric_inputs = True

    def __init__(self, cell, return_sequences=False, return_state=False, go_backwards=False,
                 stateful=False, unroll=False, time_major=False, zero_output_for_mask=False,
                 **kwargs):
        super().__init__(**kwargs)
        if isinstance(cell, (list, tuple)):
            cell = StackedRNNCells(cell)
        if cell is not None and not hasattr(cell, "state_size"):
            raise ValueError(f"Argument `cell` should have a `call` method and a "
                             f"`state_size` attribute. Received: cell={cell!r}")
        if cell is not None:
            self.cell = cell
        self.return_sequences = bool(return_sequences)
        self.return_state = bool(return_state)
        self.go_backwards = bool(go_backwards)
        self.stateful = bool(stateful)
        self.unroll = bool(unroll)
        self.time_major = bool(time_major)
        self.zero_output_for_mask = bool(zero_output_for_mask)
        self.supports_masking = True
        self._carried = None  # stateful layers: the last call's final states

    def _state_sizes(self):
        return _sizes(self.cell)

    def build(self, input_shape):
        if isinstance(input_shape, tuple) and input_shape and \
                not isinstance(input_shape[0], (int, type(None))):
            return self._build_nested(input_shape)
        if isinstance(input_shape, list) and input_shape and \
                not isinstance(input_shape[0], (int, type(None))):
            input_shape = input_shape[0]  # [inputs, *initial_states]
        shape = TensorShape(input_shape)
        check_ndim(self, shape, ndim=3)
        dims = shape.as_list()
        step_shape = (dims[1], dims[2]) if self.time_major else (dims[0], dims[2])
        self._input_dim = dims[2]
        if isinstance(self.cell, Layer) and not self.cell.built:
            with name_scope(self.cell._scope_name):
                self.cell.build(TensorShape(step_shape))
            self.cell.built = True
        self.built = True

    def _build_nested(self, input_shapes):
        """Nested inputs (a tuple of sequences): the cell builds on the tuple of their
        per-step shapes."""
        steps = []
        for shape in input_shapes:
            dims = TensorShape(shape).as_list()
            steps.append(TensorShape(dims[1:] if self.time_major else dims[:1] + dims[2:]))
        if isinstance(self.cell, Layer) and not self.cell.built:
            with name_scope(self.cell._scope_name):
                self.cell.build(tuple(steps))
            self.cell.built = True
        self.built = True

    # -- call -----------------------------------------------------------------------------
    def call(self, inputs, mask=None, training=None, initial_state=None):
        if isinstance(inputs, list):  # [inputs, *initial_states], tf.keras 2's list form
            inputs, initial_state = inputs[0], list(inputs[1:]) or initial_state
        if isinstance(inputs, tuple):  # nested inputs, for a cell that takes them
            return self._call_nested(inputs, mask, training, initial_state)
        if isinstance(inputs, RaggedTensor):
            return self._call_ragged(inputs, training, initial_state)
        check_ndim(self, inputs.shape, ndim=3)
        check_axis_value(self, inputs.shape, -1, self._input_dim)
        x = array_ops.transpose(inputs, [1, 0, 2]) if self.time_major else inputs
        batch, steps = x.shape.as_list()[:2]
        states = self._initial_states(initial_state, batch, x.dtype)
        if mask is not None:
            mask = math_ops.cast(convert_to_tensor(mask), "bool")
            if mask.shape.as_list() != [batch, steps]:
                raise ValueError(f"Layer {self.name!r}: the mask must be [batch, timesteps] "
                                 f"= {[batch, steps]}, got shape {mask.shape.as_list()}")
        if self.go_backwards:
            x = array_ops.reverse(x, [1])
            mask = None if mask is None else array_ops.reverse(mask, [1])
        outputs, last, states = self._loop(x, mask, states, training)
        return self._finish(outputs, last, states)

    def _call_ragged(self, inputs, training, initial_state):
        """A ragged batch of sequences (the ragged-tensors guide's Embedding -> LSTM), as
        tf.keras 2 runs it: padded, with the padding masked so each sequence's last output
        and states are those of its own last step; `return_sequences` gives ragged
        outputs again."""
        if self.time_major:
            raise ValueError("The input received contains RaggedTensors and does not "
                             "support time_major=True")
        lengths = inputs.row_lengths()
        dense = inputs.to_tensor()
        mask = gather_ops.sequence_mask(lengths, maxlen=dense.shape.as_list()[1])
        result = self.call(dense, mask=mask, training=training, initial_state=initial_state)
        if not self.return_sequences:
            return result
        outputs = result[0] if self.return_state else result
        ragged = RaggedTensor.from_tensor(outputs, lengths=lengths)
        return [ragged] + list(result[1:]) if self.return_state else ragged

    def _call_nested(self, inputs, mask, training, initial_state):
        """tf.keras 2's nested inputs (`RNN(cell)((x1, x2))`): each step hands the cell
        the tuple of the sequences' steps; outputs and states may be nested and of any
        shape (the cell's output and state sizes). No masks here."""
        if mask is not None and any(m is not None for m in nest.flatten(mask)):
            raise NotImplementedError(f"Layer {self.name!r}: masks with nested RNN inputs")
        flat = [convert_to_tensor(x) for x in nest.flatten(inputs)]
        if self.time_major:
            flat = [array_ops.transpose(x, [1, 0] + list(range(2, x.shape.rank)))
                    for x in flat]
        batch, steps = flat[0].shape.as_list()[:2]
        states = self._initial_states(initial_state, batch, flat[0].dtype)
        if self.go_backwards:
            flat = [array_ops.reverse(x, [1]) for x in flat]
        per_step = [array_ops.unstack(x, axis=1) for x in flat]
        outputs, last = [], None
        for t in range(steps):
            xt = nest.pack_like(inputs, [p[t] for p in per_step])
            last, new = self.cell(xt, list(states), training=training)
            states = [convert_to_tensor(s) for s in nest.flatten(new)]
            if self.return_sequences:
                outputs.append(last)
        return self._finish(outputs, last, states)

    def _finish(self, outputs, last, states):
        """Carries the states (stateful), stacks the steps' outputs (each of a nested
        output apart) and returns what the layer returns."""
        if self.stateful:
            self._carried = [math_ops.stop_gradient_t(s) for s in states]
        if self.return_sequences:
            axis = 0 if self.time_major else 1
            stacked = [array_ops.stack(list(per), axis=axis)
                       for per in zip(*[nest.flatten(o) for o in outputs])]
            out = nest.pack_like(outputs[0], stacked)
        else:
            out = last
        return [out] + list(states) if self.return_state else out

    def _loop(self, x, mask, states, training):
        cell = self.cell
        fused = isinstance(cell, _Cell)
        batch, steps = x.shape.as_list()[:2]
        if fused:
            dp, rec = cell._masks(batch, x.dtype, training)
            if dp is not None:
                x = math_ops.multiply(x, array_ops.expand_dims(dp, 1))
            xs = array_ops.unstack(cell._project(x), axis=1)
            prep = cell._prepare()
        else:
            xs = array_ops.unstack(x, axis=1)
        ms = array_ops.unstack(array_ops.expand_dims(mask, -1), axis=1) if mask is not None \
            else [None] * steps
        outputs, last = [], None
        for xt, mt in zip(xs, ms):
            if fused:
                out, new = cell._step(xt, states, rec, prep)
            else:
                out, new = cell(xt, states, training=training)
                new = list(new) if isinstance(new, (list, tuple)) else [new]
            if mt is not None:
                new = [math_ops.where(mt, n, s) for n, s in zip(new, states)]
                prev = last if last is not None else math_ops.zeros_like_t(out)
                last = math_ops.where(mt, out, prev)
                out = math_ops.where(mt, out, math_ops.zeros_like_t(out)) \
                    if self.zero_output_for_mask else last
            else:
                last = out
            states = new
            if self.return_sequences:
                outputs.append(out)
        return outputs, last, states

    def _initial_states(self, initial_state, batch, dtype):
        shapes = _state_shapes(self.cell.state_size)
        if initial_state is None:
            if self.stateful and self._carried is not None:
                if self._carried[0].shape[0] != batch:
                    raise ValueError(f"Stateful layer {self.name!r} carries states for a batch "
                                     f"of {self._carried[0].shape[0]}, but received a batch of "
                                     f"{batch}; call reset_states() first")
                return list(self._carried)
            return [array_ops.zeros((batch,) + shape, dtype) for shape in shapes]
        given = nest.flatten(initial_state)
        if len(given) != len(shapes):
            raise ValueError(f"Layer {self.name} expects {len(shapes)} state(s), but it "
                             f"received {len(given)} initial state(s). Input received: "
                             f"{initial_state}")
        out = []
        for s, shape in zip(given, shapes):
            s = math_ops.cast(convert_to_tensor(s), dtype)
            if s.shape.as_list() != [batch, *shape]:
                raise ValueError(f"Layer {self.name}: an initial state has shape "
                                 f"{s.shape.as_list()}, but the cell's state_size requires "
                                 f"{[batch, *shape]} ([batch, units])")
            out.append(s)
        return out

    # -- state and shapes -----------------------------------------------------------------
    @property
    def states(self):
        if self._carried is None:
            return [None] * len(self._state_sizes())
        return list(self._carried)

    def reset_states(self, states=None):
        """Stateful layers: the carried states back to zeros (of the batch size they had;
        before any call, none), or set to `states`."""
        if not self.stateful:
            raise AttributeError(f"Layer {self.name!r} must be stateful to reset its states")
        if states is None:
            self._carried = None if self._carried is None else [
                array_ops.zeros_like(s) for s in self._carried]
            return
        self._carried = [convert_to_tensor(s) for s in (
            states if isinstance(states, (list, tuple)) else [states])]

    def compute_output_shape(self, input_shape):
        s = TensorShape(input_shape).as_list()
        units = self.cell.output_size
        batch, steps = (s[1], s[0]) if self.time_major else (s[0], s[1])
        if self.return_sequences:
            out = TensorShape([steps, batch, units] if self.time_major else [batch, steps, units])
        else:
            out = TensorShape([batch, units])
        if self.return_state:
            return [out] + [TensorShape([batch, n]) for n in self._state_sizes()]
        return out

    def compute_mask(self, inputs, mask=None):
        if isinstance(mask, (list, tuple)):
            mask = mask[0]
        out = mask if self.return_sequences else None
        return [out] + [None] * len(self._state_sizes()) if self.return_state else out

    def _rnn_config(self):
        config = {"return_sequences": self.return_sequences,
                  "return_state": self.return_state, "go_backwards": self.go_backwards,
                  "stateful": self.stateful, "unroll": self.unroll,
                  "time_major": self.time_major}
        if self.zero_output_for_mask:
            config["zero_output_for_mask"] = True
        return config

    def get_config(self):
        return {**super().get_config(), **self._rnn_config(), "cell": _cell_entry(self.cell)}

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        return cls(_cell_from_entry(config.pop("cell")), **config)


class _CellLayer(RNN):
    """An RNN that owns its cell, made from the layer's own arguments (LSTM, GRU, ...)."""

    _cell_class = None
    _cell_name = None

    def __init__(self, cell_kwargs, rnn_kwargs, **kwargs):
        super().__init__(None, **rnn_kwargs, **kwargs)
        with name_scope(self._scope_name):  # weights become lstm/lstm_cell/kernel:0
            self.cell = self._cell_class(name=self._cell_name, dtype=self._dtype_arg,
                                         trainable=self.trainable, **cell_kwargs)

    def __getattr__(self, key):
        # Keras exposes the cell's arguments and weights on the layer (lstm.units, ...)
        if key.startswith("_") or "cell" not in self.__dict__:
            raise AttributeError(key)
        return getattr(self.__dict__["cell"], key)

    def get_config(self):
        config = {k: v for k, v in self.cell.get_config().items()
                  if k not in ("name", "trainable", "dtype")}
        base = Layer.get_config(self)
        return {**base, **config, **self._rnn_config(),
                "activity_regularizer": serialize_regularizer(self.activity_regularizer)}

    @classmethod
    def from_config(cls, config):
        return cls(**config)


def _split_kwargs(local, rnn_keys=("return_sequences", "return_state", "go_backwards",
                                   "stateful", "unroll", "time_major")):
    local = {k: v for k, v in local.items() if k not in ("self", "__class__", "kwargs")}
    rnn = {k: local.pop(k) for k in rnn_keys}
    return local, rnn


class SimpleRNN(_CellLayer):
    """`tf.keras.layers.SimpleRNN`: a fully connected recurrence, output = state."""

    _cell_class, _cell_name = SimpleRNNCell, "simple_rnn_cell"

    def __init__(self, units, activation="tanh", use_bias=True,
                 kernel_initializer="glorot_uniform", recurrent_initializer="orthogonal",
                 bias_initializer="zeros", kernel_regularizer=None, recurrent_regularizer=None,
                 bias_regularizer=None, activity_regularizer=None, kernel_constraint=None,
                 recurrent_constraint=None, bias_constraint=None, dropout=0.0,
                 recurrent_dropout=0.0, return_sequences=False, return_state=False,
                 go_backwards=False, stateful=False, unroll=False, time_major=False,
                 **kwargs):
        args = dict(locals())
        args.pop("activity_regularizer")
        cell, rnn = _split_kwargs(args)
        super().__init__(cell, rnn, activity_regularizer=activity_regularizer, **kwargs)


class LSTM(_CellLayer):
    """`tf.keras.layers.LSTM`: long short-term memory over [batch, steps, features];
    returns the last output, or every step's (return_sequences), plus [h, c]
    (return_state)."""

    _cell_class, _cell_name = LSTMCell, "lstm_cell"

    def __init__(self, units, activation="tanh", recurrent_activation="sigmoid",
                 use_bias=True, kernel_initializer="glorot_uniform",
                 recurrent_initializer="orthogonal", bias_initializer="zeros",
                 unit_forget_bias=True, kernel_regularizer=None, recurrent_regularizer=None,
                 bias_regularizer=None, activity_regularizer=None, kernel_constraint=None,
                 recurrent_constraint=None, bias_constraint=None, dropout=0.0,
                 recurrent_dropout=0.0, implementation=2, return_sequences=False,
                 return_state=False, go_backwards=False, stateful=False, time_major=False,
                 unroll=False, **kwargs):
        args = dict(locals())
        args.pop("activity_regularizer")
        cell, rnn = _split_kwargs(args)
        super().__init__(cell, rnn, activity_regularizer=activity_regularizer, **kwargs)


class GRU(_CellLayer):
    """`tf.keras.layers.GRU`: gated recurrent unit; reset_after=True is TF 2's default
    (the cuDNN-compatible variant, bias [2, 3 * units])."""

    _cell_class, _cell_name = GRUCell, "gru_cell"

    def __init__(self, units, activation="tanh", recurrent_activation="sigmoid",
                 use_bias=True, kernel_initializer="glorot_uniform",
                 recurrent_initializer="orthogonal", bias_initializer="zeros",
                 kernel_regularizer=None, recurrent_regularizer=None, bias_regularizer=None,
                 activity_regularizer=None, kernel_constraint=None, recurrent_constraint=None,
                 bias_constraint=None, dropout=0.0, recurrent_dropout=0.0, implementation=2,
                 return_sequences=False, return_state=False, go_backwards=False,
                 stateful=False, unroll=False, time_major=False, reset_after=True, **kwargs):
        args = dict(locals())
        args.pop("activity_regularizer")
        cell, rnn = _split_kwargs(args)
        super().__init__(cell, rnn, activity_regularizer=activity_regularizer, **kwargs)
