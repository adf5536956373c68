"""`python -m tensorlite.js`: the TF.js converter (see tensorlite/js/cli.py)."""
import sys

from tensorlite.js.cli import main

if __name__ == "__main__":
    sys.exit(main())
