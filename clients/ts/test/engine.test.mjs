// The generated client against a live server (started by tests/test_connect_node.py): every RPC of
// macondo.v1.Engine over Connect and gRPC-Web (the HTTP port) and over gRPC (the gRPC port), a stream
// stopped with StopJob and one cancelled, a deadline, and typed errors.
import assert from "node:assert/strict";
import { test } from "node:test";
import { toJson } from "@bufbuild/protobuf";
import {
  Code, ConnectError, Engine, GenerateMovesResponseSchema, describeError, engineClient, nodeTransport, startJob,
} from "../dist/node.js";

const HTTP = process.env.MACONDO_HTTP_URL;
const GRPC = process.env.MACONDO_GRPC_URL;
const START = process.env.MACONDO_START_CGP;
const ENDGAME = process.env.MACONDO_ENDGAME_CGP;
const PEG = process.env.MACONDO_PEG_CGP;
const TOKEN = process.env.MACONDO_HTTP_TOKEN || undefined;
if (!HTTP || !GRPC || !START || !ENDGAME || !PEG) throw new Error("MACONDO_HTTP_URL, MACONDO_GRPC_URL and the CGPs are needed");

const TRANSPORTS = [
  ["connect", HTTP], ["grpc-web", HTTP], ["grpc", GRPC],
];

function client(protocol, url, called) {
  const transport = nodeTransport(url, { protocol, token: protocol === "grpc" ? undefined : TOKEN });
  // count the RPCs this transport really carried
  const counting = {
    ...transport,
    unary: (method, ...rest) => { called.add(method.name); return transport.unary(method, ...rest); },
    stream: (method, ...rest) => { called.add(method.name); return transport.stream(method, ...rest); },
  };
  return engineClient(counting);
}

async function finalOf(job) {
  let count = 0;
  for await (const _ of job) count++;
  return { last: job.last, count };
}

async function expectError(promise, code, needle) {
  try {
    await promise;
  } catch (err) {
    assert.ok(err instanceof ConnectError, `a ConnectError, got ${err}`);
    const info = describeError(err);
    assert.equal(info.code, code, `${info.codeName}: ${info.message}`);
    if (needle) assert.match(info.message, needle);
    return info;
  }
  assert.fail("the call did not fail");
}

const moves = {};

