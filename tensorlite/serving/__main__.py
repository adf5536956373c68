"""`tensorlite-serving` / `python -m tensorlite.serving`: TensorFlow Serving's model server
command line, REST API only.

    tensorlite-serving --model_name=NAME --model_base_path=DIR --rest_api_port=8501
    tensorlite-serving --model_config_file=models.config \\
        --model_config_file_poll_wait_seconds=60 --enable_batching \\
        --batching_parameters_file=batching.config

Flags follow `tensorflow_model_server`'s names and `--flag=value` form. It listens on
127.0.0.1 unless `--rest_api_host` says otherwise (TF Serving listens on every interface;
exposing a server is left to an explicit flag here). There is no gRPC API: `--port` (TF
Serving's gRPC port) is refused with an error that says to use `--rest_api_port`; so are
the other TF Serving flags tensorlite-serving does not implement (NOT_IMPLEMENTED), each
with what it would have done, rather than accepted and ignored.
"""
import argparse
import sys

from tensorlite.serving.config import (BatchingParameters, ConfigError, ModelSpec,
                                       parse_batching_parameters, parse_model_config)
from tensorlite.serving.limits import RestLimits, uvicorn_config


def _bool(text):
    if text.lower() in ("1", "true", "yes", ""):
        return True
    if text.lower() in ("0", "false", "no"):
        return False
    raise argparse.ArgumentTypeError(f"expected true or false, got {text!r}")


# TF Serving's flags that tensorlite-serving refuses: what each would do, and what to do
NOT_IMPLEMENTED = {
    "port": "TF Serving's gRPC port: tensorlite-serving serves no gRPC API, only the REST "
            "API: use --rest_api_port and REST clients instead",
    "grpc_channel_arguments": "gRPC is not served: use the REST API (--rest_api_port)",
    "grpc_socket_path": "gRPC is not served: use the REST API (--rest_api_port)",
    "rest_api_num_threads": "the REST API runs on one uvicorn event loop (batching runs "
                            "the model on its own threads): drop the flag",
    "enable_model_warmup": "SavedModel warm-up records (assets.extra/tf_serving_warmup_"
                           "requests) are not replayed: drop the flag",
    "monitoring_config_file": "Prometheus metrics are always at /monitoring/prometheus/"
                              "metrics: drop the flag",
    "ssl_config_file": "TLS is not terminated by tensorlite-serving: put a TLS proxy in "
                       "front of the REST API",
    "tensorflow_session_parallelism": "tensorlite has no TF session: drop the flag",
    "tensorflow_intra_op_parallelism": "set the threads with OMP_NUM_THREADS / "
                                       "OPENBLAS_NUM_THREADS instead",
    "tensorflow_inter_op_parallelism": "drop the flag (ops run one after another)",
    "platform_config_file": "only SavedModels are served: drop the flag",
}


def _refuse_not_implemented(p, argv):
    """argparse's error (exit status 2) for the first NOT_IMPLEMENTED flag in `argv`."""
    for arg in argv:
        name = arg.lstrip("-").split("=", 1)[0]
        if arg.startswith("--") and name in NOT_IMPLEMENTED:
            p.error(f"--{name} is not implemented by tensorlite-serving: "
                    f"{NOT_IMPLEMENTED[name]}")


def build_parser():
    """The argparse parser of `tensorlite-serving` (every flag with its description)."""
    p = argparse.ArgumentParser(
        prog="tensorlite-serving", allow_abbrev=False,  # TF Serving's flags are exact
        description="TensorFlow Serving's model server (REST API only): serves the numbered "
                    "SavedModel versions of one model (--model_base_path) or of the models "
                    "a --model_config_file lists, reloading new versions as they appear.",
        epilog="There is no gRPC API: clients use the REST API at --rest_api_host:"
               "--rest_api_port (/v1/models/NAME:predict). TF Serving flags that are not "
               "implemented are refused with an error saying what to do instead: --" +
               ", --".join(NOT_IMPLEMENTED) + ".")
    p.add_argument("--model_name", default="default",
                   help="name of the model served from --model_base_path (default "
                        "%(default)s)")
    p.add_argument("--model_base_path", default="",
                   help="directory holding the model's numbered SavedModel versions")
    p.add_argument("--model_config_file", default="",
                   help="a ModelServerConfig in protobuf text format (instead of "
                        "--model_name/--model_base_path)")
    p.add_argument("--model_config_file_poll_wait_seconds", type=int, default=0,
                   help="seconds between re-reads of --model_config_file; 0: read once "
                        "(default %(default)s)")
    p.add_argument("--file_system_poll_wait_seconds", type=float, default=1.0,
                   help="seconds between looks for new versions; names that are not a "
                        "version number are logged and skipped (default %(default)s)")
    p.add_argument("--rest_api_port", type=int, default=8501,
                   help="port of the REST API (default %(default)s)")
    p.add_argument("--rest_api_host", default="127.0.0.1",
                   help="address the REST API listens on (default %(default)s; TF Serving "
                        "listens on every interface, tensorlite only when told)")
    p.add_argument("--enable_batching", type=_bool, nargs="?", const=True, default=False,
                   help="merge concurrent requests into batches (default %(default)s)")
    p.add_argument("--batching_parameters_file", default="",
                   help="BatchingParameters in protobuf text format (TF Serving's defaults "
                        "when not given)")
    # tensorlite's own: uvicorn's HTTP parser. "auto" takes httptools (C, ~3x less time per
    # request than h11) when it is installed, else h11
    p.add_argument("--rest_api_http", choices=("auto", "h11", "httptools"), default="auto",
                   help="uvicorn's HTTP parser; auto takes httptools when installed, else "
                        "h11 (default %(default)s)")
    _limit_flags(p)
    return p


