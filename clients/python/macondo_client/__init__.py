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
    pb,
)
from .local import connect

__all__ = [
    "Client", "Stream", "MacondoError", "InvalidArgument", "NotFound", "ResourceExhausted", "DeadlineExceeded",
    "Unavailable", "connect", "pb",
]
