"""The API: one implementation of each RPC (service), the one conversion between protobuf and engine types,
game sessions, and the gRPC and Connect transports."""
