"""`tf.signal`: Fourier transforms (ops/fft_ops.py), framing, windows, short-time Fourier
transforms, mel filterbanks, DCTs, MFCCs and MDCTs."""
from tensorlite.ops.fft_ops import (fft, fft2d, fft3d, ifft, ifft2d, ifft3d,  # noqa: F401
                                    irfft, irfft2d, irfft3d, rfft, rfft2d, rfft3d)
from tensorlite.signal.dct_ops import dct, idct, mfccs_from_log_mel_spectrograms  # noqa: F401
from tensorlite.signal.fft_shift import fftshift, ifftshift  # noqa: F401
from tensorlite.signal.mdct_ops import inverse_mdct, mdct  # noqa: F401
from tensorlite.signal.mel_ops import linear_to_mel_weight_matrix  # noqa: F401
from tensorlite.signal.shape_ops import frame, overlap_and_add  # noqa: F401
from tensorlite.signal.spectral_ops import (inverse_stft, inverse_stft_window_fn,  # noqa: F401
                                            stft)
from tensorlite.signal.window_ops import (hamming_window, hann_window,  # noqa: F401
                                          kaiser_bessel_derived_window, kaiser_window,
                                          vorbis_window)

from tensorlite.framework.symbolic_dispatch import expose as _expose  # noqa: E402
_expose(globals(), "signal.", modules=("tensorlite.ops.", "tensorlite.signal."))
