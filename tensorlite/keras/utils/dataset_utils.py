"""`tf.keras.utils.image_dataset_from_directory` and `timeseries_dataset_from_array`, and
the directory indexing and validation split text_dataset_from_directory shares.

Example:
    >>> train = tf.keras.utils.image_dataset_from_directory(
    ...     "flowers/", validation_split=0.2, subset="training", seed=123,
    ...     image_size=(180, 180), batch_size=32)
    >>> train.class_names
    ['daisy', 'roses']
"""
import os

import numpy as np

from tensorlite.data.dataset import DatasetV2
from tensorlite.data.sources import FromTensorSlicesDataset
from tensorlite.framework import errors
from tensorlite.ops import image_resize
from tensorlite.ops.image_codecs import decode_image

_IMAGE_EXTENSIONS = (".bmp", ".gif", ".jpeg", ".jpg", ".png")


def index_directory(directory, labels, class_names, follow_links,
                    extensions=_IMAGE_EXTENSIONS):
    """(file paths, integer labels, class names) in Keras's order: with labels="inferred",
    classes are the sorted sub-directories (or `class_names`) and files are sorted within
    each; otherwise every file below `directory`, sorted by path, with `labels` (a list of
    integers, one per file; their sorted distinct values are the class names) or none."""
    if not os.path.isdir(directory):
        raise errors.NotFoundError(None, None, f"Could not find directory {directory}")
    subdirs = sorted(d for d in os.listdir(directory)
                     if os.path.isdir(os.path.join(directory, d)))
    if class_names is not None:
        if labels != "inferred":
            raise ValueError("You can only pass `class_names` if `labels='inferred'`.")
        missing = set(class_names) - set(subdirs)
        if missing:
            raise ValueError(f"The `class_names` passed did not match the names of the "
                             f"subdirectories of the target directory. Expected: {subdirs}, "
                             f"but received: {class_names}")
        subdirs = list(class_names)
    roots = [(os.path.join(directory, d), i) for i, d in enumerate(subdirs)] \
        if labels == "inferred" else [(directory, 0)]
    paths, ints = [], []
    for root, label in roots:
        found = []
        for dirpath, _, files in os.walk(root, followlinks=follow_links):
            found += [os.path.join(dirpath, f) for f in files
                      if f.lower().endswith(extensions)]
        found.sort()
        paths += found
        ints += [label] * len(found)
    if labels in ("inferred", None):
        return paths, np.array(ints, np.int32), subdirs if labels else []
    if not isinstance(labels, (list, tuple, np.ndarray)):
        raise ValueError(f'`labels` argument should be a list/tuple of integer labels, of the '
                         f'same size as the number of files in the target directory. If you '
                         f'wish to infer the labels from the subdirectory names, set '
                         f'`labels="inferred"`. If you wish to get a dataset that only '
                         f'contains files (no labels), set `labels=None`. Received: '
                         f'labels={labels}')
    ints = np.asarray(labels, np.int32)
    if len(ints) != len(paths):
        raise ValueError(f"Expected the lengths of `labels` to match the number of files in "
                         f"the target directory. len(labels) is {len(ints)} while we found "
                         f"{len(paths)} files in directory {directory}.")
    return paths, ints, sorted(set(ints.tolist()))


def report_found(n, n_classes, labels, validation_split, subset):
    """Keras's lines: the files found, then how many the subset uses."""
    print(f"Found {n} files belonging to {n_classes} classes." if labels == "inferred" else
          f"Found {n} files.")
    if validation_split and subset in ("training", "validation"):
        n_val = int(validation_split * n)
        print(f"Using {n - n_val if subset == 'training' else n_val} files for {subset}.")


def split(items, validation_split, subset, seed):
    if not validation_split:
        return items
    if subset not in ("training", "validation"):
        raise ValueError(f'`subset` must be either "training", "validation" or "both" when '
                         f'validation_split is set, received: {subset}')
    n_val = int(validation_split * len(items[0]))
    cut = len(items[0]) - n_val
    return tuple(x[:cut] if subset == "training" else x[cut:] for x in items)


