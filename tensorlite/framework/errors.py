"""TensorFlow's error classes (`tf.errors.*`).

Every error tensorlite raises for bad input is one of these (or TypeError/ValueError where
TensorFlow raises those), with a message naming the op, the shapes and dtypes, and the fix.

Example:
    >>> try:
    ...     tf.constant(1) + tf.constant(1.0)
    ... except tf.errors.InvalidArgumentError as e:
    ...     print(type(e).__name__)
    InvalidArgumentError
"""

OK, CANCELLED, UNKNOWN, INVALID_ARGUMENT, DEADLINE_EXCEEDED, NOT_FOUND = 0, 1, 2, 3, 4, 5
ALREADY_EXISTS, PERMISSION_DENIED, RESOURCE_EXHAUSTED, FAILED_PRECONDITION = 6, 7, 8, 9
ABORTED, OUT_OF_RANGE, UNIMPLEMENTED, INTERNAL, UNAVAILABLE, DATA_LOSS = 10, 11, 12, 13, 14, 15
UNAUTHENTICATED = 16
CODE_NAMES = {code: name for name, code in list(globals().items())
              if name.isupper() and isinstance(code, int)}  # 3 -> "INVALID_ARGUMENT"


class OpError(Exception):
    """Base class of errors raised while running an op."""

    error_code = UNKNOWN

    def __init__(self, node_def=None, op=None, message=None, *args):
        # TF's signature is (node_def, op, message); a single argument is the message.
        if message is None and op is None and isinstance(node_def, str):
            node_def, message = None, node_def
        super().__init__(message)
        self.node_def = node_def
        self.op = op
        self.message = message

    def __str__(self):
        return str(self.message)

    def __reduce__(self):
        return (type(self), (self.node_def, None, self.message))


def _make(name, code, doc):
    return type(name, (OpError,), {"error_code": code, "__doc__": doc})


CancelledError = _make("CancelledError", CANCELLED, "An operation was cancelled.")
UnknownError = _make("UnknownError", UNKNOWN, "An unknown error.")
InvalidArgumentError = _make("InvalidArgumentError", INVALID_ARGUMENT,
                             "An op received an invalid argument (shape, dtype or value).")
DeadlineExceededError = _make("DeadlineExceededError", DEADLINE_EXCEEDED, "A deadline expired.")
NotFoundError = _make("NotFoundError", NOT_FOUND, "A requested entity (a file) was not found.")
AlreadyExistsError = _make("AlreadyExistsError", ALREADY_EXISTS, "An entity already exists.")
PermissionDeniedError = _make("PermissionDeniedError", PERMISSION_DENIED, "Permission denied.")
ResourceExhaustedError = _make("ResourceExhaustedError", RESOURCE_EXHAUSTED,
                               "A resource (memory, a budget) is exhausted.")
FailedPreconditionError = _make("FailedPreconditionError", FAILED_PRECONDITION,
                                "The system is not in a state the operation needs.")
AbortedError = _make("AbortedError", ABORTED, "An operation was aborted.")
OutOfRangeError = _make("OutOfRangeError", OUT_OF_RANGE,
                        "An iterator or index went past its valid range.")
UnimplementedError = _make("UnimplementedError", UNIMPLEMENTED, "The operation is not implemented.")
InternalError = _make("InternalError", INTERNAL, "An internal invariant was broken.")
UnavailableError = _make("UnavailableError", UNAVAILABLE, "A service is unavailable.")
DataLossError = _make("DataLossError", DATA_LOSS, "Unrecoverable data loss or corruption.")
UnauthenticatedError = _make("UnauthenticatedError", UNAUTHENTICATED, "Not authenticated.")
