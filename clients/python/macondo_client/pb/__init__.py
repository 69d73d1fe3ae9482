"""Generated protobuf/gRPC stubs of the macondo.v1 API (made by build_protos.py at build time; not committed)."""
