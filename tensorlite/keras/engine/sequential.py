"""`tf.keras.Sequential`: a linear stack of layers."""
import weakref

from tensorlite.framework.tensor_shape import TensorShape
from tensorlite.keras.engine.training import Model
from tensorlite.keras.engine_symbolic import Input, KerasTensor
from tensorlite.keras.layers.core import InputLayer
from tensorlite.keras.layers.layer import SEQUENTIAL_OWNERS, Layer
from tensorlite.keras.saving.object_registration import serialize_layer


class Sequential(Model):
    def __init__(self, layers=None, name=None):
        super().__init__(name=name)
        self._input_batch_shape = None
        self._input_dtype = None  # the probe's dtype when the input is not floating
        for layer in layers or []:
            self.add(layer)

    @property
    def layers(self):
        return [t for t in self._tracked if isinstance(t, Layer) and
                not isinstance(t, InputLayer)]

    def add(self, layer):
        """Appends a layer (or an Input tensor fixing the input shape)."""
        if isinstance(layer, KerasTensor):
            self._input_batch_shape = tuple(layer.shape.as_list())
            self._input_dtype = layer.dtype
            self._maybe_build_now()
            return
        if not isinstance(layer, Layer):
            raise TypeError(f"The added layer must be an instance of class Layer. Received: "
                            f"layer={layer} of type {type(layer)}.")
        if isinstance(layer, InputLayer) or (not self.layers and
                                             self._input_batch_shape is None and
                                             layer._batch_input_shape is not None):
            # hub.KerasLayer(..., input_shape=[], dtype=tf.string) takes strings; an Input
            # given before keeps its shape and dtype (Embedding's default input shape is
            # (None, None), which would otherwise replace Input((50,), dtype="int32"))
            self._input_batch_shape = layer._batch_input_shape
            self._input_dtype = layer._dtype or getattr(layer, "adapt_input_dtype", None)
        elif not self.layers and self._input_batch_shape is None:
            known = _known_input(layer)
            if known is not None:
                self._input_batch_shape = tuple(known.shape.as_list())
                self._input_dtype = known.dtype
        if not isinstance(layer, InputLayer):
            self._tracked.append(layer)
            SEQUENTIAL_OWNERS[layer] = weakref.ref(self)  # for layer.output
        self.built = False
        self._maybe_build_now()

    def pop(self):
        layers = self.layers
        if not layers:
            raise TypeError("There are no layers in the model.")
        self._tracked.remove(layers[-1])
        self.built = False
        graph = self.__dict__.get("_graph")
        if graph is not None:
            del graph[len(layers):]  # the input and the remaining layers' outputs

    def _maybe_build_now(self):
        if self._input_batch_shape is not None and self.layers:
            self._build_symbolically()

    def build(self, input_shape=None):
        if input_shape is None:
            input_shape = self._input_batch_shape
        if input_shape is None:
            raise ValueError("You must provide an `input_shape` argument.")
        self._input_batch_shape = tuple(TensorShape(input_shape).as_list())
        self._build_symbolically()

    def _build_symbolically(self):
        """Builds the layers by calling them on the model's symbolic input (an Input of the
        known shape), as tf.keras 2 builds a Sequential whose input shape is known: each
        layer is built on symbolic shapes and nothing runs on made-up data."""
        self._symbolic_graph()
        self._build_input_shape = TensorShape(self._input_batch_shape)
        self.built = True

    def call(self, inputs, training=None, mask=None):
        if not self.layers:
            raise ValueError("This Sequential model has no layers: add layers before calling it")
        x = inputs
        if self._input_dtype is None and getattr(x, "dtype", None) is not None and \
                not x.dtype.is_floating:
            # built on data of strings or integers (a TextVectorization first): the input
            # a saved config's InputLayer declares, so the reloaded model takes them too
            self._input_dtype = x.dtype
        if self._input_batch_shape is not None and not isinstance(x, (list, tuple, dict)):
            from tensorlite.keras.engine.functional import conform_to_reference  # noqa: PLC0415
            x = conform_to_reference(x, TensorShape(self._input_batch_shape))
        for layer in self.layers:
            x = layer(x, training=training)
        return x

    # -- the symbolic graph (model.input, layer.output) --------------------------------------
    def _symbolic_graph(self):
        """[input, each layer's output] as symbolic tensors, made (and extended as layers
        are added) once the input shape is known, as tf.keras 2 builds a Sequential's
        graph: what `model.input`, `model.output` and `layer.output` return."""
        graph = self.__dict__.get("_graph")
        if graph is None:
            shape = self._input_batch_shape or self._build_input_shape
            if shape is None or not hasattr(shape, "__len__"):
                raise AttributeError(f"Sequential model {self.name!r} has no input yet: give "
                                     f"it one (keras.Input, input_shape=) or call it on data")
            dims = list(TensorShape(shape).as_list())
            name = f"{self.layers[0].name}_input" if self.layers else None  # tf.keras 2's
            graph = self.__dict__["_graph"] = [
                Input(batch_shape=[None] + dims[1:], dtype=self._input_dtype or self.dtype,
                      name=name)]
        for layer in self.layers[len(graph) - 1:]:
            graph.append(layer(graph[-1]))
        return graph

    @property
    def input(self):
        return self._symbolic_graph()[0]

    @property
    def output(self):
        return self._symbolic_graph()[-1]

    @property
    def inputs(self):
        return [self.input]

    @property
    def outputs(self):
        return [self.output]

    @property
    def output_names(self):
        return [self.layers[-1].name] if self.layers else ["output_1"]

    def get_config(self):
        return {"name": self.name,
                "build_input_shape": self._input_batch_shape,
                "layers": [serialize_layer(layer) for layer in self.layers]}

    @classmethod
    def from_config(cls, config, custom_objects=None):
        from tensorlite.keras.saving.registry import layer_from_config  # noqa: PLC0415
        model = cls(name=config.get("name"))
        for c in config["layers"]:
            model.add(layer_from_config(c, custom_objects))
        if config.get("build_input_shape") is not None and not model.built:
            model.build(config["build_input_shape"])
        return model


def _known_input(layer):
    """The symbolic input a first layer brings, as tf.keras 2 takes it: a model with an
    input (the image-classification tutorial's `data_augmentation` Sequential, given
    `input_shape=`), or a layer taken from another model (keras.Sequential(
    pretrained.layers[:-1])), the input it was called on there; else None."""
    if isinstance(layer, Sequential):
        if layer._input_batch_shape is None:
            return None
        return layer.input
    inputs = getattr(layer, "inputs", None) if isinstance(layer, Model) else None
    if isinstance(inputs, list) and len(inputs) == 1 and isinstance(inputs[0], KerasTensor):
        return inputs[0]  # a functional model (a pretrained base: Sequential([base, ...]))
    nodes = layer.__dict__.get("_inbound_nodes") or []
    if nodes and isinstance(nodes[0].inputs, KerasTensor):
        return nodes[0].inputs
    return None
