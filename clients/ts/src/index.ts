// Typed client of the macondo-py engine server (macondo.v1) for the browser and Node.
//
// The service and message types are generated from the project's proto/ by protoc-gen-es (`npm run
// generate`); the transport comes from Connect: connect-web in the browser (Connect or gRPC-Web over the
// server's HTTP port), connect-node in Node (those two, or gRPC over HTTP/2 to the gRPC port; see ./node).
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError, createClient, type Client, type Interceptor, type Transport } from "@connectrpc/connect";
import { createConnectTransport, createGrpcWebTransport } from "@connectrpc/connect-web";
import { ErrorInfoSchema } from "./gen/google/rpc/error_info_pb.js";
import { Engine } from "./gen/macondo/v1/engine_pb.js";

export * from "./gen/macondo/v1/engine_pb.js";
export { ErrorInfoSchema } from "./gen/google/rpc/error_info_pb.js";
export { Code, ConnectError, create };

export type EngineClient = Client<typeof Engine>;

export interface WebOptions {
  /** "connect" (default) or "grpc-web" */
  protocol?: "connect" | "grpc-web";
  /** a bearer token the server accepts (`macondo serve --token-file`, `MACONDO_TOKENS`, `--http-token`), sent on
   * every call as `authorization: Bearer TOKEN` */
  token?: string;
  /** JSON instead of binary Protobuf on the wire (easier to read in the browser's network tab) */
  useJson?: boolean;
  /** more interceptors, run after the one adding the token */
  interceptors?: Interceptor[];
}

/** A token as the server accepts it: 1 to 512 printable ASCII characters without spaces (surrounding white
 * space, as a file read whole has, is dropped); anything else is an Error saying why, before any call. */
export function checkToken(token: string): string {
  const t = token.trim();
  if (/^bearer\s/i.test(t)) throw new Error("the token is the secret alone: leave out 'Bearer ' (the client adds it)");
  if (t === "") throw new Error("the token is empty");
  if (t.length > 512 || !/^[\x21-\x7e]+$/.test(t)) {
    throw new Error("a token is 1 to 512 printable ASCII characters without spaces");
  }
  return t;
}

/** A bearer token on every call. */
export function bearer(token: string): Interceptor {
  return (next) => async (req) => {
    req.header.set("authorization", `Bearer ${token}`);
    return next(req);
  };
}

/** A transport for the browser (fetch): the server's HTTP port, e.g. "http://127.0.0.1:8080". */
export function webTransport(baseUrl: string, options: WebOptions = {}): Transport {
  // (an empty token, as an unset variable gives, is no token)
  const interceptors = [...(options.token?.trim() ? [bearer(checkToken(options.token))] : []),
    ...(options.interceptors ?? [])];
  const make = options.protocol === "grpc-web" ? createGrpcWebTransport : createConnectTransport;
  return make({ baseUrl, interceptors, useBinaryFormat: !options.useJson });
}

/** The typed client: one method per RPC of macondo.v1.Engine (server-streaming RPCs are async iterables). */
export function engineClient(transport: Transport): EngineClient {
  return createClient(Engine, transport);
}

/** What a failed call says: the Connect code, the server's one-line message and the reason it attaches;
 * `httpStatus` when the server (or a proxy) refused the request before the RPC ran: the status the refusal
 * carries on the HTTP port (401 no or wrong token, 403 a Host it does not answer to, 413 too large, 415 gRPC
 * over HTTP/1.1, 429 too many failed tokens or busy; the gRPC port refuses the same with its codes); `hint`
 * what to do about it in plain words ("" when the message says it all). */
export interface EngineError {
  code: Code;
  codeName: string;
  message: string;
  reason: string;
  httpStatus?: number;
  hint: string;
}

const HINTS: Record<string, string> = {
  401: "the server requires a bearer token on every call: send one it accepts (the token option; in the board " +
    "the Server token field)",
  403: "the server does not answer to the host name used: use a name it answers to (its loopback names and " +
    "address) or start it with --allow-host NAME",
  413: "the request is larger than the server's max_request_bytes",
  415: "gRPC needs HTTP/2 and the gRPC port: this is the HTTP port (Connect, gRPC-Web), or a proxy spoke " +
    "HTTP/1.1 to the gRPC port",
  429: "after too many failed tokens the server refuses the address for up to a minute, whatever the token: " +
    "wait, then retry with the right token",
  busy: "the server is busy with other requests: retry shortly",
};

/** Why the server (or a proxy) refused a request before the RPC ran, as the HTTP status it carries on the HTTP
 * port and the key of its hint: from the message the client makes of a bare status ("HTTP 401"), or from the
 * server's own words (the gRPC port refuses the same things with the same words and gRPC codes). */