def image_dataset_from_directory(directory, labels="inferred", label_mode="int",
                                 class_names=None, color_mode="rgb", batch_size=32,
                                 image_size=(256, 256), shuffle=True, seed=None,
                                 validation_split=None, subset=None, interpolation="bilinear",
                                 follow_links=False, crop_to_aspect_ratio=False, **kwargs):
    """A Dataset of (images, labels) batches from class sub-directories of image files
    (PNG, JPEG, GIF, BMP through Pillow), resized to `image_size` (float32), with a
    `class_names` attribute; subset="both" returns (training, validation)."""
    if subset == "both":
        return tuple(image_dataset_from_directory(
            directory, labels, label_mode, class_names, color_mode, batch_size, image_size,
            shuffle, seed, validation_split, s, interpolation, follow_links,
            crop_to_aspect_ratio) for s in ("training", "validation"))
    if label_mode not in ("int", "categorical", "binary", None):
        raise ValueError(f'`label_mode` argument must be one of "int", "categorical", '
                         f'"binary", or None. Received: label_mode={label_mode}')
    channels = {"rgb": 3, "rgba": 4, "grayscale": 1}.get(color_mode)
    if channels is None:
        raise ValueError(f'`color_mode` must be one of {{"rgb", "rgba", "grayscale"}}. '
                         f'Received: color_mode={color_mode}')
    if validation_split and shuffle and seed is None:
        raise ValueError("If using `validation_split` and shuffling the data, you must "
                         "provide a `seed` argument, to make sure that there is no overlap "
                         "between the training and validation subset.")
    if labels is None:
        label_mode = None
    paths, ints, names = index_directory(directory, labels, class_names, follow_links)
    if not paths:
        raise ValueError(f"No images found in directory {directory}. Allowed formats: "
                         f"{_IMAGE_EXTENSIONS}")
    if label_mode == "binary" and len(names) != 2:
        raise ValueError(f'When passing `label_mode="binary"`, there must be exactly 2 '
                         f'class_names. Received: class_names={names}')
    order = np.random.default_rng(seed).permutation(len(paths)) if shuffle else \
        np.arange(len(paths))
    paths, ints = np.array(paths, dtype=object)[order], ints[order]
    report_found(len(paths), len(names), labels, validation_split, subset)
    paths, ints = split((paths, ints), validation_split, subset, seed)
    size = tuple(int(v) for v in image_size)

    def load(path):
        from tensorlite.ops.parsing_ops import read_file  # noqa: PLC0415
        img = decode_image(read_file(path), channels=channels)
        if crop_to_aspect_ratio:
            from tensorlite.keras.layers.image_preprocessing import Resizing  # noqa: PLC0415
            return Resizing(*size, interpolation=interpolation,
                            crop_to_aspect_ratio=True)(img)
        return image_resize.resize(img, size, method=interpolation)

    images = FromTensorSlicesDataset(paths.astype(object)).map(load)
    if label_mode is None:
        ds = images
    else:
        if label_mode == "categorical":
            lab = np.eye(len(names), dtype=np.float32)[ints]
        elif label_mode == "binary":
            lab = ints.astype(np.float32)[:, None]
        else:
            lab = ints
        ds = DatasetV2.zip((images, FromTensorSlicesDataset(lab)))
    if batch_size is not None:
        ds = ds.batch(batch_size)
    ds.class_names = names
    ds.file_paths = [str(p) for p in paths]
    return ds


def timeseries_dataset_from_array(data, targets, sequence_length, sequence_stride=1,
                                  sampling_rate=1, batch_size=128, shuffle=False, seed=None,
                                  start_index=None, end_index=None):
    """Windows data[i : i + sequence_length * sampling_rate : sampling_rate] for start
    i = start_index, start_index + sequence_stride, ...; the target of window i is
    targets[i]. Batches of (windows, targets), or windows alone with targets=None.

    >>> ds = tf.keras.utils.timeseries_dataset_from_array(np.arange(10), None, 3,
    ...                                                   batch_size=2)
    >>> next(iter(ds)).numpy().tolist()
    [[0, 1, 2], [1, 2, 3]]
    """
    for name, v in (("sequence_length", sequence_length), ("sampling_rate", sampling_rate),
                    ("sequence_stride", sequence_stride)):
        if int(v) <= 0:
            raise ValueError(f"`{name}` must be higher than 0. Received: {name}={v}")
    data = np.asarray(data)
    start = 0 if start_index is None else int(start_index)
    end = len(data) if end_index is None else int(end_index)
    span = (sequence_length - 1) * sampling_rate
    starts = np.arange(start, end - span, sequence_stride)
    if targets is not None:
        targets = np.asarray(targets)
        starts = starts[starts < len(targets)]
    if shuffle:
        starts = np.random.default_rng(seed).permutation(starts)
    offsets = np.arange(sequence_length) * sampling_rate
    windows = data[starts[:, None] + offsets] if len(starts) else \
        np.zeros((0, sequence_length) + data.shape[1:], data.dtype)
    items = windows if targets is None else (windows, targets[starts])
    ds = FromTensorSlicesDataset(items)
    return ds.batch(batch_size) if batch_size is not None else ds

