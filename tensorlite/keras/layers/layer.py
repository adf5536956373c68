"""`tf.keras.layers.Layer`: an operation with state that builds itself on first call.

A layer creates its weights with `add_weight` inside `build(input_shape)`, which runs once,
on the first `__call__`, under the layer's name scope (so weights are named like
`dense/kernel:0`) and through `tf.Variable`, so `tf.variable_creator_scope` can substitute
them. Weights are listed in creation order, then those of sub-layers in the order they
were assigned. Regularization and `add_loss` losses are collected in `layer.losses`.

Example:
    >>> layer = tf.keras.layers.Dense(2)
    >>> y = layer(tf.ones([1, 3]))
    >>> [w.name for w in layer.weights]
    ['dense/kernel:0', 'dense/bias:0']
"""
import inspect
import re
import weakref

import numpy as np

from tensorlite.framework import dtypes, module, nest
from tensorlite.framework.convert import convert_to_tensor
from tensorlite.framework.module import Module
from tensorlite.framework.name_scope import name_scope
from tensorlite.framework.tensor import GRAPH_TENSOR_INFO, Tensor, _graph_tensor_info
from tensorlite.framework.tensor_shape import TensorShape
from tensorlite.framework.sparse_tensor import SparseTensor
from tensorlite.framework.variables import Variable
from tensorlite.keras import backend
from tensorlite.keras.layers import mask_propagation

_KWARGS = {"input_shape", "batch_input_shape", "batch_size", "input_dim", "weights",
           "activity_regularizer", "autocast", "dynamic"}


def keras_snake_case(name):
    """Keras's default layer names (its `to_snake_case`): Conv2D -> conv2d, MaxPooling2D ->
    max_pooling2d, LSTMCell -> lstm_cell; a private class gets "private" before its name."""
    s = re.sub(r"(.)([A-Z][a-z0-9]+)", r"\1_\2", name)
    s = re.sub(r"([a-z])([A-Z])", r"\1_\2", s).lower()
    return "private" + s if s.startswith("_") else s


def _regularizer(identifier):
    """A regularizer object from a name, a config dict (a loaded file's) or an object."""
    if identifier is None:
        return None
    from tensorlite.keras import regularizers  # noqa: PLC0415 - regularizers imports layers
    return regularizers.get(identifier)


def _is_trackable_weight(x):
    return isinstance(x, Variable) or getattr(x, "_is_variable", False)


def _weight_local_name(variable):
    """The name add_weight was given: `dense/kernel:0` -> `kernel`."""
    return str(variable.name).rsplit("/", 1)[-1].split(":", 1)[0]


# layer -> weak reference to the Sequential model it was added to, whose symbolic graph
# gives it an input and output (kept outside the layer, so that a layer still pickles)
SEQUENTIAL_OWNERS = weakref.WeakKeyDictionary()


