"""`tf.keras.layers.TextVectorization`: standardize -> split -> n-grams -> vocabulary
lookup -> int sequences or multi_hot/count/tf_idf vectors, adapted on a dataset, as Keras.

In `output_mode='int'` the vocabulary is `['', '[UNK]', most frequent tokens...]`: 0 is
padding, 1 the OOV token. `output_sequence_length` pads or cuts every sequence to that
length; without it sequences are padded to the longest in the batch (`ragged=True` keeps
them ragged).

Example:
    >>> layer = tf.keras.layers.TextVectorization(output_sequence_length=4)
    >>> layer.adapt(["the cat sat", "the dog"])
    >>> layer.get_vocabulary()
    ['', '[UNK]', 'the', 'sat', 'dog', 'cat']
    >>> layer(["The cat, the bird!"]).numpy()
    array([[2, 5, 2, 1]])
"""
from tensorlite import strings
from tensorlite.framework import dtypes
from tensorlite.framework.convert import convert_to_tensor
from tensorlite.keras.layers.base_layer_utils import record_adapt_input
from tensorlite.keras.layers.layer import Layer
from tensorlite.keras.layers.preprocessing_encoding import check_mode
from tensorlite.keras.layers.preprocessing_lookup import StringLookup, _is_ragged
from tensorlite.keras.saving.object_registration import function_by_name, function_name_entry
from tensorlite.ops import array_ops

# Keras's DEFAULT_STRIP_REGEX
STRIP_PUNCTUATION = r'[!"#$%&()\*\+,-\./:;<=>?@\[\\\]^_`{|}~\']'
_STANDARDIZE = ("lower_and_strip_punctuation", "lower", "strip_punctuation")
_SPLIT = ("whitespace", "character")


def _standardize(x, how):
    if how is None:
        return x
    if callable(how):
        return how(x)
    if "lower" in how:
        x = strings.lower(x)
    if "strip_punctuation" in how:
        x = strings.regex_replace(x, STRIP_PUNCTUATION, "")
    return x


class TextVectorization(Layer):
    """See the module docstring; arguments as Keras's."""

    def __init__(self, max_tokens=None, standardize="lower_and_strip_punctuation",
                 split="whitespace", ngrams=None, output_mode="int", output_sequence_length=None,
                 pad_to_max_tokens=False, vocabulary=None, idf_weights=None, sparse=False,
                 ragged=False, encoding="utf-8", **kwargs):
        super().__init__(**kwargs)
        if not (standardize is None or callable(standardize) or standardize in _STANDARDIZE):
            raise ValueError(f"standardize must be one of {list(_STANDARDIZE)}, None or a "
                             f"callable, got {standardize!r}")
        if not (split is None or callable(split) or split in _SPLIT):
            raise ValueError(f"split must be one of {list(_SPLIT)}, None or a callable, got "
                             f"{split!r}")
        if output_sequence_length is not None and output_mode != "int":
            raise ValueError("output_sequence_length is only for output_mode='int'")
        if ragged and output_mode != "int":
            raise ValueError("ragged=True is only for output_mode='int'")
        self.standardize, self.split = standardize, split
        # an int n means all n-grams up to n (1..n); a tuple, exactly those widths
        self.ngrams = tuple(range(1, ngrams + 1)) if isinstance(ngrams, int) else ngrams
        self.output_mode = check_mode(output_mode)
        self.output_sequence_length = output_sequence_length
        self.ragged = ragged
        self.max_tokens = max_tokens
        self.pad_to_max_tokens = pad_to_max_tokens
        self.sparse = sparse
        self.encoding = encoding
        self._lookup_layer = StringLookup(
            max_tokens=max_tokens, mask_token="" if output_mode == "int" else None,
            output_mode=output_mode, pad_to_max_tokens=pad_to_max_tokens,
            vocabulary=vocabulary, idf_weights=idf_weights, sparse=sparse)
        self._lookup_layer._preprocess = self._preprocess

    # -- the pipeline ----------------------------------------------------------------------
    def _preprocess(self, x):
        if _is_ragged(x):
            raise ValueError("TextVectorization expects a dense string tensor")
        x = x if x.dtype.is_string else convert_to_tensor(x, dtype=dtypes.string)
        if x.shape.rank == 2 and x.shape[-1] == 1 and self.split is not None:
            x = array_ops.squeeze(x, -1)  # a [batch, 1] column of texts, as Keras
        x = _standardize(x, self.standardize)
        if self.split is None:
            return x
        if callable(self.split):
            x = self.split(x)
        elif self.split == "whitespace":
            x = strings.split(x)
        else:
            x = strings.unicode_split(x, "UTF-8")
        if self.ngrams is not None:
            x = strings.ngrams(x, self.ngrams, separator=" ")
        return x

    def adapt(self, data, batch_size=None, steps=None):
        """Builds the vocabulary (and IDF weights) from a dataset, array or list of texts;
        a layer given no input shape takes the texts' rank, as tf.keras 2's does."""
        record_adapt_input(self, data)
        self._lookup_layer.adapt_vocabulary(data, batch_size, steps)

    def _cast_inputs(self, inputs):
        return convert_to_tensor(inputs) if not _is_ragged(inputs) else inputs

    def call(self, inputs):
        tokens = self._preprocess(inputs)
        ids = self._lookup_layer(tokens)
        if self.output_mode != "int":
            return ids
        if not _is_ragged(ids):
            return ids
        if self.ragged:
            return ids
        if self.output_sequence_length is None:
            return ids.to_tensor(default_value=0)
        shape = [None] * (ids.shape.rank - 1) + [self.output_sequence_length]
        return ids.to_tensor(default_value=0, shape=shape)

    # -- vocabulary --------------------------------------------------------------------------
    def get_vocabulary(self, include_special_tokens=True):
        return self._lookup_layer.get_vocabulary(include_special_tokens)

    def set_vocabulary(self, vocabulary, idf_weights=None):
        self._lookup_layer.set_vocabulary(vocabulary, idf_weights)

    def vocabulary_size(self):
        return self._lookup_layer.vocabulary_size()

    def compute_mask(self, inputs, mask=None):
        return None

    def get_config(self):
        sub = self._lookup_layer.get_config()
        return {**super().get_config(), "max_tokens": self.max_tokens,
                "standardize": function_name_entry(self.standardize),
                "split": function_name_entry(self.split),
                "ngrams": self.ngrams, "output_mode": self.output_mode,
                "output_sequence_length": self.output_sequence_length,
                "pad_to_max_tokens": self.pad_to_max_tokens, "sparse": self.sparse,
                "ragged": self.ragged, "encoding": self.encoding,
                "vocabulary": sub["vocabulary"], "idf_weights": sub["idf_weights"]}

    @classmethod
    def from_config(cls, config, custom_objects=None):
        config = dict(config)
        for key in ("standardize", "split"):
            config[key] = function_by_name(config.get(key), f"TextVectorization's {key}",
                                           custom_objects)
        return cls(**config)
