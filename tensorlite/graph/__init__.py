"""The graph layer. Importing it gives the tape (a layer below) its pfor jacobian without
loading the vectorizer at start-up: the vectorizer loads on the first jacobian that uses it
and then installs its own function in `tape.PFOR`."""
from tensorlite.autodiff import tape as _tape


def _pfor_on_first_use(backward, rows):
    from tensorlite.graph import vectorize  # noqa: PLC0415 - replaces this entry in PFOR
    return vectorize._jacobian_rows(backward, rows)


if not _tape.PFOR:
    _tape.PFOR[:] = [_pfor_on_first_use]
