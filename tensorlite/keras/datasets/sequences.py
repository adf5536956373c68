"""What the IMDB and Reuters loaders do to their word-id sequences, as Keras does: a start
marker and ids shifted by `index_from` (`mark`), sequences of `maxlen` or more dropped
(`drop_long`), and ids outside [skip_top, num_words) replaced by `oov_char` or dropped
when it is None (`limit`, num_words defaulting to the largest id seen)."""


def mark(sequences, start_char, index_from):
    head = [start_char] if start_char is not None else []
    return [head + [int(w) + index_from for w in x] for x in sequences]


def drop_long(xs, labels, maxlen):
    if not maxlen:
        return xs, list(labels)
    kept = [(x, y) for x, y in zip(xs, labels) if len(x) < maxlen]
    return [x for x, _ in kept], [y for _, y in kept]


def limit(xs, num_words, skip_top, oov_char):
    if not num_words:
        num_words = max((max(x) for x in xs if x), default=0)
    if oov_char is not None:
        return [[w if skip_top <= w < num_words else oov_char for w in x] for x in xs]
    return [[w for w in x if skip_top <= w < num_words] for x in xs]
