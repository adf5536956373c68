"""`python -m tensorlite.lite --saved_model_dir=DIR --output_file=model.tflite`: the
TensorFlow Lite converter's command line (see tensorlite/lite/convert/cli.py)."""
import sys

from tensorlite.lite.convert.cli import main

if __name__ == "__main__":
    sys.exit(main())
