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
  /** the server's --http-token, sent as a bearer token */
  token?: string;
  /** JSON instead of binary Protobuf on the wire (easier to read in the browser's network tab) */
  useJson?: boolean;
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
  const interceptors = options.token ? [bearer(options.token)] : [];
  const make = options.protocol === "grpc-web" ? createGrpcWebTransport : createConnectTransport;
  return make({ baseUrl, interceptors, useBinaryFormat: !options.useJson });
}

/** The typed client: one method per RPC of macondo.v1.Engine (server-streaming RPCs are async iterables). */
export function engineClient(transport: Transport): EngineClient {
  return createClient(Engine, transport);
}

/** What a failed call says: the Connect code, the server's one-line message and the reason it attaches. */
export interface EngineError {
  code: Code;
  codeName: string;
  message: string;
  reason: string;
}

export function describeError(err: unknown): EngineError {
  const ce = ConnectError.from(err);
  const info = ce.findDetails(ErrorInfoSchema)[0];
  return { code: ce.code, codeName: Code[ce.code], message: ce.rawMessage, reason: info?.reason ?? "" };
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
