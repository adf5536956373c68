"""`tf.keras.utils.text_dataset_from_directory`: a dataset of (text, label) from
`directory/<class name>/*.txt` (or with a list of labels, one per file), as Keras builds it
(classes in alphanumeric order, files shuffled with `seed` before a validation split).

Example:
    >>> ds = text_dataset_from_directory("reviews", batch_size=32)  # doctest: +SKIP
"""
import numpy as np

from tensorlite.keras.utils.dataset_utils import index_directory, report_found, split


def text_dataset_from_directory(directory, labels="inferred", label_mode="int",
                                class_names=None, batch_size=32, max_length=None, shuffle=True,
                                seed=None, validation_split=None, subset=None,
                                follow_links=False, verbose=True):
    """Reads every `.txt` file below the class subdirectories of `directory` (labels
    "inferred"), or below `directory` with `labels` a list of integers, one per file in
    sorted path order (or None: texts only); subset="both" returns (training, validation)."""
    from tensorlite.data import Dataset  # noqa: PLC0415
    from tensorlite.keras.utils.np_utils import to_categorical  # noqa: PLC0415
    if subset == "both":
        return tuple(text_dataset_from_directory(
            directory, labels, label_mode, class_names, batch_size, max_length, shuffle, seed,
            validation_split, s, follow_links, verbose) for s in ("training", "validation"))
    if label_mode not in ("int", "categorical", "binary", None):
        raise ValueError(f"label_mode must be 'int', 'categorical', 'binary' or None, got "
                         f"{label_mode!r}")
    if labels is None:
        label_mode = None
    if validation_split is not None and shuffle and seed is None:
        raise ValueError("If using validation_split and shuffling the data, you must provide "
                         "a seed argument, to make sure that there is no overlap between the "
                         "training and validation subset.")
    paths, ints, classes = index_directory(directory, labels, class_names, follow_links,
                                           extensions=(".txt",))
    if label_mode == "binary" and len(classes) != 2:
        raise ValueError(f"label_mode='binary' needs exactly 2 classes, found {len(classes)}: "
                         f"{classes}")
    if shuffle:
        order = np.random.RandomState(seed if seed is not None else
                                      np.random.randint(1e6)).permutation(len(paths))
        paths, ints = [paths[i] for i in order], ints[order]
    if verbose:
        report_found(len(paths), len(classes), labels, validation_split, subset)
    paths, ints = split((paths, ints), validation_split, subset, seed)
    texts = []
    for p in paths:
        with open(p, "rb") as f:
            data = f.read()
        texts.append(data[:max_length] if max_length is not None else data)
    texts_arr = np.empty(len(texts), dtype=object)
    texts_arr[:] = texts
    if label_mode is None:
        ds = Dataset.from_tensor_slices(texts_arr)
    else:
        if label_mode == "categorical":
            y = to_categorical(ints, len(classes)).astype(np.float32)
        else:
            y = ints.astype(np.float32).reshape(-1, 1) if label_mode == "binary" else ints
        ds = Dataset.from_tensor_slices((texts_arr, y))
    if shuffle:
        ds = ds.shuffle(buffer_size=batch_size * 8 if batch_size else 1024, seed=seed)
    if batch_size is not None:
        ds = ds.batch(batch_size)
    ds.class_names = classes
    return ds


