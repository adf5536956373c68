"""`skipped(row, why)`: a bench says which rows it left out and why (a peer that is not
installed), once per row, instead of dropping them silently."""
_SAID = set()


def skipped(row, why):
    """Prints `skipped: ROW (WHY)` the first time a row is skipped."""
    if row not in _SAID:
        _SAID.add(row)
        print(f"skipped: {row} ({why})", flush=True)
