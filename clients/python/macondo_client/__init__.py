"""Python client of the macondo-py engine server: a typed gRPC client (`Client`), the interactive shell
(`macondo shell`) and the bot-vs-bot harness (`macondo bots`)."""

from .client import (
    Client,
    DeadlineExceeded,
    InvalidArgument,
    MacondoError,
    NotFound,
    ResourceExhausted,
    Stream,
    Unavailable,
    connect,
    pb,
)

try:
    from ._version import __version__
except ImportError:  # a source tree whose build step (build_protos.py) has not run
    __version__ = "0+unknown"


def proto_path() -> str:
    """The include directory of the installed macondo.v1 .proto files (it holds macondo/v1/engine.proto)."""
    from pathlib import Path

    return str(Path(__file__).resolve().parent / "proto")


__all__ = [
    "Client", "Stream", "MacondoError", "InvalidArgument", "NotFound", "ResourceExhausted", "DeadlineExceeded",
    "Unavailable", "connect", "pb", "proto_path", "__version__",
]
