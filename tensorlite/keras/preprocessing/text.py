"""`tf.keras.preprocessing.text`: Tokenizer, text_to_word_sequence, one_hot, hashing_trick,
as TF 2 ships them (deprecated there in favour of TextVectorization).

Example:
    >>> tok = Tokenizer(num_words=10, oov_token="<OOV>")
    >>> tok.fit_on_texts(["the cat sat", "the dog"])
    >>> tok.texts_to_sequences(["the bird sat"])
    [[2, 1, 4]]
"""
import hashlib
from collections import OrderedDict

FILTERS = '!"#$%&()*+,-./:;<=>?@[\\]^_`{|}~\t\n'


def text_to_word_sequence(input_text, filters=FILTERS, lower=True, split=" "):
    """Lowercases, replaces each filter character with `split`, splits, drops empties."""
    if lower:
        input_text = input_text.lower()
    input_text = input_text.translate(str.maketrans({c: split for c in filters}))
    return [w for w in input_text.split(split) if w]


def hashing_trick(text, n, hash_function=None, filters=FILTERS, lower=True, split=" "):
    """Word -> (hash(word) % (n - 1) + 1); `hash_function='md5'` is stable across runs."""
    if hash_function is None:
        hash_function = hash
    elif hash_function == "md5":
        def hash_function(w):
            return int(hashlib.md5(w.encode()).hexdigest(), 16)
    return [hash_function(w) % (n - 1) + 1 for w in
            text_to_word_sequence(text, filters=filters, lower=lower, split=split)]


def one_hot(input_text, n, filters=FILTERS, lower=True, split=" "):
    """`hashing_trick` with Python's hash (as Keras: not stable across runs)."""
    return hashing_trick(input_text, n, hash_function=hash, filters=filters, lower=lower,
                         split=split)


class Tokenizer:
    """Keras's Tokenizer: word_index by descending frequency (1-based; the oov_token, when
    given, is index 1); `num_words` keeps only indices below it in sequences."""

    def __init__(self, num_words=None, filters=FILTERS, lower=True, split=" ",
                 char_level=False, oov_token=None, analyzer=None, **kwargs):
        if kwargs:
            raise TypeError(f"Unrecognized keyword arguments: {sorted(kwargs)}")
        self.num_words, self.filters, self.lower, self.split = num_words, filters, lower, split
        self.char_level, self.oov_token, self.analyzer = char_level, oov_token, analyzer
        self.word_counts = OrderedDict()
        self.word_docs = {}
        self.document_count = 0
        self.word_index, self.index_word, self.index_docs = {}, {}, {}

    def _words(self, text):
        if self.char_level:
            return list(text.lower() if self.lower else text)
        if self.analyzer is not None:
            return self.analyzer(text)
        return text_to_word_sequence(text, self.filters, self.lower, self.split)

    def fit_on_texts(self, texts):
        for text in texts:
            self.document_count += 1
            words = self._words(text)
            for w in words:
                self.word_counts[w] = self.word_counts.get(w, 0) + 1
            for w in set(words):
                self.word_docs[w] = self.word_docs.get(w, 0) + 1
        ordered = sorted(self.word_counts.items(), key=lambda kv: kv[1], reverse=True)
        vocab = ([self.oov_token] if self.oov_token is not None else []) + \
            [w for w, _ in ordered]
        self.word_index = {w: i for i, w in enumerate(vocab, start=1)}
        self.index_word = {i: w for w, i in self.word_index.items()}
        self.index_docs = {self.word_index[w]: c for w, c in self.word_docs.items()}

    def texts_to_sequences(self, texts):
        return list(self.texts_to_sequences_generator(texts))

    def texts_to_sequences_generator(self, texts):
        oov = self.word_index.get(self.oov_token) if self.oov_token is not None else None
        for text in texts:
            seq = []
            for w in self._words(text):
                i = self.word_index.get(w)
                if i is not None and (not self.num_words or i < self.num_words):
                    seq.append(i)
                elif oov is not None:
                    seq.append(oov)
            yield seq

    def sequences_to_texts(self, sequences):
        return [" ".join(self.index_word[i] for i in seq if i in self.index_word and
                         (not self.num_words or i < self.num_words)) for seq in sequences]
