"""Functional models written once for both tensorlite and real TensorFlow (each passes its
own `tf` module): test_keras_symbolic_interop.py compares the symbolic output shapes
tensorlite infers with those tf.keras 2 infers (tf_symbolic_side.py)."""


def transformer_encoder_class(keras):
    """The textbook's TransformerEncoder layer, on `keras` (tf.keras, Keras 3 or tensorlite's)."""
    layers = keras.layers

    class TransformerEncoder(layers.Layer):
        def __init__(self, embed_dim, dense_dim, num_heads, **kwargs):
            super().__init__(**kwargs)
            self.embed_dim, self.dense_dim, self.num_heads = embed_dim, dense_dim, num_heads
            self.attention = layers.MultiHeadAttention(num_heads=num_heads, key_dim=embed_dim)
            self.dense_proj = keras.Sequential([layers.Dense(dense_dim, activation="relu"),
                                                layers.Dense(embed_dim)])
            self.layernorm_1 = layers.LayerNormalization()
            self.layernorm_2 = layers.LayerNormalization()

        def call(self, inputs, mask=None):
            if mask is not None:
                mask = mask[:, None, :]
            attention_output = self.attention(inputs, inputs, attention_mask=mask)
            proj_input = self.layernorm_1(inputs + attention_output)
            return self.layernorm_2(proj_input + self.dense_proj(proj_input))

        def get_config(self):
            config = super().get_config()
            config.update({"embed_dim": self.embed_dim, "num_heads": self.num_heads,
                           "dense_dim": self.dense_dim})
            return config
    return TransformerEncoder


def positional_embedding_class(tf):
    layers = tf.keras.layers

    class PositionalEmbedding(layers.Layer):
        def __init__(self, sequence_length, input_dim, output_dim, **kwargs):
            super().__init__(**kwargs)
            self.token_embeddings = layers.Embedding(input_dim=input_dim, output_dim=output_dim)
            self.position_embeddings = layers.Embedding(input_dim=sequence_length,
                                                        output_dim=output_dim)

        def call(self, inputs):
            length = tf.shape(inputs)[-1]
            positions = tf.range(start=0, limit=length, delta=1)
            return self.token_embeddings(inputs) + self.position_embeddings(positions)

        def compute_mask(self, inputs, mask=None):
            return tf.math.not_equal(inputs, 0)
    return PositionalEmbedding


def positional_transformer(tf):
    inputs = tf.keras.Input(shape=(None,), dtype="int64")
    x = positional_embedding_class(tf)(20, 100, 16)(inputs)
    return transformer_encoder_class(tf.keras)(16, 8, 2)(x)


def lstm_fixed_length(tf):
    seq = tf.keras.Input((5,), dtype="int32")
    e = tf.keras.layers.Embedding(10, 6)(seq)
    return tf.keras.layers.LSTM(7, return_sequences=True, return_state=True)(e)


def gru_and_bidirectional_any_length(tf):
    layers = tf.keras.layers
    x = tf.keras.Input((None, 6))
    return [layers.GRU(3, return_sequences=True)(x),
            layers.Bidirectional(layers.LSTM(4, return_sequences=True))(x),
            layers.Conv1D(4, 3, padding="causal")(x)]


def conv_any_size(tf):
    layers = tf.keras.layers
    x = tf.keras.Input((None, None, 3))
    y = layers.Conv2D(4, 3)(x)
    y = layers.MaxPooling2D()(y)
    z = layers.Conv2D(8, 3, strides=2, padding="same")(y)
    return [y, z, layers.GlobalAveragePooling2D()(z), layers.UpSampling2D()(z)]


def dense_reshape_flatten(tf):
    layers = tf.keras.layers
    x = tf.keras.Input((10, 8))
    y = tf.keras.Input((6, 4))
    r = layers.Reshape((3, 8))(y)
    return [layers.Dense(5)(x), r, layers.Dense(2)(layers.Flatten()(r))]


def keyword_attention(tf):
    x = tf.keras.Input(shape=(None, 8))
    m = tf.keras.Input(shape=(None, None), dtype="bool")
    mha = tf.keras.layers.MultiHeadAttention(num_heads=2, key_dim=4)
    return mha(query=x, value=x, key=x, attention_mask=m, return_attention_scores=True)


def tf_functions(tf):
    x = tf.keras.Input((None, 16))
    return [tf.reduce_mean(x, axis=1), x[:, 0], tf.expand_dims(x, 1),
            tf.concat([x, x], axis=-1), tf.transpose(x, [0, 2, 1])]


MODELS = {f.__name__: f for f in (positional_transformer, lstm_fixed_length,
                                  gru_and_bidirectional_any_length, conv_any_size,
                                  dense_reshape_flatten, keyword_attention, tf_functions)}
