"""`tf.image`: image conversion, augmentation, colour spaces and resizing.

    >>> tf.image.resize(tf.zeros([64, 48, 3]), (224, 224)).shape
    TensorShape([224, 224, 3])
"""
from tensorlite.ops.image_color import (adjust_brightness, adjust_contrast,  # noqa: F401
                                        adjust_gamma, adjust_hue, adjust_saturation,
                                        grayscale_to_rgb, hsv_to_rgb, random_brightness,
                                        random_contrast, random_hue, random_saturation,
                                        rgb_to_grayscale, rgb_to_hsv, rgb_to_yiq, rgb_to_yuv,
                                        stateless_random_brightness,
                                        stateless_random_contrast, stateless_random_hue,
                                        stateless_random_saturation, yiq_to_rgb, yuv_to_rgb)
from tensorlite.ops.image_ops import (central_crop, convert_image_dtype,  # noqa: F401
                                      crop_to_bounding_box, extract_patches, flip_left_right,
                                      flip_up_down, image_gradients, pad_to_bounding_box,
                                      per_image_standardization, psnr, random_crop,
                                      random_flip_left_right, random_flip_up_down,
                                      resize_with_crop_or_pad, rot90, sobel_edges,
                                      stateless_random_crop, stateless_random_flip_left_right,
                                      stateless_random_flip_up_down, total_variation,
                                      transpose)
from tensorlite.ops.image_resize import (ResizeMethod, resize, resize_with_pad)  # noqa: F401
from tensorlite.ops.image_boxes import (draw_bounding_boxes,  # noqa: F401,E402
                                        sample_distorted_bounding_box)
from tensorlite.ops.image_codecs import (decode_image, decode_jpeg, decode_png,  # noqa: F401,E402
                                         encode_jpeg, encode_png, is_jpeg)

from tensorlite.framework.symbolic_dispatch import expose as _expose  # noqa: E402
_expose(globals(), "image.")  # ops on Keras symbolic tensors become layers
