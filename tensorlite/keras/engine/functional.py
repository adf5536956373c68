"""Functional models: `tf.keras.Model(inputs, outputs)` replays the recorded layer calls."""
from tensorlite.framework import nest
from tensorlite.keras.engine.training import Model
from tensorlite.keras.engine_symbolic import KerasTensor
from tensorlite.keras.layers.layer import Layer, _current_training
from tensorlite.keras.saving.object_registration import serialize_layer


def _topological_nodes(outputs):
    order, seen = [], set()

    def visit(node):
        if node is None or id(node) in seen:
            return
        seen.add(id(node))
        for parent in node.parents():
            visit(parent)
        order.append(node)
    for t in outputs:
        visit(t.node)
    return order


def conform_to_reference(value, reference_shape):
    """A call's input given one dimension more or less than the model's input, where that
    dimension is the size-1 last one, reshaped to match, as tf.keras 2's functional models
    do: a 1-D feature array (N,) feeds an input of shape (None, 1)."""
    rank = getattr(reference_shape, "rank", None)
    shape = getattr(value, "shape", None)
    if rank is None or shape is None or getattr(shape, "rank", None) is None:
        return value
    from tensorlite.ops import array_ops  # noqa: PLC0415
    if shape.rank == rank - 1 and reference_shape[-1] == 1:
        return array_ops.expand_dims(value, -1)
    if shape.rank == rank + 1 and rank > 0 and shape[-1] == 1:
        return array_ops.squeeze(value, -1)
    return value


def conform_dtype(value, dtype):
    """A numeric call input cast to the model input's numeric dtype, as tf.keras 2 and
    Keras 3 functional models do: the CSV tutorial feeds a dict of pandas columns (int64
    `n_siblings_spouses`) to `tf.keras.Input(shape=(1,), dtype=tf.float32)` inputs."""
    have = getattr(value, "dtype", None)
    if have is None or dtype is None or isinstance(value, KerasTensor):
        return value
    from tensorlite.framework import dtypes  # noqa: PLC0415
    try:
        have = dtypes.as_dtype(have)
    except TypeError:
        return value
    numeric = (have.is_integer or have.is_floating or have.is_bool) and \
        (dtype.is_integer or dtype.is_floating)
    if have == dtype or not numeric:
        return value
    from tensorlite.ops import math_ops  # noqa: PLC0415
    return math_ops.cast(value, dtype)


