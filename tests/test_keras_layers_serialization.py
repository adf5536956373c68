"""tf.keras.layers.serialize / deserialize, as the serialization and saving guide uses them."""
import pytest

import tensorlite as tf
from tensorlite import keras


class CustomLayer(keras.layers.Layer):
    """The guide's layer (its __init__ never calls Layer's, as the guide writes it)."""

    def __init__(self, a):
        self.var = tf.Variable(a, name="var_a")

    def call(self, inputs, training=False):
        if training:
            return inputs * self.var
        else:
            return inputs

    def get_config(self):
        return {"a": self.var.numpy()}

    @classmethod
    def from_config(cls, config):
        return cls(**config)


def test_guide_custom_layer_round_trip():
    layer = CustomLayer(5)
    layer.var.assign(2)
    serialized_layer = keras.layers.serialize(layer)
    assert serialized_layer["class_name"] == "CustomLayer"
    new_layer = keras.layers.deserialize(
        serialized_layer, custom_objects={"CustomLayer": CustomLayer})
    assert isinstance(new_layer, CustomLayer)
    assert new_layer.var.numpy() == 2


def test_builtin_layer_round_trip_keeps_its_config():
    dense = keras.layers.Dense(3, activation="relu", name="d")
    entry = keras.layers.serialize(dense)
    assert entry["class_name"] == "Dense" and entry["config"]["units"] == 3
    again = keras.layers.deserialize(entry)
    assert isinstance(again, keras.layers.Dense)
    assert again.get_config() == dense.get_config()


def test_unknown_class_is_a_clear_error():
    entry = keras.layers.serialize(CustomLayer(1))
    with pytest.raises(ValueError, match="Unknown layer: 'CustomLayer'.*custom_objects"):
        keras.layers.deserialize(entry)


def test_guide_custom_layer_checkpoints_its_attribute_variables(tmp_path):
    # the guide's cell: a layer whose __init__ skips Layer's still checkpoints `self.var`
    layer = CustomLayer(5)
    layer_ckpt = tf.train.Checkpoint(layer=layer).save(str(tmp_path / "custom_layer"))
    ckpt_reader = tf.train.load_checkpoint(layer_ckpt)
    assert ckpt_reader.get_variable_to_dtype_map() == {
        "save_counter/.ATTRIBUTES/VARIABLE_VALUE": tf.int64,
        "_CHECKPOINTABLE_OBJECT_GRAPH": tf.string,
        "layer/var/.ATTRIBUTES/VARIABLE_VALUE": tf.int32}
    assert ckpt_reader.get_tensor("layer/var/.ATTRIBUTES/VARIABLE_VALUE") == 5


def test_guide_contrived_model_restores_a_functional_models_weights(tmp_path):
    # the guide's transfer of weights by checkpoint into a subclassed model that creates its
    # own with tf.keras 2's (deprecated) add_variable
    inputs = keras.Input(shape=(784,), name="digits")
    x = keras.layers.Dense(64, activation="relu", name="dense_1")(inputs)
    outputs = keras.layers.Dense(10, name="predictions")(x)
    functional_model = keras.Model(inputs=inputs, outputs=outputs, name="3_layer_mlp")
    first_dense = functional_model.layers[1]
    last_dense = functional_model.layers[-1]
    ckpt_path = tf.train.Checkpoint(
        dense=first_dense, kernel=last_dense.kernel, bias=last_dense.bias
    ).save(str(tmp_path / "ckpt"))

    class ContrivedModel(keras.Model):
        def __init__(self):
            super(ContrivedModel, self).__init__()
            self.first_dense = keras.layers.Dense(64)
            with pytest.warns(UserWarning, match="add_variable` is deprecated"):
                self.kernel = self.add_variable("kernel", shape=(64, 10))
                self.bias = self.add_variable("bias", shape=(10,))

        def call(self, inputs):
            x = self.first_dense(inputs)
            return tf.matmul(x, self.kernel) + self.bias

    model = ContrivedModel()
    _ = model(tf.ones((1, 784)))
    tf.train.Checkpoint(
        dense=model.first_dense, kernel=model.kernel, bias=model.bias
    ).restore(ckpt_path).assert_consumed()
    assert (model.kernel.numpy() == last_dense.kernel.numpy()).all()
    assert (model.first_dense.kernel.numpy() == first_dense.kernel.numpy()).all()
