"""A model server with TensorFlow Serving's REST API (`tensorlite-serving`): SavedModel
versions polled from disk and swapped without dropping a request, dynamic batching, and
Prometheus metrics. Needs the `serving` extra (starlette, uvicorn, prometheus_client).

Example:
    $ tensorlite-serving --model_name=mlp --model_base_path=/models/mlp --rest_api_port=8501
    $ curl -d '{"instances": [[1.0, 2.0, 3.0, 4.0]]}' localhost:8501/v1/models/mlp:predict
"""