class Functional(Model):
    def __init__(self, inputs=None, outputs=None, name=None, trainable=True, **kwargs):
        from tensorlite.keras import backend  # noqa: PLC0415
        Layer.__init__(self, name=name or backend.unique_object_name("model"),
                       trainable=trainable)
        self._init_model_state()
        self._inputs_struct, self._outputs_struct = inputs, outputs
        self.inputs = nest.flatten(inputs)
        self.outputs = nest.flatten(outputs)
        for t in self.inputs + self.outputs:
            if not isinstance(t, KerasTensor):
                raise ValueError(f"Model inputs and outputs must be tensors from tf.keras.Input "
                                 f"and layer calls on them; got {type(t).__name__}")
        self._extra_outputs = []  # AddLoss / AddMetric outputs: computed beside the outputs
        self._set_nodes()
        self.built = True

    def _set_nodes(self):
        """The layer calls the outputs and the symbolic losses and metrics need, in order."""
        nodes = _topological_nodes(self.outputs + self._extra_outputs)
        input_ids = {id(t) for t in self.inputs}
        for node in nodes:
            for t in nest.flatten([node.inputs, list(node.args), list(node.kwargs.values())]):
                if isinstance(t, KerasTensor) and t.node is None and id(t) not in input_ids:
                    raise ValueError(f"Graph disconnected: cannot obtain value for tensor {t} "
                                     f"at layer \"{node.layer.name}\". The following previous "
                                     f"layers were accessed without issue: "
                                     f"{[n.layer.name for n in nodes[:nodes.index(node)]]}")
        self._nodes = nodes
        for node in nodes:
            if all(node.layer is not t for t in self._tracked):
                self._tracked.append(node.layer)

    def add_loss(self, losses, inputs=None):
        """Symbolic tensors of the model's graph become an AddLoss layer's input (computed
        on every call); other losses are added as on any layer."""
        from tensorlite.keras.layers.graph_metrics import AddLoss  # noqa: PLC0415
        losses = list(losses) if isinstance(losses, (list, tuple)) else [losses]
        for loss in losses:
            if isinstance(loss, KerasTensor):
                self._add_extra(AddLoss()(loss))
            else:
                super().add_loss(loss)

    def add_metric(self, value, name=None, aggregation=None):
        """A symbolic tensor of the model's graph becomes an AddMetric layer's input."""
        if not isinstance(value, KerasTensor):
            return super().add_metric(value, name=name, aggregation=aggregation)
        from tensorlite.keras.layers.graph_metrics import AddMetric  # noqa: PLC0415
        self._add_extra(AddMetric(aggregation=aggregation, metric_name=name)(value))
        return None

    def _add_extra(self, tensor):
        self._extra_outputs.append(tensor)
        self._set_nodes()

    def _adopt_extra_layers(self, produced):
        """After rebuilding from a config: the AddLoss / AddMetric calls among `produced`
        (layer, outputs) pairs join the graph again."""
        from tensorlite.keras.layers.graph_metrics import AddLoss, AddMetric  # noqa: PLC0415
        for layer, out in produced:
            if isinstance(layer, (AddLoss, AddMetric)):
                self._extra_outputs.extend(nest.flatten(out))
        if self._extra_outputs:
            self._set_nodes()

    @property
    def layers(self):
        """The InputLayers of the inputs first, then every layer the graph calls, in
        order, as tf.keras lists them."""
        inputs = [t.input_layer for t in self.inputs if t.input_layer is not None]
        tracked = [t for t in self._tracked if isinstance(t, Layer)
                   and all(t is not i for i in inputs)]
        cached = self.__dict__.get("_layer_order")
        if cached is None or cached[0] != len(tracked):
            from tensorlite.keras.engine.layer_order import keras_layer_order  # noqa: PLC0415
            called = keras_layer_order(self)  # tf.keras 2's order: see layer_order.py
            seen = {id(layer) for layer in called}
            ordered = called + [t for t in tracked if id(t) not in seen]
            cached = self.__dict__["_layer_order"] = (len(tracked), ordered)
        return inputs + list(cached[1])

    @property
    def input(self):
        """The model's own Input tensor(s), as given to Model(inputs=...)."""
        return self._inputs_struct

    @property
    def output(self):
        return self._outputs_struct

    @property
    def output_names(self):
        """The output layers' names, made unique as tf.keras 2 does: a layer giving two
        outputs (an RNN over a nested cell) names them `rnn`, `rnn_1`; so each output's
        loss and metrics are its own in the logs."""
        names, counts = [], {}
        for t in self.outputs:
            base = proposal = t.node.layer.name
            while proposal in names:
                counts[base] = counts.get(base, 1)
                proposal = f"{base}_{counts[base]}"
                counts[base] += 1
            names.append(proposal)
        return names

    @property
    def input_names(self):
        return [t.name for t in self.inputs]

    def call(self, inputs, training=None, mask=None):
        values = {}
        if isinstance(self._inputs_struct, dict) and isinstance(inputs, dict):
            flat = [inputs[k] for k in sorted(self._inputs_struct)]
        elif isinstance(inputs, dict):
            flat = [inputs.get(t.name) for t in self.inputs]
            if any(v is None for v in flat):
                raise ValueError(f"Missing data for input(s) {[t.name for t, v in zip(self.inputs, flat) if v is None]}")
        else:
            flat = nest.flatten(inputs) if isinstance(inputs, (list, tuple)) else [inputs]
        if len(flat) != len(self.inputs):
            raise ValueError(f'Layer "{self.name}" expects {len(self.inputs)} input(s), but it '
                             f"received {len(flat)} input tensors.")
        for kt, v in zip(self.inputs, flat):
            values[id(kt)] = conform_to_reference(conform_dtype(v, kt.dtype), kt.shape)
        if training is None:
            training = _current_training()

        def resolve(x):
            return nest.map_structure(
                lambda t: values[id(t)] if isinstance(t, KerasTensor) else t, x)
        for node in self._nodes:
            kwargs = {k: resolve(v) for k, v in node.kwargs.items()}
            if "training" in node.layer._call_params and kwargs.get("training") is None:
                kwargs["training"] = training
            out = node.layer(resolve(node.inputs), *resolve(list(node.args)), **kwargs)
            for kt, v in zip(node.outputs, nest.flatten(out)):
                values[id(kt)] = v
        return nest.map_structure(lambda t: values[id(t)], self._outputs_struct)

    # -- serialisation -----------------------------------------------------------------------
    def get_config(self):
        layer_ids = {id(layer): i for i, layer in enumerate(self.layers)}
        refs = {}
        for i, t in enumerate(self.inputs):
            refs[id(t)] = ["input", i]
        nodes = []
        for n_idx, node in enumerate(self._nodes):
            for o_idx, t in enumerate(node.outputs):
                refs[id(t)] = ["node", n_idx, o_idx]

            def ref(x):
                return nest.map_structure(lambda t: {"ref": refs[id(t)]}
                                          if isinstance(t, KerasTensor) else t, x)
            nodes.append({"layer": layer_ids[id(node.layer)], "inputs": ref(node.inputs),
                          "args": ref(list(node.args)),
                          "kwargs": {k: ref(v) for k, v in node.kwargs.items()}})
        return {"name": self.name,
                "layers": [serialize_layer(layer) for layer in self.layers],
                "inputs": [{"shape": t.shape.as_list(), "dtype": t.dtype.name, "name": t.name}
                           for t in self.inputs],
                "input_structure": "dict" if isinstance(self._inputs_struct, dict) else
                ("list" if isinstance(self._inputs_struct, (list, tuple)) else "single"),
                "input_keys": sorted(self._inputs_struct) if isinstance(self._inputs_struct,
                                                                        dict) else None,
                "nodes": nodes,
                "outputs": [refs[id(t)] for t in self.outputs],
                "output_structure": "dict" if isinstance(self._outputs_struct, dict) else
                ("list" if isinstance(self._outputs_struct, (list, tuple)) else "single"),
                "output_keys": sorted(self._outputs_struct) if isinstance(
                    self._outputs_struct, dict) else None}

    @classmethod
    def from_config(cls, config, custom_objects=None):
        from tensorlite.keras.engine_symbolic import Input  # noqa: PLC0415
        from tensorlite.keras.saving.registry import layer_from_config  # noqa: PLC0415
        layers = [layer_from_config(c, custom_objects) for c in config["layers"]]
        inputs = [Input(batch_shape=i["shape"], dtype=i["dtype"], name=i["name"])
                  for i in config["inputs"]]
        produced = []

        def deref(x):
            if isinstance(x, dict) and set(x) == {"ref"}:
                r = x["ref"]
                return inputs[r[1]] if r[0] == "input" else \
                    nest.flatten(produced[r[1]])[r[2]]
            if isinstance(x, list):
                return [deref(v) for v in x]
            if isinstance(x, dict):
                return {k: deref(v) for k, v in x.items()}
            return x
        called = []
        for node in config["nodes"]:
            layer = layers[node["layer"]]
            out = layer(deref(node["inputs"]), *deref(node["args"]),
                        **{k: deref(v) for k, v in node["kwargs"].items()})
            produced.append(out)
            called.append((layer, out))
        outputs = [deref({"ref": r}) for r in config["outputs"]]
        structure = config["input_structure"]
        ins = dict(zip(config["input_keys"], inputs)) if structure == "dict" else \
            (inputs if structure == "list" else inputs[0])
        structure = config["output_structure"]
        outs = dict(zip(config["output_keys"], outputs)) if structure == "dict" else \
            (outputs if structure == "list" else outputs[0])
        model = cls(ins, outs, name=config["name"])
        model._adopt_extra_layers(called)
        return model
