"""TensorFlow's side of test_data_api_interop.py: run under real TensorFlow by
conftest.run_tf(..., script=this file), never imported by tensorlite or pytest.

    python tf_data_api_side.py cases DIR   runs data_api_cases.cases on DIR's files

The last line printed is the JSON object of the cases' results.
"""
import json
import sys

import tensorflow as tf
import data_api_cases  # (this directory is on sys.path)

if __name__ == "__main__":
    command, directory = sys.argv[1], sys.argv[2]
    assert command == "cases"
    print(json.dumps(data_api_cases.cases(tf, directory)))
