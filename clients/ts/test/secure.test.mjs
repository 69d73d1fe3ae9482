// The client against servers with TLS and bearer tokens (started by tests/api/test_security_ts.py): every
// transport works with the right token and the test CA; no token, a wrong one, one in another header or
// without "Bearer" are refused on every transport with the server's words, the HTTP status and a hint; no CA,
// plain http to a TLS port, a Host the server does not answer to, application/grpc over HTTP/1.1, and the
// refusal of an address after too many failed tokens each fail with a clear error. Skipped without its
// environment (MACONDO_TLS_HTTP_URL, MACONDO_TLS_GRPC_URL, MACONDO_TLS_CA_FILE, MACONDO_TLS_TOKEN and, for the
// server requiring client certificates and refusing after 3 failures, MACONDO_TLS_STRICT_HTTP_URL,
// MACONDO_TLS_STRICT_GRPC_URL, MACONDO_TLS_CLIENT_CERT, MACONDO_TLS_CLIENT_KEY).
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { checkToken, Code, ConnectError, describeError, engineClient, nodeTransport } from "../dist/node.js";

const env = process.env;
const HTTP = env.MACONDO_TLS_HTTP_URL;
const GRPC = env.MACONDO_TLS_GRPC_URL;
const CA_FILE = env.MACONDO_TLS_CA_FILE;
const TOKEN = env.MACONDO_TLS_TOKEN;
const skip = !(HTTP && GRPC && CA_FILE && TOKEN) && "MACONDO_TLS_* not set (run by tests/api/test_security_ts.py)";
const EMPTY = Array(15).fill("15").join("/");

const TRANSPORTS = [["connect", HTTP], ["grpc-web", HTTP], ["grpc", GRPC]];

/** An interceptor setting headers of its own (a token in the wrong place, another Host, ...). */
const headers = (pairs) => (next) => async (req) => {
  for (const [k, v] of pairs) req.header.set(k, v);
  return next(req);
};

function client(protocol, url, options = {}, interceptors = []) {
  return engineClient(nodeTransport(url, { protocol, caFile: CA_FILE, ...options, interceptors: interceptors.map(headers) }));
}

/** A call that must fail: its EngineError. */
async function failure(call) {
  try {
    const out = call();
    if (out && typeof out[Symbol.asyncIterator] === "function") for await (const _ of out) { /* drain */ }
    else await out;
  } catch (err) {
    assert.ok(err instanceof ConnectError, `a ConnectError, got ${err}`);
    return describeError(err);
  }
  assert.fail("the call did not fail");
}

/** A unary call and a stream, both refused alike. */
async function bothRefused(c, check) {
  for (const [kind, call] of [["unary", () => c.getServerInfo({})],
    ["stream", () => c.autoplay({ games: 1, threads: 1, seed: 1 })]]) {
    const e = await failure(call);
    check(e, kind);
  }
}

test("the right token over TLS works on every transport", { skip, timeout: 120_000 }, async () => {
  for (const [protocol, url] of TRANSPORTS) {
    assert.ok(url.startsWith("https://"));
    const c = client(protocol, url, { token: TOKEN });
    assert.equal((await c.getServerInfo({})).apiVersion, "macondo.v1");
    const gen = await c.generateMoves({ position: { cgp: `${EMPTY} AEINQST/ 0/0 0` }, numPlays: 3 });
    assert.equal(gen.moves.length, 3);
    let last;
    for await (const snap of c.autoplay({ games: 1, threads: 1, seed: 1 })) last = snap;
    assert.ok(last.final && last.gamesDone === 1, protocol);
    // the CA given as PEM text instead of a file; the token as a file holds it (a trailing newline)
    const pem = readFileSync(CA_FILE, "utf8");
    const c2 = engineClient(nodeTransport(url, { protocol, ca: pem, token: `${TOKEN}\n` }));
    assert.equal((await c2.getServerInfo({})).apiVersion, "macondo.v1");
  }
});

test("no token, a wrong one, or one in the wrong place: refused with the server's words", { skip, timeout: 120_000 }, async () => {
  for (const [protocol, url] of TRANSPORTS) {
    const cases = [
      ["no token", client(protocol, url), protocol === "grpc" ? /no bearer token/ : /a bearer token is required/],
      ["a wrong token", client(protocol, url, { token: "wrong-token-0123456789abcdef" }), /not one this server accepts/],
      ["the token in x-token", client(protocol, url, {}, [[["x-token", TOKEN]]]), /bearer token/],
      ["the token in x-api-key", client(protocol, url, {}, [[["x-api-key", `Bearer ${TOKEN}`]]]), /bearer token/],
      ["authorization without Bearer", client(protocol, url, {}, [[["authorization", TOKEN]]]),
        protocol === "grpc" ? /Bearer/ : /not 'Bearer TOKEN'/],
      ["another scheme", client(protocol, url, {}, [[["authorization", `Basic ${TOKEN}`]]]), /Bearer/],
    ];
    for (const [what, c, words] of cases) {
      await bothRefused(c, (e, kind) => {
        const where = `${protocol} ${kind}, ${what}`;
        assert.equal(e.code, Code.Unauthenticated, `${where}: ${e.codeName} ${e.message}`);
        assert.match(e.message, words, where);
        assert.equal(e.httpStatus, 401, where);
        assert.match(e.hint, /bearer token/, where);
        assert.ok(!e.message.includes(TOKEN), "the token is never echoed");
      });
    }
  }
});