function refusal(ce: ConnectError, message: string): [number, string] | undefined {
  const bare = /^HTTP (\d{3})$/.exec(ce.rawMessage);
  const m = message;
  if (/too many failed authentications|auth_failures_per_minute/.test(m)) return [429, "429"];
  if (ce.code === Code.ResourceExhausted && m.startsWith("the server is busy")) return [429, "busy"];
  if (ce.code === Code.Unauthenticated) return [401, "401"];
  if (ce.code === Code.PermissionDenied && m.includes("does not answer to the host")) return [403, "403"];
  if (ce.code === Code.ResourceExhausted && m.includes("max_request_bytes")) return [413, "413"];
  if (m.includes("gRPC needs HTTP/2")) return [415, "415"];
  if (bare) return [Number(bare[1]), bare[1]];
  return undefined;
}

/** Plain words for a failure to reach the server at all (TLS, connection), from Node's error codes. */
function transportHint(ce: ConnectError): string {
  const causeCode = String((ce.cause as { code?: unknown } | undefined)?.code ?? "");
  const text = `${causeCode} ${ce.rawMessage}`;
  if (/SELF_SIGNED|UNABLE_TO_VERIFY|UNABLE_TO_GET_ISSUER|CERT_UNTRUSTED|self[- ]signed certificate|unable to verify/i.test(text)) {
    return "the server's TLS certificate is not signed by a CA this client trusts: give the client that CA " +
      "(ca or caFile)";
  }
  if (/ERR_TLS_CERT_ALTNAME_INVALID|altnames|Hostname\/IP does not match/i.test(text)) {
    return "the server's TLS certificate is not for the name in the URL (servername sets the name to check)";
  }
  if (/EPROTO|wrong version number|packet length too long|ECONNRESET|EPIPE|socket hang up/i.test(text)) {
    return "the connection failed: an https:// URL to a server without TLS, or http:// to one with TLS?";
  }
  if (/ECONNREFUSED/.test(text)) return "no server listens at that address and port";
  return "";
}

/** The server's words on a refusal a client saw only as a status ("HTTP 401", a stream refused before it
 * began): the server sends them in the `grpc-message` header too. */
function serverWords(ce: ConnectError): string {
  const said = /^HTTP \d{3}$/.test(ce.rawMessage) ? ce.metadata.get("grpc-message") : null;
  if (!said) return ce.rawMessage;
  try {
    return decodeURIComponent(said);
  } catch {
    return ce.rawMessage;
  }
}

export function describeError(err: unknown): EngineError {
  const ce = ConnectError.from(err);
  const info = ce.findDetails(ErrorInfoSchema)[0];
  const message = serverWords(ce);
  const refused = refusal(ce, message);
  const httpStatus = refused?.[0];
  let hint = refused ? HINTS[refused[1]] ?? "" : transportHint(ce);
  const retry = ce.metadata.get("retry-after");
  if (refused?.[1] === "429" && retry) hint += ` (retry after ${retry} s)`;
  return { code: ce.code, codeName: Code[ce.code], message, reason: info?.reason ?? "", httpStatus, hint };
}

/** A long job's stream with a stop: `for await (const snap of job) ...`; `job.stop()` asks the server to
 * stop (StopJob with the job id of the first snapshot), after which the stream still ends with the final
 * snapshot carrying the best result so far. `job.cancel()` drops the stream instead (the job stops too). */
export class Job<T extends { jobId: string; final: boolean }> implements AsyncIterable<T> {
  jobId = "";
  last: T | undefined;
  private stopAsked = false;
  private readonly abort = new AbortController();
  private readonly stream: AsyncIterable<T>;

  constructor(
    private readonly client: EngineClient,
    start: (signal: AbortSignal) => AsyncIterable<T>,
  ) {
    this.stream = start(this.abort.signal);
  }

  async *[Symbol.asyncIterator](): AsyncIterator<T> {
    for await (const snap of this.stream) {
      if (snap.jobId && !this.jobId) {
        this.jobId = snap.jobId;
        if (this.stopAsked) void this.stop();
      }
      this.last = snap;
      yield snap;
    }
  }

  /** Ask the server to stop the job; resolves to whether the job was still running. */
  async stop(): Promise<boolean> {
    this.stopAsked = true;
    if (!this.jobId) return false;
    const resp = await this.client.stopJob({ jobId: this.jobId });
    return resp.found;
  }

  cancel(): void {
    this.abort.abort();
  }
}

type StreamMethods = {
  [K in keyof EngineClient]: EngineClient[K] extends (req: never, opts?: never) => AsyncIterable<infer R>
    ? R extends { jobId: string; final: boolean } ? K : never
    : never;
}[keyof EngineClient];

/** Start a long job (simulate, solveEndgame, solvePreEndgame, autoplay) as a stoppable Job. */
export function startJob<K extends StreamMethods>(
  client: EngineClient,
  method: K,
  request: Parameters<EngineClient[K]>[0],
  timeoutMs?: number,
): Job<EngineClient[K] extends (...a: never[]) => AsyncIterable<infer R> ? R & { jobId: string; final: boolean } : never> {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  const fn = client[method] as any;
  return new Job(client, (signal) => fn.call(client, request, { signal, timeoutMs }));
}