def parse_args(argv):
    """The parsed flags (argparse exits with status 2 and a message on a bad one)."""
    p = build_parser()
    _refuse_not_implemented(p, argv)
    args = p.parse_args(argv)
    if bool(args.model_base_path) == bool(args.model_config_file):
        p.error("give either --model_base_path (with --model_name) or --model_config_file")
    try:
        args.limits = rest_limits(args)
    except ValueError as e:
        p.error(str(e))
    return args


def _limit_flags(p):
    """The flags that bound what one REST client may cost (limits.RestLimits)."""
    d = RestLimits()
    g = p.add_argument_group("client limits (docs/serving.md)")
    g.add_argument("--max_body_bytes", type=int, default=d.max_body_bytes,
                   help="largest request body in bytes; larger ones are answered 413, by "
                        "their Content-Length before any of the body is read, or as a chunked "
                        "body arrives (default %(default)s, 64 MiB)")
    g.add_argument("--rest_api_header_timeout_seconds", type=float,
                   default=d.header_timeout_s,
                   help="seconds a request's line and headers may take to arrive, from the "
                        "connection opening or the previous response; later: 408 and the "
                        "connection closes (default %(default)s)")
    g.add_argument("--rest_api_max_header_bytes", type=int, default=d.max_header_bytes,
                   help="largest request line plus headers in bytes; larger: 431 and the "
                        "connection closes (default %(default)s)")
    g.add_argument("--rest_api_body_timeout_seconds", type=float, default=d.body_timeout_s,
                   help="seconds a request's body may take to arrive in full, from the end "
                        "of its headers; later: 408 and the connection closes "
                        "(default %(default)s)")
    g.add_argument("--rest_api_timeout_in_ms", type=int, default=d.request_timeout_ms,
                   help="TF Serving's timeout for a whole REST request in milliseconds, "
                        "from the end of its headers to its response (body, decoding, the "
                        "model, encoding); later: 504 DEADLINE_EXCEEDED "
                        "(default %(default)s)")
    g.add_argument("--rest_api_max_connections", type=int, default=d.max_connections,
                   help="open connections plus requests in flight beyond which a new "
                        "request is answered 503 (uvicorn's limit_concurrency; "
                        "default %(default)s)")
    g.add_argument("--rest_api_keep_alive_seconds", type=float, default=d.keep_alive_s,
                   help="seconds an idle keep-alive connection stays open between requests "
                        "(uvicorn's timeout_keep_alive; default %(default)s)")


# flag -> RestLimits field
_LIMIT_FIELDS = {"max_body_bytes": "max_body_bytes",
                 "rest_api_header_timeout_seconds": "header_timeout_s",
                 "rest_api_max_header_bytes": "max_header_bytes",
                 "rest_api_body_timeout_seconds": "body_timeout_s",
                 "rest_api_timeout_in_ms": "request_timeout_ms",
                 "rest_api_max_connections": "max_connections",
                 "rest_api_keep_alive_seconds": "keep_alive_s"}


def rest_limits(args):
    """The RestLimits the flags give (ValueError naming a flag that is not positive)."""
    for flag in _LIMIT_FIELDS:
        if not getattr(args, flag) > 0:
            raise ValueError(f"--{flag} must be positive, got {getattr(args, flag)}")
    return RestLimits(**{field: getattr(args, flag) for flag, field in _LIMIT_FIELDS.items()})


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
        uvicorn.Server(uvicorn_config(build_app(server, limits=args.limits), args.limits,
                                      args.rest_api_host, args.rest_api_port,
                                      args.rest_api_http, log_level="warning",
                                      access_log=False)).run()
    finally:
        server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