for (const [protocol, url] of TRANSPORTS) {
  test(`every RPC over ${protocol}`, { timeout: 180_000 }, async () => {
    const called = new Set();
    const c = client(protocol, url, called);

    const info = await c.getServerInfo({});
    assert.equal(info.apiVersion, "macondo.v1");

    const gen = await c.generateMoves({ position: { cgp: START }, numPlays: 5 });
    assert.equal(gen.moves.length, 5);
    moves[protocol] = toJson(GenerateMovesResponseSchema, gen);

    const bad = await expectError(c.generateMoves({ position: { cgp: "bogus" } }), Code.InvalidArgument, /CGP has 1 fields/);
    assert.equal(bad.reason, "INVALID_ARGUMENT");
    await expectError(c.generateMoves({ position: { cgp: START, lexicon: "NOPE" } }), Code.NotFound, /NOPE/);

    // a long job stopped with StopJob: the stream still ends with the best result so far
    const auto = startJob(c, "autoplay", { games: 100000, threads: 1, seed: 3 }, 60_000);
    let seen = 0;
    for await (const snap of auto) {
      if (++seen === 1) assert.equal(await auto.stop(), true);
    }
    assert.ok(auto.last.final && auto.last.stopped && auto.last.gamesDone < 100000);

    const sim = await finalOf(startJob(c, "simulate",
      { position: { cgp: START }, numPlays: 3, iterations: 20, plies: 2, seed: 7, threads: 1 }, 60_000));
    assert.ok(sim.last.final && !sim.last.stopped && sim.last.plays.length === 3);
    // the statistics: int64 counts as bigints, every iteration in one bin of each ply's histogram
    const stats = await finalOf(startJob(c, "simulate",
      { position: { cgp: START }, numPlays: 2, iterations: 20, plies: 2, seed: 7, threads: 1, stats: true }, 60_000));
    assert.equal(stats.last.scoreBinWidth, 10);
    for (const p of stats.last.plays) {
      assert.deepEqual(p.plyStats.map((s) => s.scoreHistogram.reduce((a, b) => a + b, 0n)), [20n, 20n]);
      assert.ok(p.plyStats[0].heatmap.length >= 225 && p.opponentLeave.some((t) => t.held > 0));
    }
    assert.ok(sim.last.plays.every((p) => p.plyStats.every((s) => s.scoreHistogram.length === 0)));

    const eg = await finalOf(startJob(c, "solveEndgame", { position: { cgp: ENDGAME }, plies: 2, threads: 1 }, 60_000));
    assert.ok(eg.last.final && eg.last.bestLine.length > 0);

    const peg = await finalOf(startJob(c, "solvePreEndgame",
      { position: { cgp: PEG }, endgamePlies: 1, threads: 1, onlySolve: ["13L ONYX", "13L OXY"] }, 120_000));
    assert.ok(peg.last.final && peg.last.complete);
    assert.deepEqual(peg.last.plays.map((p) => p.move.notation).sort(), ["13L ONYX", "13L OXY"]);
    await expectError(c.solvePreEndgame({ position: { cgp: PEG }, onlySolve: ["Z9 NOPE"] })[Symbol.asyncIterator]().next(),
      Code.InvalidArgument);

    // game sessions
    const game = await c.createGame({ seed: 5 });
    assert.ok(game.gameId);
    assert.equal((await c.getGame({ gameId: game.gameId })).gameId, game.gameId);
    const first = await c.generateMoves({ position: { cgp: game.cgp, lexicon: game.lexicon }, numPlays: 1 });
    const played = await c.playMove({ gameId: game.gameId, move: first.moves[0].notation });
    assert.equal(played.history.length, 1);
    const em = await c.engineMove({ gameId: game.gameId, strategy: "static" });
    assert.equal(em.game.history.length, 2);

    // a review of the game so far, then a batch summed up per player: the game under two names and a broken one
    for (let i = 0; i < 6; i++) await c.engineMove({ gameId: game.gameId, strategy: "static" });
    const { gcg } = await c.exportGame({ gameId: game.gameId });
    const budget = { simIterations: 10, simPlays: 2, simPlies: 1, pegMaxBag: 0, endgamePlies: 1, threads: 1 };
    const one = await finalOf(startJob(c, "analyzeGame", { gcg, ...budget }, 120_000));
    assert.ok(one.last.final && !one.last.stopped && one.last.turnsDone === 8 && one.last.summary.length === 2);
    assert.ok(one.last.turns.every((t) => t.played && t.winAfter !== undefined));
    const batch = await finalOf(startJob(c, "reviewGames", { games: [{ name: "a.gcg", gcg }, { name: "b.gcg", gcg },
      { name: "broken.gcg", gcg: ">x: ABC 8Z QQQ +10 10\n" }], options: budget, top: 3 }, 120_000));
    const sum = batch.last.summary;
    assert.ok(batch.last.final && sum.games === 2 && sum.analysed === 2 && sum.failed === 1);
    assert.deepEqual(sum.players.map((p) => p.games), [2, 2]);
    for (const p of sum.players) {
      const own = one.last.summary.find((s) => s.nick === p.nicks[0]);
      assert.equal(p.turns, 2 * own.turns);
      assert.ok(Math.abs(p.mistakeIndexPerGame - own.mistakeIndex) < 1e-9);
      assert.ok(p.biggestMistakes.length <= 3);
    }
    assert.equal(JSON.parse(batch.last.json).players.length, 2);

    // RPCs added to the service later: each answers, or fails with a worded, typed error (never UNKNOWN)
    for (const method of Engine.methods) {
      if (called.has(method.name) || method.name === "DeleteGame") continue;
      const name = method.localName;
      try {
        const out = c[name]({ gameId: game.gameId });
        if (method.methodKind === "server_streaming") { for await (const _ of out) { /* drain */ } } else await out;
      } catch (err) {
        const e = describeError(err);
        // (a method in the proto that the server does not implement yet: UNIMPLEMENTED over Connect; grpcio
        // answers UNKNOWN "Method not implemented!" for those)
        const notYet = e.code === Code.Unimplemented || (e.code === Code.Unknown && /not implemented/.test(e.message));
        assert.ok(notYet || ![Code.Unknown, Code.Internal].includes(e.code), `${method.name}: ${e.codeName} ${e.message}`);
        assert.ok(e.message.length > 0, `${method.name}: an error without a message`);
      }
    }
    assert.equal((await c.deleteGame({ gameId: game.gameId })).found, true);
    await expectError(c.getGame({ gameId: game.gameId }), Code.NotFound);

    const missing = Engine.methods.filter((m) => !called.has(m.name)).map((m) => m.name);
    assert.deepEqual(missing, [], "every RPC of the service was called");
  });
}

test("the same moves over every transport", () => {
  assert.deepEqual(moves.connect, moves.grpc);
  assert.deepEqual(moves["grpc-web"], moves.grpc);
});

test("cancel and deadline stop the job", { timeout: 60_000 }, async () => {
  const c = client("connect", HTTP, new Set());
  const job = startJob(c, "autoplay", { games: 100000, threads: 1, seed: 2 }, 60_000);
  await assert.rejects(async () => {
    for await (const _ of job) job.cancel();
  }, (err) => ConnectError.from(err).code === Code.Canceled);
  let running = 1;
  for (let i = 0; i < 60 && running; i++) {
    await new Promise((r) => setTimeout(r, 50));
    running = (await c.getServerInfo({})).runningJobs;
  }
  assert.equal(running, 0, "the cancelled job stopped");

  const t0 = Date.now();
  const timed = await finalOf(startJob(c, "autoplay", { games: 100000, threads: 1, seed: 1 }, 1500));
  assert.ok(timed.last.final && timed.last.stopped);
  assert.ok(Date.now() - t0 < 2500);
});