class Layer(Module):
    """Base class of every Keras layer."""

    # Floating inputs are cast to the compute dtype (Keras's autocast); layers whose math
    # is floating-point (Dense, convolutions, normalization, RNNs) cast integer and bool
    # inputs too, as Keras's Dense does (uint8 images fed straight in).
    _casts_numeric_inputs = False
    # a subclass whose __init__ never calls Layer's (the serialization guide's CustomLayer,
    # which tf.keras 2 checkpoints) has no add_weight weights; its attributes still count
    _own_weights = ()

    def __init__(self, trainable=True, name=None, dtype=None, dynamic=False, **kwargs):
        unknown = set(kwargs) - _KWARGS
        if unknown:
            raise TypeError(f"Keyword argument not understood: {sorted(unknown)[0]!r} "
                            f"(layer {type(self).__name__})")
        object.__setattr__(self, "_tracked", [])  # sub-layers and variables, assignment order
        # tf.keras 2's dynamic layers: never traced; their compute_output_shape gives their
        # symbolic outputs (keras/symbolic_trace.py)
        self._dynamic = bool(dynamic)
        self._name_given = bool(name)
        if not name:  # None or "" (Keras names both after the class)
            name = backend.unique_object_name(keras_snake_case(type(self).__name__))
        super().__init__(name=name)
        self._trainable = trainable
        self._set_dtype_policy(dtype)
        self._own_weights = []  # from add_weight, creation order
        self._callable_losses = []
        self._activity_losses = []
        self._added_metrics = {}  # add_metric's Mean metrics by name
        self.built = False
        self.supports_masking = False
        self.activity_regularizer = _regularizer(kwargs.get("activity_regularizer"))
        shape = kwargs.get("batch_input_shape")
        if shape is None and kwargs.get("input_shape") is not None:
            shape = (kwargs.get("batch_size"),) + tuple(kwargs["input_shape"])
        if shape is None and kwargs.get("input_dim") is not None:
            shape = (kwargs.get("batch_size"), kwargs["input_dim"])
        self._batch_input_shape = None if shape is None else tuple(shape)
        self._initial_weights = kwargs.get("weights")
        params = inspect.signature(self.call).parameters
        self._call_params = set(params)
        # call's positional parameters after the inputs: `training` or `mask` given
        # positionally (model(x, True)) is not given again by keyword
        self._call_positional = [n for n, p in list(params.items())[1:]
                                 if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        self.input_spec = None

    @staticmethod
    def _check_name(name):
        """Keras takes any layer name without a '/' ("3_layer_mlp"); tf.Module's are
        identifiers."""
        if not isinstance(name, str) or "/" in name:
            raise ValueError(f"Argument `name` must be a string and cannot contain "
                             f"character `/`. Received: name={name!r}")

    # -- attribute tracking ----------------------------------------------------------------
    def __setattr__(self, key, value):
        tracked = self.__dict__.get("_tracked")
        if tracked is not None and not key.startswith("_"):
            for v in nest.flatten(value) if isinstance(value, (list, tuple, dict)) else [value]:
                if (isinstance(v, (Layer, Module)) or _is_trackable_weight(v)) and \
                        all(v is not t for t in tracked):
                    tracked.append(v)
        object.__setattr__(self, key, value)
        if module.CHILD_ADDED:
            module.child_added()

    # -- checkpointing ---------------------------------------------------------------------
    def _trackable_children(self):
        """Children in TensorFlow's Keras checkpoint layout: each add_weight variable by the
        name it was given (`kernel`, `bias`), then public attributes holding layers,
        modules or variables (sub-layers by attribute name, as tf.keras tracks them), then
        Keras 3's names of the same weights (keras/saving/keras3_layout.py)."""
        out, seen = [], set()
        for w in self._own_weights:
            out.append((_weight_local_name(w), w))
            seen.add(id(w))
        from tensorlite.keras.saving import keras3_layout  # noqa: PLC0415
        aliases = keras3_layout.attribute_aliases(self)
        for key, value in vars(self).items():
            # (a tf.function method's per-instance binding sits under a tuple key)
            if not isinstance(key, str) or key.startswith("_") or id(value) in seen:
                continue
            if isinstance(value, Module) or _is_trackable_weight(value) or (
                    isinstance(value, (list, tuple, dict)) and any(
                        isinstance(v, Module) or _is_trackable_weight(v)
                        for v in nest.flatten(value))):
                if key in aliases:  # tf.keras's name first: its keys, then ours too
                    out.append((aliases[key], value))
                out.append((key, value))
        for w in self._own_weights:  # Keras 3's names beside (`_kernel`): both restore
            out.extend(keras3_layout.weight_aliases(_weight_local_name(w), w))
        return out

    # -- properties ------------------------------------------------------------------------
    @property
    def name(self):
        return self._name

    def _set_dtype_policy(self, dtype):
        """`dtype`: None (the global mixed-precision policy if one is set, else floatx,
        read when asked), a dtype, or a policy (name or `mixed_precision.Policy`)."""
        from tensorlite.keras import mixed_precision  # noqa: PLC0415
        policy = None
        if dtype is None:
            if mixed_precision._GLOBAL[0] is not None:
                policy = mixed_precision._GLOBAL[0]
        else:
            policy = mixed_precision.policy_of(dtype)
        self._dtype = None if policy is None else policy.variable_dtype
        # a mixed policy only: layers with one dtype keep their plain dtype
        self._mixed_policy = policy if policy is not None and policy.mixed else None

    @property
    def dtype(self):
        """The dtype of the layer's variables (Keras's `dtype`)."""
        return self._dtype or backend.floatx()

    @property
    def compute_dtype(self):
        """The dtype the layer computes in: its inputs are cast to it."""
        policy = self._mixed_policy
        return policy.compute_dtype if policy is not None else self.dtype

    @property
    def variable_dtype(self):
        return self.dtype

    @property
    def dtype_policy(self):
        from tensorlite.keras import mixed_precision  # noqa: PLC0415
        return self._mixed_policy or mixed_precision.Policy(self.dtype)

    @property
    def _dtype_arg(self):
        """What to pass as `dtype=` to sub-layers so they share this layer's policy."""
        return self._mixed_policy or self._dtype

    @property
    def trainable(self):
        return self._trainable

    @trainable.setter
    def trainable(self, value):
        self._trainable = bool(value)
        for layer in self._sublayers():
            layer.trainable = value

    def _sublayers(self):
        return [t for t in self._tracked if isinstance(t, Layer)]

    @property
    def layers(self):
        return self._sublayers()

    @property
    def weights(self):
        return self.trainable_weights + self.non_trainable_weights

    @property
    def variables(self):
        return self.weights

    @property
    def trainable_weights(self):
        return self._collect(trainable=True)

    def _collect(self, trainable):
        """Weights in creation order, then sub-layers' and attribute-assigned ones; a frozen
        layer's weights count as non-trainable."""
        out, seen = [], set()

        def take(v, frozen):
            if id(v) not in seen and (v.trainable and not frozen) == trainable:
                seen.add(id(v))
                out.append(v)

        def walk(layer, frozen):
            frozen = frozen or not layer._trainable
            for t in list(layer._own_weights) + list(layer._tracked):
                if isinstance(t, Layer):
                    walk(t, frozen)
                elif isinstance(t, Module) and not _is_trackable_weight(t):
                    for v in t.variables:  # e.g. a substituted FactorizedVariable
                        take(v, frozen)
                else:
                    take(t, frozen)
        walk(self, False)
        return out

    @property
    def trainable_variables(self):
        return self.trainable_weights

    @property
    def non_trainable_weights(self):
        return self._collect(trainable=False)

    @property
    def non_trainable_variables(self):
        return self.non_trainable_weights

    def get_weights(self):
        return [np.array(w.numpy()) for w in self.weights]

    def set_weights(self, weights):
        params = self.weights
        if len(params) != len(weights):
            raise ValueError(f"Layer {self.name} expects {len(params)} weights, but the "
                             f"given list has {len(weights)}")
        for p, w in zip(params, weights):
            w = np.asarray(w)
            if tuple(p.shape.as_list()) != w.shape:
                raise ValueError(f"Layer {self.name} weight shape {p.shape} is not compatible "
                                 f"with provided weight shape {w.shape}")
            p.assign(w.astype(p.dtype.as_numpy_dtype))

    # -- weights and losses ----------------------------------------------------------------
    def add_variable(self, *args, **kwargs):
        """tf.keras 2's deprecated alias of `add_weight` (the serialization guide's
        `self.add_variable("kernel", shape=(64, 10))`), with its deprecation warning."""
        import warnings  # noqa: PLC0415 - only this deprecated path warns
        warnings.warn("`layer.add_variable` is deprecated and will be removed in a future "
                      "version. Please use the `layer.add_weight()` method instead.",
                      stacklevel=2)
        return self.add_weight(*args, **kwargs)

    def add_weight(self, name=None, shape=None, dtype=None, initializer=None, regularizer=None,
                   trainable=None, constraint=None, synchronization=None, aggregation=None,
                   **kwargs):
        """Creates a weight (through tf.Variable, so creator scopes apply) and tracks it."""
        from tensorlite.keras import initializers, regularizers  # noqa: PLC0415
        dtype = dtypes.as_dtype(dtype or self.variable_dtype)
        shape = tuple(TensorShape(shape or ()).as_list())
        if initializer is None:
            initializer = "glorot_uniform" if dtype.is_floating else "zeros"
        init = initializers.get(initializer)
        trainable = True if trainable is None else trainable
        with name_scope(self._scope_name):
            var = Variable(initial_value=lambda: init(shape, dtype=dtype), name=name,
                           trainable=trainable, dtype=dtype, constraint=constraint)
        if self._mixed_policy is not None and dtype.is_floating:
            var._autocast = True  # read in the compute dtype inside call (AutoCastVariable)
        self._own_weights.append(var)
        if regularizer is not None:
            reg = regularizers.get(regularizer)
            self._callable_losses.append(lambda v=var, r=reg: r(v))
        if module.CHILD_ADDED:  # a restore waiting for this weight
            module.child_added()
        return var

    def add_loss(self, losses, inputs=None):
        """Adds activity losses (tensors) or zero-argument callables."""
        for loss in losses if isinstance(losses, (list, tuple)) else [losses]:
            if callable(loss):
                self._callable_losses.append(loss)
            else:
                self._activity_losses.append(convert_to_tensor(loss))

    @property
    def losses(self):
        out = list(self._activity_losses)
        for fn in self._callable_losses:
            v = fn()
            if v is not None:
                out.append(convert_to_tensor(v))
        for layer in self._sublayers():
            out.extend(layer.losses)
        return out

    def add_metric(self, value, name=None, aggregation=None):
        """tf.keras 2's `add_metric`: `value` (a tensor computed in `call`) is averaged over
        the batches of an epoch into the metric `name`, which fit and evaluate report and
        reset as they do compiled metrics; a metric's own result (`self.add_metric(
        self.acc(y, p))`) adds that metric itself, under its own name, as tf.keras 2 does
        (a functional model also takes a symbolic tensor of its graph:
        keras/layers/graph_metrics.py)."""
        from tensorlite.keras.engine_symbolic import is_constructing, is_symbolic  # noqa: PLC0415
        from tensorlite.keras.metrics.base import Mean, metric_of_result  # noqa: PLC0415
        if aggregation not in (None, "mean"):
            raise ValueError(f"We currently only support `mean` sample-wise metric "
                             f"aggregation. You provided aggregation=`{aggregation}`")
        made_by = metric_of_result(value)
        if made_by is not None:  # `metric(y, p)`'s result: that metric, already updated
            if all(made_by is not m for m in self._added_metrics.values()):
                self._added_metrics[made_by.name] = made_by
            return
        if name is None:
            raise ValueError("Please provide a name for your metric like "
                             "`self.add_metric(tf.reduce_sum(inputs), name='mean_activation')`")
        if is_symbolic(value):
            raise ValueError(f"add_metric on layer {self.name!r} got the symbolic tensor "
                             f"{value!r}: call it inside the layer's `call`, or on a "
                             f"functional model built from that tensor's graph")
        if is_constructing():  # the trace that infers symbolic output specs: not data
            return
        metric = self._added_metrics.get(name)
        if metric is None:
            metric = self._added_metrics[name] = Mean(name=name)
        metric.update_state(value)

    @property
    def metrics(self):
        return self._layer_metrics()

    def _layer_metrics(self):
        """The metrics `add_metric` made here and in the sub-layers (not a nested model's
        compiled ones)."""
        out = list(self._added_metrics.values())
        for layer in self._sublayers():
            out.extend(layer._layer_metrics())
        return out

    @property
    def dynamic(self):
        """Whether the layer runs eagerly only (tf.keras 2's `dynamic=True`)."""
        return self.__dict__.get("_dynamic", False)

    # -- symbolic connections (the functional API) ------------------------------------------
    def _symbolic_nodes(self):
        """The calls of this layer on symbolic tensors; a layer of a Sequential model whose
        input shape is known gets its node from the model's symbolic graph, made now."""
        nodes = self.__dict__.get("_inbound_nodes")
        owner = SEQUENTIAL_OWNERS.get(self)
        if not nodes and owner is not None and owner() is not None:
            owner()._symbolic_graph()
            nodes = self.__dict__.get("_inbound_nodes")
        return nodes or []

    def _node_tensors(self, what, node_index=None):
        nodes = self._symbolic_nodes()
        if not nodes:
            raise AttributeError(f"Layer {self.name} is not connected, no {what} to return.")
        if node_index is None:
            if len(nodes) > 1:
                raise AttributeError(f"Layer {self.name} has multiple inbound nodes, hence the "
                                     f'notion of "layer {what}" is ill-defined. Use '
                                     f"`get_{what}_at(node_index)` instead.")
            node_index = 0
        if not 0 <= node_index < len(nodes):
            raise ValueError(f"Asked to get {what} at node {node_index}, but the layer has "
                             f"only {len(nodes)} inbound nodes.")
        node = nodes[node_index]
        return node.inputs if what == "input" else node.output

    @property
    def input(self):
        """The symbolic input of the layer's one call on symbolic tensors."""
        return self._node_tensors("input")

    @property
    def output(self):
        """The symbolic output of the layer's one call on symbolic tensors."""
        return self._node_tensors("output")

    def get_input_at(self, node_index):
        return self._node_tensors("input", node_index)

    def get_output_at(self, node_index):
        return self._node_tensors("output", node_index)

    @property
    def input_shape(self):
        return nest.map_structure(lambda t: tuple(t.shape.as_list()), self.input)

    @property
    def output_shape(self):
        return nest.map_structure(lambda t: tuple(t.shape.as_list()), self.output)

    # -- building and calling --------------------------------------------------------------
    def build(self, input_shape):
        self.built = True

    def call(self, inputs, *args, **kwargs):
        return inputs

    def _maybe_build(self, inputs):
        if self.built:
            return
        shape = nest.map_structure(_build_shape, inputs)
        with name_scope(self._scope_name):
            self.build(shape)
        self.built = True
        if self._initial_weights is not None:
            self.set_weights(self._initial_weights)
            self._initial_weights = None

    def _cast_inputs(self, inputs):
        target = dtypes.as_dtype(self.compute_dtype)

        def cast(x):
            if isinstance(x, SparseTensor):  # Keras casts a sparse input's values alike
                return x.with_values(cast(x.values))
            if isinstance(x, (Tensor, np.ndarray, list, float, int)) or _is_trackable_weight(x):
                t = convert_to_tensor(x) if not isinstance(x, (list, float, int)) else \
                    convert_to_tensor(x, dtype_hint=target)
                if t.dtype is not target and target.is_floating and (
                        t.dtype.is_floating or (self._casts_numeric_inputs and (
                            t.dtype.is_integer or t.dtype.is_bool))):
                    from tensorlite.ops.math_ops import cast as tcast  # noqa: PLC0415
                    t = tcast(t, target)
                return t
            return x
        if isinstance(inputs, (list, tuple)) and not isinstance(inputs, Tensor) and \
                inputs and not all(isinstance(v, (int, float)) for v in nest.flatten(inputs)):
            return type(inputs)(cast(x) if not isinstance(x, (list, tuple)) else
                                self._cast_inputs(x) for x in inputs)
        if isinstance(inputs, dict):
            return {k: cast(v) for k, v in inputs.items()}
        return cast(inputs)

    def __call__(self, *args, **kwargs):
        inputs, args = self._split_first_argument(args, kwargs)
        from tensorlite.keras.engine_symbolic import maybe_symbolic_call  # noqa: PLC0415
        symbolic = maybe_symbolic_call(self, inputs, args, kwargs)
        if symbolic is not None:
            return symbolic
        inputs = self._cast_inputs(inputs)
        self._maybe_build(inputs)
        given = self._call_positional[:len(args)] if args else ()
        if "training" not in self._call_params:
            kwargs.pop("training", None)
        elif kwargs.get("training") is None and "training" not in given:
            kwargs["training"] = _current_training()
        mask = kwargs.get("mask")
        if mask is None and "mask" not in given:
            mask = mask_propagation.input_mask(inputs)  # the previous layer's output mask
            if mask is not None and "mask" in self._call_params:
                kwargs["mask"] = mask
        if "mask" not in self._call_params:
            kwargs.pop("mask", None)
        self._activity_losses = []
        # ops run under the layer's name scope, as in Keras (graphs group them by layer)
        if self._mixed_policy is not None:
            out = self._autocast_call(inputs, args, kwargs)
        else:
            with _TrainingScope(kwargs.get("training")), name_scope(self._scope_name):
                out = self.call(inputs, *args, **kwargs)
        mask_propagation.attach(self, inputs, mask, out)
        if self.activity_regularizer is not None:
            from tensorlite.keras import regularizers  # noqa: PLC0415
            reg = regularizers.get(self.activity_regularizer)
            for o in nest.flatten(out):
                self._activity_losses.append(reg(o))
        return out

    def _split_first_argument(self, args, kwargs):
        """(inputs, other positional arguments): the first positional argument, or, in a
        call by keywords only (`mha(query=x, value=x)`), the one named as `call`'s first
        parameter, taken out of `kwargs`, as Keras does."""
        if args:
            return args[0], args[1:]
        first = self.__dict__.get("_first_call_param")
        if first is None:
            params = list(inspect.signature(self.call).parameters.values())
            first = self.__dict__["_first_call_param"] = params[0].name if params and \
                params[0].kind in (params[0].POSITIONAL_ONLY,
                                   params[0].POSITIONAL_OR_KEYWORD) else ""
        if first and first in kwargs:
            return kwargs.pop(first), ()
        raise TypeError(f"{type(self).__name__}.__call__() missing 1 required positional "
                        f"argument: '{first or 'inputs'}'")

    def _autocast_call(self, inputs, args, kwargs):
        """`call` with this layer's float weights read in its compute dtype."""
        from tensorlite.framework.variables import READ_CASTS  # noqa: PLC0415
        from tensorlite.keras.mixed_precision import autocast_reader  # noqa: PLC0415
        READ_CASTS.append(autocast_reader(self._mixed_policy.compute_dtype))
        try:
            with _TrainingScope(kwargs.get("training")), name_scope(self._scope_name):
                return self.call(inputs, *args, **kwargs)
        finally:
            READ_CASTS.pop()

    def compute_mask(self, inputs, mask=None):
        """The output mask: the input mask passed on when `supports_masking`, else None."""
        return mask if self.supports_masking else None

    def compute_output_shape(self, input_shape):
        raise NotImplementedError(f"{type(self).__name__}.compute_output_shape is not "
                                  f"implemented")

    # -- config ----------------------------------------------------------------------------
    def get_config(self):
        config = {"name": self.name, "trainable": self.trainable, "dtype": self.dtype}
        if self._mixed_policy is not None:  # as tf.keras 2 writes a policy
            config["dtype"] = {"class_name": "Policy",
                               "config": {"name": self._mixed_policy.name}}
        if self._batch_input_shape is not None:
            config["batch_input_shape"] = self._batch_input_shape
        return config

    @classmethod
    def from_config(cls, config):
        return cls(**config)

    def count_params(self):
        if not self.built:
            raise ValueError(f"You tried to call `count_params` on layer {self.name}, but the "
                             f"layer isn't built. You can build it manually via: "
                             f"`{self.name}.build(batch_input_shape)`.")
        return int(sum(np.prod(w.shape.as_list()) for w in self.weights))

    def __repr__(self):
        return f"<{type(self).__module__}.{type(self).__name__} object named {self.name!r}>"


def _build_shape(t):
    """The shape `build()` receives for an input: inside a trace (a symbolic layer call or
    a tf.function), its static shape, None where the size may vary, as Keras passes it."""
    info = _graph_tensor_info(t) if GRAPH_TENSOR_INFO and isinstance(t, Tensor) else None
    static = getattr(info, "static_shape", None)  # (a TF1 graph's tensors have none)
    return TensorShape(static if static is not None else t.shape)


class _TrainingScope:
    """Propagates `training` to sub-layers called without it (Keras's call context)."""

    def __init__(self, value):
        self.value = value

    def __enter__(self):
        _TRAINING.append(self.value)

    def __exit__(self, *exc):
        _TRAINING.pop()


_TRAINING = []


def _current_training():
    for v in reversed(_TRAINING):
        if v is not None:
            return v
    return None
