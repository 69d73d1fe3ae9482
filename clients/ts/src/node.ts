// Node transports: Connect or gRPC-Web over the server's HTTP port, or gRPC over HTTP/2 to its gRPC port.
import type { Transport } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport, createGrpcWebTransport } from "@connectrpc/connect-node";
import { bearer } from "./index.js";

export * from "./index.js";

export interface NodeOptions {
  protocol?: "connect" | "grpc-web" | "grpc";
  token?: string;
  useJson?: boolean;
}

/** baseUrl: "http://127.0.0.1:8080" for the HTTP port (connect, grpc-web), "http://127.0.0.1:50051" for
 * the gRPC port (grpc). */
export function nodeTransport(baseUrl: string, options: NodeOptions = {}): Transport {
  const interceptors = options.token ? [bearer(options.token)] : [];
  const useBinaryFormat = !options.useJson;
  switch (options.protocol ?? "connect") {
    case "grpc":
      return createGrpcTransport({ baseUrl, interceptors, useBinaryFormat });
    case "grpc-web":
      return createGrpcWebTransport({ baseUrl, httpVersion: "1.1", interceptors, useBinaryFormat });
    default:
      return createConnectTransport({ baseUrl, httpVersion: "1.1", interceptors, useBinaryFormat });
  }
}
