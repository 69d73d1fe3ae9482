"""Compatibility name: the macondo.v1 message stubs live in the macondo-client distribution
(macondo_client.pb.macondo.v1.engine_pb2); this module re-exports the same classes."""

from macondo_client.pb.macondo.v1.engine_pb2 import *  # noqa: F403
from macondo_client.pb.macondo.v1.engine_pb2 import DESCRIPTOR  # noqa: F401
