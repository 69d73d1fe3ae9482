"""The macondo.v1 protobuf/gRPC stubs under their historical name.

The generated stubs live in the macondo-client distribution (macondo_client.pb.macondo.v1, generated
from proto/ at build time); macondo_server.pb.macondo.v1.engine_pb2 and engine_pb2_grpc re-export the
same modules' contents, so both names give the very same classes."""
