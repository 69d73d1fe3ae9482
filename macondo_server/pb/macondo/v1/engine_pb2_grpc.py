"""Compatibility name: the macondo.v1 gRPC stubs live in the macondo-client distribution
(macondo_client.pb.macondo.v1.engine_pb2_grpc); this module re-exports them."""

from macondo_client.pb.macondo.v1.engine_pb2_grpc import *  # noqa: F403
