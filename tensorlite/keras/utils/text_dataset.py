"""`tf.keras.utils.text_dataset_from_directory`: a dataset of (text, label) from
`directory/<class name>/*.txt`, as Keras builds it (classes in alphanumeric order, files
shuffled with `seed` before a validation split).

Example:
    >>> ds = text_dataset_from_directory("reviews", batch_size=32)  # doctest: +SKIP
"""
import os

import numpy as np



def _files(directory, class_names, follow_links):
    classes = class_names or sorted(d for d in os.listdir(directory)
                                    if os.path.isdir(os.path.join(directory, d)))
    paths, labels = [], []
    for label, name in enumerate(classes):
        root = os.path.join(directory, name)
        if not os.path.isdir(root):
            raise ValueError(f"class_names contains {name!r}, which is not a subdirectory of "
                             f"{directory}")
        found = []
        for dirpath, _, files in os.walk(root, followlinks=follow_links):
            found += [os.path.join(dirpath, f) for f in files if f.lower().endswith(".txt")]
        for p in sorted(found):
            paths.append(p)
            labels.append(label)
    return classes, paths, np.array(labels, dtype=np.int32)


def _split(paths, labels, validation_split, subset, seed):
    if validation_split is None:
        return paths, labels
    n_val = int(validation_split * len(paths))
    if subset == "training":
        return paths[:len(paths) - n_val], labels[:len(paths) - n_val]
    if subset == "validation":
        return paths[len(paths) - n_val:], labels[len(paths) - n_val:]
    raise ValueError(f"subset must be 'training' or 'validation' with validation_split, got "
                     f"{subset!r}")


def text_dataset_from_directory(directory, labels="inferred", label_mode="int",
                                class_names=None, batch_size=32, max_length=None, shuffle=True,
                                seed=None, validation_split=None, subset=None,
                                follow_links=False):
    """Reads every `.txt` file below the class subdirectories of `directory`."""
    from tensorlite.data import Dataset  # noqa: PLC0415
    from tensorlite.keras.utils.np_utils import to_categorical  # noqa: PLC0415
    if labels not in ("inferred", None):
        raise NotImplementedError("text_dataset_from_directory with explicit labels lists")
    if label_mode not in ("int", "categorical", "binary", None):
        raise ValueError(f"label_mode must be 'int', 'categorical', 'binary' or None, got "
                         f"{label_mode!r}")
    if validation_split is not None and shuffle and seed is None:
        raise ValueError("If using validation_split and shuffling the data, you must provide "
                         "a seed argument, to make sure that there is no overlap between the "
                         "training and validation subset.")
    classes, paths, ints = _files(directory, class_names, follow_links)
    if label_mode == "binary" and len(classes) != 2:
        raise ValueError(f"label_mode='binary' needs exactly 2 classes, found {len(classes)}: "
                         f"{classes}")
    if shuffle:
        order = np.random.RandomState(seed if seed is not None else
                                      np.random.randint(1e6)).permutation(len(paths))
        paths, ints = [paths[i] for i in order], ints[order]
    paths, ints = _split(paths, ints, validation_split, subset, seed)
    print(f"Found {len(paths)} files belonging to {len(classes)} classes.")
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
        y = {"int": ints, "binary": ints.astype(np.float32).reshape(-1, 1),
             "categorical": to_categorical(ints, len(classes)).astype(np.float32)}[label_mode]
        ds = Dataset.from_tensor_slices((texts_arr, y))
    if shuffle:
        ds = ds.shuffle(buffer_size=batch_size * 8, seed=seed)
    if batch_size is not None:
        ds = ds.batch(batch_size)
    ds.class_names = classes
    return ds


