// Other languages through the client (started by tests/api/test_connect_node.py): Catalan and Polish CGPs go to
// the server and come back as it writes them (multi-letter tiles in brackets, Polish letters as they are), a
// game names its distribution, layout and squares, and GenerateMoves on those positions returns moves whose
// notation holds the multi-letter tiles and the Polish letters, the same on every transport. Skipped without
// its environment: MACONDO_HTTP_URL, MACONDO_GRPC_URL, MACONDO_CATALAN_CGP (a position with [L·L], [NY], [QU] on
// the board) and MACONDO_CATALAN_LEXICON, MACONDO_POLISH_CGP and MACONDO_POLISH_LEXICON.
import assert from "node:assert/strict";
import { test } from "node:test";
import { engineClient, nodeTransport } from "../dist/node.js";

const env = process.env;
const HTTP = env.MACONDO_HTTP_URL;
const GRPC = env.MACONDO_GRPC_URL;
const skip = !(HTTP && GRPC && env.MACONDO_CATALAN_CGP && env.MACONDO_POLISH_CGP) &&
  "MACONDO_CATALAN_CGP / MACONDO_POLISH_CGP not set (run by tests/api/test_connect_node.py)";
const TRANSPORTS = [["connect", HTTP], ["grpc-web", HTTP], ["grpc", GRPC]];
const EMPTY = Array(15).fill("15").join("/");

/** The first four fields of a CGP: board, racks, scores, scoreless turns. */
const fields = (cgp) => cgp.trim().split(/\s+/).slice(0, 4);

/** A CGP's board, racks and scores in, the game's CGP out: the same board, the rack on turn, the scores (the
 * opponent's rack is hidden to the player on turn, and is among the unseen tiles). */
async function roundTrip(c, cgp, lexicon, distribution) {
  const game = await c.createGame({ cgp, lexicon });
  try {
    const [board, racks, scores, zeros] = fields(cgp);
    const [gBoard, gRacks, gScores, gZeros] = fields(game.cgp);
    assert.equal(gBoard, board);
    assert.equal(gRacks.split("/")[0], racks.split("/")[0]);
    assert.deepEqual([gScores, gZeros], [scores, zeros]);
    assert.equal(game.distribution, distribution);
    assert.equal(game.layout, "standard15");
    assert.equal(game.premiums.length, 15);
    const again = await c.getGame({ gameId: game.gameId });
    assert.equal(again.cgp, game.cgp);
    return game;
  } finally {
    await c.deleteGame({ gameId: game.gameId });
  }
}

/** GenerateMoves on a position the server wrote back: the moves of the original position. */
async function movesOf(c, cgp, lexicon) {
  const game = await c.createGame({ cgp, lexicon });
  try {
    const direct = await c.generateMoves({ position: { cgp, lexicon }, numPlays: 50 });
    const written = await c.generateMoves({ position: { cgp: game.cgp, lexicon }, numPlays: 50 });
    assert.deepEqual(written.moves.map((m) => m.notation), direct.moves.map((m) => m.notation));
    return direct;
  } finally {
    await c.deleteGame({ gameId: game.gameId });
  }
}

const seen = {};

for (const [protocol, url] of TRANSPORTS) {
  test(`Catalan and Polish positions over ${protocol}`, { skip, timeout: 120_000 }, async () => {
    const c = engineClient(nodeTransport(url, { protocol }));
    // Catalan: the board's multi-letter tiles come back in brackets
    const cat = await roundTrip(c, env.MACONDO_CATALAN_CGP, env.MACONDO_CATALAN_LEXICON, "catalan");
    for (const tile of ["[L·L]", "[NY]", "[QU]"]) assert.ok(fields(cat.cgp)[0].includes(tile), tile);
    // a rack with L·L, QU and a blank: the moves spell them as tiles, and a blank played as one in lower case
    const catRack = `${EMPTY} A[L·L]?[QU]ESI/ 0/0 0`;
    const catMoves = await movesOf(c, catRack, env.MACONDO_CATALAN_LEXICON);
    assert.ok(catMoves.moves.length > 0);
    const multi = catMoves.moves.filter((m) => m.notation.includes("[L·L]") && m.notation.includes("[QU]"));
    assert.ok(multi.length > 0, catMoves.moves.map((m) => m.notation).join(", "));
    for (const m of multi) {
      assert.equal(m.display.trim(), m.notation);
      assert.ok(m.tiles.includes("[L·L]") && m.tilesPlayed <= 7);
    }
    // the same tiles written without brackets, where the distribution has no Q, Y or · alone
    const bare = await c.generateMoves({ position: { cgp: `${EMPTY} AL·L?QUESI/ 0/0 0`, lexicon: env.MACONDO_CATALAN_LEXICON },
      numPlays: 50 });
    assert.deepEqual(bare.moves.map((m) => m.notation), catMoves.moves.map((m) => m.notation));

    // Polish: letters with diacritics, blanks in lower case, on the board and in the moves
    const pol = await roundTrip(c, env.MACONDO_POLISH_CGP, env.MACONDO_POLISH_LEXICON, "polish");
    assert.match(fields(pol.cgp)[0], /FiŚ/);
    const polMoves = await movesOf(c, `${EMPTY} ŻÓŁWĄKA/ 0/0 0`, env.MACONDO_POLISH_LEXICON);
    const notations = polMoves.moves.map((m) => m.notation);
    for (const word of ["ŻÓŁW", "ŁĄKA", "WĄŻ"]) {
      assert.ok(notations.some((n) => n.endsWith(` ${word}`)), `${word} in ${notations.join(", ")}`);
    }
    seen[protocol] = [catMoves.moves.map((m) => [m.notation, m.score]), notations];
  });
}

test("the same moves on every transport", { skip }, () => {
  assert.deepEqual(seen.connect, seen.grpc);
  assert.deepEqual(seen["grpc-web"], seen.grpc);
});
