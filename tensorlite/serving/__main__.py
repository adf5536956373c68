"""`tensorlite-serving` / `python -m tensorlite.serving`: TensorFlow Serving's model server
command line, REST API only.

    tensorlite-serving --model_name=NAME --model_base_path=DIR --rest_api_port=8501
    tensorlite-serving --model_config_file=models.config \\
        --model_config_file_poll_wait_seconds=60 --enable_batching \\
        --batching_parameters_file=batching.config

Flags follow `tensorflow_model_server`'s names and `--flag=value` form. It listens on
127.0.0.1 unless `--rest_api_host` says otherwise (TF Serving listens on every interface;
exposing a server is left to an explicit flag here). There is no gRPC API: `--port` is
accepted for compatibility and ignored with a warning.
"""
import argparse
import sys

from tensorlite.serving.config import (BatchingParameters, ConfigError, ModelSpec,
                                       parse_batching_parameters, parse_model_config)


def _bool(text):
    if text.lower() in ("1", "true", "yes", ""):
        return True
    if text.lower() in ("0", "false", "no"):
        return False
    raise argparse.ArgumentTypeError(f"expected true or false, got {text!r}")


def parse_args(argv):
    p = argparse.ArgumentParser(prog="tensorlite-serving", description=__doc__.split("\n")[0])
    p.add_argument("--model_name", default="default")
    p.add_argument("--model_base_path", default="")
    p.add_argument("--model_config_file", default="")
    p.add_argument("--model_config_file_poll_wait_seconds", type=int, default=0)
    p.add_argument("--file_system_poll_wait_seconds", type=float, default=1.0)
    p.add_argument("--rest_api_port", type=int, default=8501)
    p.add_argument("--rest_api_host", default="127.0.0.1")
    p.add_argument("--rest_api_num_threads", type=int, default=0, help="accepted, unused")
    p.add_argument("--port", type=int, default=0, help="gRPC port: not served")
    p.add_argument("--enable_batching", type=_bool, nargs="?", const=True, default=False)
    p.add_argument("--batching_parameters_file", default="")
    p.add_argument("--max_body_bytes", type=int, default=64 << 20)
    # tensorlite's own: uvicorn's HTTP parser. "auto" takes httptools (C, ~3x less time per
    # request than h11) when it is installed, else h11
    p.add_argument("--rest_api_http", choices=("auto", "h11", "httptools"), default="auto")
    args = p.parse_args(argv)
    if bool(args.model_base_path) == bool(args.model_config_file):
        p.error("give either --model_base_path (with --model_name) or --model_config_file")
    return args


def make_server(args):
    """The ModelServer the flags describe (not started)."""
    from tensorlite.serving.server import ModelServer  # noqa: PLC0415
    from tensorlite.serving.servable import load_servable  # noqa: PLC0415
    if args.model_config_file:
        with open(args.model_config_file, encoding="utf-8") as f:
            specs = parse_model_config(f.read(), args.model_config_file)
    else:
        specs = [ModelSpec(args.model_name, args.model_base_path)]
    batching = None
    if args.enable_batching:
        batching = BatchingParameters()
        if args.batching_parameters_file:
            with open(args.batching_parameters_file, encoding="utf-8") as f:
                batching = parse_batching_parameters(f.read(), args.batching_parameters_file)
    return ModelServer(specs, load_servable, batching=batching,
                       poll_seconds=args.file_system_poll_wait_seconds,
                       config_file=args.model_config_file or None,
                       config_poll_seconds=args.model_config_file_poll_wait_seconds)


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    import uvicorn  # noqa: PLC0415 - the serving extra
    from tensorlite.serving.rest_app import build_app  # noqa: PLC0415
    if args.port:
        print("tensorlite-serving: --port (gRPC) is not served; use the REST API",
              file=sys.stderr)
    try:
        server = make_server(args)
    except (ConfigError, OSError) as e:
        print(f"tensorlite-serving: {e}", file=sys.stderr)
        return 2
    server.start()
    for name, model in server.models.items():
        print(f"tensorlite-serving: model {name!r} versions {model.available_versions()} "
              f"available", flush=True)
    print(f"tensorlite-serving: REST API at http://{args.rest_api_host}:{args.rest_api_port}",
          flush=True)
    try:
        uvicorn.run(build_app(server, args.max_body_bytes), host=args.rest_api_host,
                    port=args.rest_api_port, log_level="warning", access_log=False,
                    proxy_headers=False,  # X-Forwarded-* are not TF Serving's; one layer less
                    http=args.rest_api_http)
    finally:
        server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
