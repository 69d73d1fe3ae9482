// Node transports: Connect or gRPC-Web over the server's HTTP port, or gRPC over HTTP/2 to its gRPC port; plain
// or over TLS (https:// URLs), with a bearer token.
import { readFileSync } from "node:fs";
import type { Interceptor, Transport } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport, createGrpcWebTransport } from "@connectrpc/connect-node";
import { bearer, checkToken } from "./index.js";

export * from "./index.js";

type Pem = string | Buffer;

export interface NodeOptions {
  protocol?: "connect" | "grpc-web" | "grpc";
  /** a bearer token the server accepts (`macondo serve --token-file`, `MACONDO_TOKENS`), sent on every call
   * as `authorization: Bearer TOKEN` */
  token?: string;
  useJson?: boolean;
  /** PEM of the CA that signed the server's certificate, for an https:// URL whose certificate a private or
   * self-signed CA issued (a certificate of a public CA needs nothing: Node trusts its own CA list) */
  ca?: Pem | Pem[];
  /** the same read from a PEM file */
  caFile?: string;
  /** a client certificate and its key (PEM, or files), for a server started with --tls-client-ca */
  cert?: Pem;
  certFile?: string;
  key?: Pem;
  keyFile?: string;
  /** the name the server's certificate must carry, when the URL names the server otherwise (an address) */
  servername?: string;
  /** more interceptors, run after the one adding the token (headers a proxy wants, logging, ...) */
  interceptors?: Interceptor[];
}

function pemFile(path: string, what: string): Buffer {
  try {
    return readFileSync(path);
  } catch (err) {
    throw new Error(`cannot read the ${what} file ${path}: ${(err as NodeJS.ErrnoException).code ?? err}`);
  }
}

/** The TLS options of Node's https.request and http2.connect from the client's options (none for http://). */
export function tlsOptions(baseUrl: string, options: NodeOptions): Record<string, unknown> | undefined {
  const url = new URL(baseUrl);
  const ca = options.ca ?? (options.caFile ? pemFile(options.caFile, "CA") : undefined);
  const cert = options.cert ?? (options.certFile ? pemFile(options.certFile, "client certificate") : undefined);
  const key = options.key ?? (options.keyFile ? pemFile(options.keyFile, "client key") : undefined);
  const given = ca !== undefined || cert !== undefined || key !== undefined || options.servername !== undefined;
  if (url.protocol === "http:") {
    if (given) throw new Error(`${baseUrl}: TLS options (ca, cert, key) need an https:// URL`);
    return undefined;
  }
  if (url.protocol !== "https:") throw new Error(`${baseUrl}: the URL must start with http:// or https://`);
  if ((cert === undefined) !== (key === undefined)) throw new Error("a client certificate needs its key, and a key its certificate");
  const out: Record<string, unknown> = {};
  if (ca !== undefined) out.ca = ca;
  if (cert !== undefined) Object.assign(out, { cert, key });
  if (options.servername !== undefined) out.servername = options.servername;
  return out;
}

/** baseUrl: "http://127.0.0.1:8080" (or https:// on a server with --tls-cert) for the HTTP port (connect,
 * grpc-web), "http://127.0.0.1:50051" (or https://) for the gRPC port (grpc). */
export function nodeTransport(baseUrl: string, options: NodeOptions = {}): Transport {
  // (an empty token, as an unset variable gives, is no token)
  const interceptors = [...(options.token?.trim() ? [bearer(checkToken(options.token))] : []),
    ...(options.interceptors ?? [])];
  const useBinaryFormat = !options.useJson;
  const nodeOptions = tlsOptions(baseUrl, options);
  switch (options.protocol ?? "connect") {
    case "grpc":
      return createGrpcTransport({ baseUrl, interceptors, useBinaryFormat, nodeOptions });
    case "grpc-web":
      return createGrpcWebTransport({ baseUrl, httpVersion: "1.1", interceptors, useBinaryFormat, nodeOptions });
    default:
      return createConnectTransport({ baseUrl, httpVersion: "1.1", interceptors, useBinaryFormat, nodeOptions });
  }
}