test("a token in the wrong form is refused by the client before any call", { skip }, () => {
  for (const [token, words] of [[`Bearer ${TOKEN}`, /leave out 'Bearer '/], ["two words", /without spaces/],
    ["é-token-0123456789", /printable ASCII/]]) {
    assert.throws(() => nodeTransport(HTTP, { token, caFile: CA_FILE }), words);
  }
  assert.throws(() => checkToken(" "), /empty/);
  assert.throws(() => nodeTransport(HTTP.replace("https:", "http:"), { caFile: CA_FILE }), /need an https:\/\/ URL/);
  assert.throws(() => nodeTransport(HTTP, { caFile: "/nonexistent/ca.pem" }), /cannot read the CA file/);
  assert.throws(() => nodeTransport(HTTP, { cert: "x" }), /needs its key/);
});

test("TLS mistakes: no CA, plain http to a TLS port", { skip, timeout: 60_000 }, async () => {
  for (const [protocol, url] of TRANSPORTS) {
    const noCa = engineClient(nodeTransport(url, { protocol, token: TOKEN }));
    const e = await failure(() => noCa.getServerInfo({}));
    assert.match(e.hint, /not signed by a CA this client trusts/, `${protocol}: ${e.message}`);
    const plain = engineClient(nodeTransport(url.replace("https:", "http:"), { protocol, token: TOKEN }));
    const p = await failure(() => plain.getServerInfo({}, { timeoutMs: 5000 }));
    assert.ok(p.code !== Code.Unauthenticated && p.httpStatus === undefined, `${protocol}: ${p.codeName} ${p.message}`);
    // (over HTTP/2 the refused handshake shows only as a cancelled stream)
    if (protocol !== "grpc") assert.match(p.hint, /https:\/\/ URL to a server without TLS, or http:\/\/ to one with TLS/);
  }
});

test("a Host the server does not answer to, and gRPC over HTTP/1.1, are refused clearly", { skip, timeout: 60_000 }, async () => {
  for (const protocol of ["connect", "grpc-web"]) {
    // (the certificate is checked against the name it is for: Node would check it against the Host header)
    const c = client(protocol, HTTP, { token: TOKEN, servername: "localhost" }, [[["host", "rebound.example"]]]);
    await bothRefused(c, (e, kind) => {
      assert.equal(e.code, Code.PermissionDenied, `${protocol} ${kind}: ${e.codeName} ${e.message}`);
      assert.match(e.message, /does not answer to the host 'rebound\.example'/);
      assert.equal(e.httpStatus, 403);
      assert.match(e.hint, /--allow-host/);
    });
  }
  // a proxy that turns a call into application/grpc over HTTP/1.1 to the HTTP port
  const c = client("connect", HTTP, { token: TOKEN }, [[["content-type", "application/grpc"]]]);
  const e = await failure(() => c.getServerInfo({}));
  assert.equal(e.code, Code.Unimplemented, `${e.codeName} ${e.message}`);
  assert.match(e.message, /gRPC needs HTTP\/2/);
  assert.equal(e.httpStatus, 415);
  assert.match(e.hint, /gRPC port/);
});

const STRICT_HTTP = env.MACONDO_TLS_STRICT_HTTP_URL;
const STRICT_GRPC = env.MACONDO_TLS_STRICT_GRPC_URL;
const CERT = env.MACONDO_TLS_CLIENT_CERT;
const KEY = env.MACONDO_TLS_CLIENT_KEY;
const skipStrict = skip || (!(STRICT_HTTP && STRICT_GRPC && CERT && KEY) && "the strict server is not given");

test("client certificates, then too many failed tokens: the address is refused (429)", { skip: skipStrict, timeout: 120_000 }, async () => {
  const withCert = (protocol, url, token) => engineClient(nodeTransport(url,
    { protocol, token, caFile: CA_FILE, certFile: CERT, keyFile: KEY }));
  for (const [protocol, url] of [["connect", STRICT_HTTP], ["grpc-web", STRICT_HTTP], ["grpc", STRICT_GRPC]]) {
    assert.equal((await withCert(protocol, url, TOKEN).getServerInfo({})).apiVersion, "macondo.v1");
    const noCert = engineClient(nodeTransport(url, { protocol, token: TOKEN, caFile: CA_FILE }));
    const e = await failure(() => noCert.getServerInfo({}, { timeoutMs: 10_000 }));
    assert.notEqual(e.code, Code.Unauthenticated, "refused in the handshake, before any token check");
  }
  // the strict server refuses an address after 3 failed tokens, whatever it sends next, on both ports
  for (let i = 0; i < 3; i++) {
    const e = await failure(() => withCert("connect", STRICT_HTTP, `guess-${i}-0123456789abcdef`).getServerInfo({}));
    assert.equal(e.code, Code.Unauthenticated);
  }
  const limited = [
    await failure(() => withCert("connect", STRICT_HTTP, TOKEN).getServerInfo({})),
    await failure(() => withCert("connect", STRICT_HTTP, TOKEN).autoplay({ games: 1, threads: 1 })),
    await failure(() => withCert("grpc-web", STRICT_HTTP, TOKEN).getServerInfo({})),
    await failure(() => withCert("grpc", STRICT_GRPC, TOKEN).getServerInfo({})),
  ];
  for (const e of limited) {
    assert.ok([Code.ResourceExhausted, Code.Unavailable].includes(e.code), `${e.codeName} ${e.message}`);
    assert.match(e.message, /too many failed authentications|auth_failures_per_minute/);
    assert.equal(e.httpStatus, 429);
    assert.match(e.hint, /after too many failed tokens/);
  }
  assert.match(limited[0].hint, /retry after \d+ s/);
});
