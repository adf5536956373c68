"""`python -m tensorlite.saved_model show --dir DIR --all` (see show.py)."""
import sys

from tensorlite.saved_model.show import main

if __name__ == "__main__":
    sys.exit(main())
