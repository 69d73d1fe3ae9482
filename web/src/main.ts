// The analysis board: one page talking Connect to the server that serves it (same origin), through the
// typed client generated from proto/ (clients/ts). Every result shown comes from the server as it streams.
import {
  checkToken,
  ConnectError,
  describeError,
  engineClient,
  startJob,
  webTransport,
  MoveType,
  type AnalyzeProgress,
  type EndgameProgress,
  type EngineClient,
  type GameState,
  type Job,
  type Move,
  type PreEndgameProgress,
  type ReviewGamesProgress,
  type ServerInfo,
  type SimulateProgress,
} from "@macondo/client";
import { $, h, listOf, replaceKeepingScroll, summaryList, table } from "./dom";
import { addOnlySolve, describePegOptions, newPegView, pegOptions, renderPeg, resetPegOptions } from "./peg";
import { newReviewView, renderBatch, renderReview, type ReviewView } from "./review";
import { clearSimHeat, newSimStatsView, paintHeat, renderSimStats } from "./simstats";

// ------------------------------------------------------------------ set-up

const TOKEN_KEY = "macondo-token";
let client: EngineClient = makeClient();

/** The client of the server that served the page, with the token this tab was given (sessionStorage: it lasts
 * as long as the tab and never leaves this origin). */
function makeClient(): EngineClient {
  const token = sessionStorage.getItem(TOKEN_KEY) || undefined;
  try {
    return engineClient(webTransport(location.origin, { token }));
  } catch {
    sessionStorage.removeItem(TOKEN_KEY);      // a token in a form the client refuses: none
    return engineClient(webTransport(location.origin));
  }
}

// the squares of the board shown before a game names its own (GameState.premiums), the standard 15x15:
// = triple word, - double word, " triple letter, ' double letter (and on larger boards ~ quadruple word,
// ^ quadruple letter)
const LAYOUT = [
  "=  '   =   '  =", " -   \"   \"   - ", "  -   ' '   -  ", "'  -   '   -  '", "    -     -    ",
  " \"   \"   \"   \" ", "  '   ' '   '  ", "=  '   -   '  =", "  '   ' '   '  ", " \"   \"   \"   \" ",
  "    -     -    ", "'  -   '   -  '", "  -   ' '   -  ", " -   \"   \"   - ", "=  '   =   '  =",
];
const PREMIUM: Record<string, [string, string]> = {
  "~": ["qws", "4W"], "=": ["tws", "3W"], "-": ["dws", "2W"],
  "^": ["qls", "4L"], "\"": ["tls", "3L"], "'": ["dls", "2L"],
};
const COLS = "ABCDEFGHIJKLMNOPQRSTU";     // boards up to 21x21
const RACK_SIZE = 7;

type AnyJob = Job<SimulateProgress | EndgameProgress | PreEndgameProgress | AnalyzeProgress | ReviewGamesProgress>;

interface State {
  game?: GameState;
  cgp: string;            // the position analysed: the game's at its cursor
  origin: "cgp" | "gcg" | "new";   // how the game began (GCG cannot record a game begun at a CGP)
  lexicon: string;        // the lexicon override chosen, "" = the position's own
  job?: AnyJob;
  stopAsked: boolean;     // the user pressed Stop during the current job
  cursor?: { row: number; col: number; vertical: boolean };
  preview?: Move;
  review?: { view: ReviewView; gameId: string };   // the review shown, of this game's record as it was
}
const state: State = { cgp: "", origin: "new", lexicon: "", stopAsked: false };

// ------------------------------------------------------------------ errors and status

/** The server's words and code; a request refused before it ran (no or wrong token, a host name the server does
 * not answer to, too many failed tokens, gRPC over HTTP/1.1) also says its HTTP status and what to do. */
function showError(err: unknown): void {
  const e = describeError(err);
  const code = e.codeName.replace(/([a-z])([A-Z])/g, "$1_$2").toLowerCase();
  const el = $("error");
  const status = e.httpStatus ? `, HTTP ${e.httpStatus}` : "";
  el.textContent = `${e.message} (${code}${e.reason && e.reason.toLowerCase() !== code ? `, ${e.reason}` : ""}${status})`;
  const hint = e.httpStatus === 401
    ? "This server requires a token: enter it under Server token (top right) and press Use token."
    : e.hint;
  if (hint) el.append(h("span", { className: "error-hint", textContent: hint }));
  el.dataset.code = code;
  if (e.httpStatus) el.dataset.status = String(e.httpStatus);
  else delete el.dataset.status;
  if (e.httpStatus === 401) {
    $<HTMLDetailsElement>("token-box").open = true;
    $("token-box").classList.add("wanted");
  }
}

function clearError(): void {
  $("error").textContent = "";
  delete $("error").dataset.code;
  delete $("error").dataset.status;
}

/** The header's words for a server that did not serve a request. */
function unanswered(err: unknown): string {
  const e = describeError(err);
  switch (e.httpStatus) {
    case 401: return "the server requires a token (Server token, top right)";
    case 403: return "the server does not answer to this host name";
    case 429: return "the server refuses this address for now (too many failed tokens, or busy)";
    default: return "the server did not answer";
  }
}

async function guarded(fn: () => Promise<void>): Promise<void> {
  clearError();
  try {
    await fn();
  } catch (err) {
    showError(err);
  }
}

// ------------------------------------------------------------------ the server and its job count

let ownJobs = 0;            // this board's jobs the server has registered (first snapshot seen, final not yet)
let serverJobs = 0;
let pollTimer: number | undefined;
let pollSeq = 0;

function renderServer(info: ServerInfo, withLexica: boolean): void {
  $("server-status").textContent = `server ${info.version} · default lexicon ${info.defaultLexicon}`;
  serverJobs = info.runningJobs;
  renderJobCount();
  if (withLexica) {
    const sel = $<HTMLSelectElement>("lexicon");
    sel.length = 1;
    for (const lx of info.lexica) sel.add(new Option(lx.name, lx.name));
  }
}

function renderJobCount(): void {
  const el = $("job-count");
  const own = ownJobs;
  // the board's own running jobs are registered on the server before their first snapshot, so the count is at
  // least theirs even before the next poll has answered
  const n = Math.max(serverJobs, own);
  let text = n === 0 ? "no jobs running" : `${n} job${n === 1 ? "" : "s"} running`;
  if (own > 0) text += own >= n ? (n === 1 ? " (this board's)" : " (all this board's)") : ` (${own} from this board)`;
  if (el.textContent !== text) el.textContent = text;
  el.dataset.jobs = String(n);
  el.dataset.own = String(own);
}

async function loadServerInfo(): Promise<void> {
  const seq = ++pollSeq;
  try {
    const info = await client.getServerInfo({});
    if (seq === pollSeq) renderServer(info, true);
  } catch (err) {
    $("server-status").textContent = unanswered(err);
    showError(err);
    if (pollAfterRefusal(err)) return;
  }
  schedulePoll();
}

/** A refused poll changes the polling: none after no token, a wrong one or a host name the server does not
 * answer to (a board left open without its token must not use up its address's failed-token allowance; a new
 * token starts it again), and after a 429 only once the server's retry-after has passed. */
function pollAfterRefusal(err: unknown): boolean {
  const status = describeError(err).httpStatus;
  if (status === 401 || status === 403) {
    window.clearTimeout(pollTimer);
    return true;
  }
  if (status === 429) {
    const retry = Number(ConnectError.from(err).metadata.get("retry-after") ?? "");
    schedulePoll(Number.isFinite(retry) && retry > 0 ? retry * 1000 : 60_000);
    return true;
  }
  return false;
}

/** The job count: every second while jobs run (this board's or others'), every 10 s otherwise. */
async function pollJobs(): Promise<void> {
  const seq = ++pollSeq;
  try {
    const info = await client.getServerInfo({});
    if (seq === pollSeq) renderServer(info, false);
  } catch (err) {
    if (seq === pollSeq) {
      $("server-status").textContent = unanswered(err);
      if (pollAfterRefusal(err)) return;
    }
  }
  if (seq === pollSeq) schedulePoll();
}

function schedulePoll(delayMs?: number): void {
  window.clearTimeout(pollTimer);
  const busy = ownJobs > 0 || serverJobs > 0 || state.job !== undefined;
  pollTimer = window.setTimeout(() => {
    if (document.hidden && !busy) schedulePoll();
    else void pollJobs();
  }, delayMs ?? (busy ? 1000 : 10000));
}

// ------------------------------------------------------------------ positions and games

async function setGame(next: GameState, origin?: State["origin"]): Promise<void> {
  const old = state.game;
  if (origin) state.origin = origin;
  state.game = next;
  state.cgp = next.cgp;
  state.cursor = undefined;
  state.preview = undefined;
  $<HTMLInputElement>("move-input").value = "";
  // a copied CGP or an export note belongs to the position it was made on
  $("cgp-copy-box").hidden = true;
  $("copy-status").textContent = "";
  delete $("copy-status").dataset.copied;
  if (old && old.gameId !== next.gameId) {
    client.deleteGame({ gameId: old.gameId }).catch(() => undefined);   // sessions are bounded per client
  }
  // a review belongs to the record it analysed: moving the cursor keeps it, a changed record does not
  const rv = state.review;
  if (rv && (rv.gameId !== next.gameId || rv.view.numEvents !== next.numEvents) && !state.job) clearReview();
  renderAll();
}

async function loadCgp(): Promise<void> {
  const cgp = $<HTMLTextAreaElement>("cgp").value.trim();
  state.lexicon = $<HTMLSelectElement>("lexicon").value;
  await setGame(await client.createGame({ cgp, lexicon: state.lexicon }), "cgp");
  clearResults();
}

async function newGame(): Promise<void> {
  state.lexicon = $<HTMLSelectElement>("lexicon").value;
  await setGame(await client.createGame({ lexicon: state.lexicon }), "new");
  clearResults();
}

async function loadGcg(): Promise<void> {
  const gcg = $<HTMLTextAreaElement>("gcg").value;
  state.lexicon = $<HTMLSelectElement>("lexicon").value;
  await setGame(await client.createGame({ gcg, lexicon: state.lexicon, turn: 0 }), "gcg");
  clearResults();
}

/** Move the game's cursor (the same session: moves played at the cursor replace the events after it). */
async function goTo(turn: number): Promise<void> {
  const g = state.game;
  if (!g || g.numEvents === 0 || turn < 0 || turn > g.numEvents || turn === g.turn) return;
  await setGame(await client.navigateGame({ gameId: g.gameId, to: "turn", turn }));
  clearResults();
}

async function step(where: "first" | "prev" | "next" | "last"): Promise<void> {
  const g = state.game;
  if (!g) return;
  await goTo({ first: 0, prev: g.turn - 1, next: g.turn + 1, last: g.numEvents }[where]);
}

async function playMove(move: string): Promise<void> {
  if (!state.game) throw new Error("load a position first");
  if (!move) throw new Error("type a move (8G QI, exch ABC, pass), click a square or a move in the list");
  const tileOrder = $<HTMLInputElement>("tile-order").value.replace(/\s+/g, "");
  const game = await client.playMove({ gameId: state.game.gameId, move, tileOrder });
  $<HTMLInputElement>("tile-order").value = "";
  await setGame(game);
  clearResults();
}

async function engineMove(): Promise<void> {
  if (!state.game) throw new Error("load a position first");
  if (state.game.gameOver) throw new Error("the game is over");
  const strategy = $<HTMLSelectElement>("engine-strategy").value;
  const status = $("engine-status");
  status.textContent = `the engine (${strategy}) is choosing…`;
  const button = $<HTMLButtonElement>("engine-play");
  button.disabled = true;
  try {
    const resp = await client.engineMove({ gameId: state.game.gameId, strategy });
    await setGame(resp.game!);
    clearResults();
    const planned = resp.budgetSeconds ? ` of ${resp.budgetSeconds.toFixed(1)}` : "";
    status.textContent = `${strategy} played ${resp.move?.notation ?? "?"} (${resp.phase}, ` +
      `${resp.seconds.toFixed(1)} s${planned})${resp.detail ? `: ${resp.detail}` : ""}`;
    status.dataset.move = resp.move?.notation ?? "";
    status.dataset.phase = resp.phase;
  } catch (err) {
    status.textContent = "";
    throw err;
  } finally {
    button.disabled = !state.game || state.game.gameOver;
  }
}

function clockText(seconds: number): string {
  const s = Math.abs(seconds);
  const text = `${Math.floor(s / 60)}:${String(Math.floor(s % 60)).padStart(2, "0")}`;
  return seconds < 0 ? `−${text} over` : text;
}

async function copyCgp(): Promise<void> {
  const cgp = state.game?.cgp ?? "";
  if (!cgp) throw new Error("load a position first");
  const box = $("cgp-copy-box");
  const field = $<HTMLInputElement>("cgp-copy");
  field.value = cgp;
  const status = $("copy-status");
  try {
    if (!navigator.clipboard?.writeText) throw new Error("no clipboard API");
    await navigator.clipboard.writeText(cgp);
    status.textContent = "CGP copied to the clipboard";
    status.dataset.copied = "clipboard";
    box.hidden = true;
  } catch {
    // plain http from another host, or a browser that refuses: the text, selected, to copy by hand
    box.hidden = false;
    field.focus();
    field.select();
    status.textContent = "the clipboard is not available here: the CGP is selected below (Ctrl+C copies it)";
    status.dataset.copied = "field";
  }
}

async function exportGcg(): Promise<void> {
  const g = state.game;
  if (!g) throw new Error("load a game first");
  const resp = await client.exportGame({ gameId: g.gameId });
  const name = `${g.players.join("-vs-").replace(/[^\w.-]+/g, "_") || "game"}.gcg`;
  const url = URL.createObjectURL(new Blob([resp.gcg], { type: "text/plain;charset=utf-8" }));
  const a = h("a", { href: url, download: name });
  document.body.append(a);
  a.click();
  a.remove();
  window.setTimeout(() => URL.revokeObjectURL(url), 10_000);
  $("copy-status").textContent = `exported ${name} (${resp.gcg.split("\n").filter((l) => l.startsWith(">")).length} events)`;
}

// ------------------------------------------------------------------ drawing the position

/** The board of a CGP as rows of cells (as many as the CGP has: 15, 21, ...): "" empty, else the tile
 * (lowercase = blank; a multi-letter tile written [L·L] is one cell "L·L"). */
function parseBoard(cgp: string): string[][] {
  const rows = (cgp.trim().split(/\s+/)[0] ?? "").split("/");
  return rows.map((row) => {
    const cells: string[] = [];
    for (const m of row.matchAll(/(\d+)|\[([^\]]+)\]|(.)/gu)) {
      if (m[1]) for (let i = 0; i < Number(m[1]); i++) cells.push("");
      else cells.push(m[2] ?? m[3]);
    }
    return cells;
  });
}

/** The tiles of a rack, a draw or a move's tiles as the engine writes them: one per letter, a multi-letter tile
 * in brackets ("?AEI[L·L][QU]S" is 8 tiles, the last but one "QU"). */
function tilesOf(text: string): string[] {
  return [...text.matchAll(/\[([^\]]+)\]|(.)/gu)].map((m) => m[1] ?? m[2]);
}

/** A tile's label on a square or a rack; labels of two or three letters (L·L, NY, QU, CH, RR) are set smaller
 * so that they fit the square. */
function tileLabel(label: string): HTMLElement {
  const span = h("span", { className: "lbl", textContent: label });
  const width = [...label].length;
  if (width > 1) span.classList.add(width > 2 ? "w3" : "w2");
  return span;
}

/** The squares a placement puts tiles on (played-through squares left out). */
function moveSquares(move: Move | undefined): Map<string, string> {
  const out = new Map<string, string>();
  if (!move || move.type !== MoveType.TILE_PLACEMENT) return out;
  tilesOf(move.tiles).forEach((t, i) => {
    if (t === ".") return;
    const r = move.row + (move.direction === 1 ? i : 0);
    const c = move.column + (move.direction === 1 ? 0 : i);
    out.set(`${r},${c}`, t);
  });
  return out;
}

/** The last move on the board at the cursor (a pass, an exchange or a withdrawn phony puts nothing down). */
function lastMove(): Move | undefined {
  const hist = state.game?.history ?? [];
  return hist.length ? hist[hist.length - 1].move : undefined;
}

function renderBoard(): void {
  const board = parseBoard(state.cgp);
  const preview = moveSquares(state.preview);
  const last = lastMove();
  const lastSquares = moveSquares(last);
  // the grid is as large as the position (15x15, 21x21, ...), its squares those the game's layout names
  const premiums = state.game?.premiums.length ? state.game.premiums : LAYOUT;
  const dim = state.cgp ? board.length : premiums.length;
  const el = $("board");
  el.style.gridTemplateColumns = `1.4rem repeat(${dim}, var(--sq))`;
  el.classList.toggle("large", dim > 15);
  const cells: HTMLElement[] = [h("div", { className: "hdr" })];
  for (const c of COLS.slice(0, dim)) {
    const hd = h("div", { className: "hdr", textContent: c });
    hd.setAttribute("aria-hidden", "true");
    cells.push(hd);
  }
  for (let r = 0; r < dim; r++) {
    const hd = h("div", { className: "hdr", textContent: String(r + 1) });
    hd.setAttribute("aria-hidden", "true");
    cells.push(hd);
    for (let c = 0; c < dim; c++) {
      const sq = h("button", { type: "button", className: "sq" });
      const tile = board[r]?.[c] ?? "";
      const prem = PREMIUM[premiums[r]?.[c] ?? " "];
      const coord = `${COLS[c]}${r + 1}`;
      const pv = preview.get(`${r},${c}`);
      if (tile) {
        const blank = tile !== tile.toUpperCase();
        const isLast = lastSquares.has(`${r},${c}`);
        sq.classList.add("tile");
        if (blank) sq.classList.add("blank");
        if (isLast) sq.classList.add("last");
        sq.append(tileLabel(tile.toUpperCase()));
        sq.setAttribute("aria-label", `${coord} ${tile.toUpperCase()}${blank ? " (blank)" : ""}${isLast ? " (last move)" : ""}`);
      } else if (pv) {
        sq.classList.add("preview");
        sq.append(tileLabel(pv.toUpperCase()));
        sq.setAttribute("aria-label", `${coord} ${pv.toUpperCase()} (the move shown)`);
      } else {
        if (prem) {
          sq.classList.add(prem[0]);
          sq.append(h("span", { className: "prem", textContent: prem[1] }));
        }
        sq.setAttribute("aria-label", `${coord} empty${prem ? `, ${prem[1]}` : ""}`);
        paintHeat(sq, r, c, state.cgp);
      }
      if (state.cursor && state.cursor.row === r && state.cursor.col === c) sq.classList.add("cursor");
      sq.dataset.coord = coord;
      sq.addEventListener("click", () => clickSquare(r, c));
      cells.push(sq);
    }
  }
  el.replaceChildren(...cells);
  el.dataset.tiles = String(board.flat().filter(Boolean).length);
  el.dataset.dim = String(dim);
  el.dataset.layout = state.game?.layout ?? "";
  el.dataset.cgp = state.cgp;
  el.dataset.last = lastSquares.size ? last?.notation ?? "" : "";
  const hist = state.game?.history ?? [];
  const lm = hist[hist.length - 1];
  $("last-move").textContent = lm?.move
    ? `last move: ${state.game!.players[lm.player] ?? ""} ${lm.move.display.trim()} ${lm.move.score >= 0 ? "+" : ""}${lm.move.score}` : "";
}

function clickSquare(row: number, col: number): void {
  const same = state.cursor && state.cursor.row === row && state.cursor.col === col;
  state.cursor = { row, col, vertical: same ? !state.cursor!.vertical : false };
  const coord = state.cursor.vertical ? `${COLS[col]}${row + 1}` : `${row + 1}${COLS[col]}`;
  const input = $<HTMLInputElement>("move-input");
  const word = input.value.trim().split(/\s+/).slice(1).join(" ");
  input.value = `${coord} ${word}`;
  input.focus();
  renderBoard();
}

function renderPlayers(): void {
  const g = state.game;
  const el = $("players");
  el.replaceChildren();
  if (!g) return;
  g.players.forEach((name, i) => {
    const known = i !== g.onTurn && g.knownOpp !== "";
    const rack = i === g.onTurn ? g.rack : g.knownOpp;
    // one chip per tile: a multi-letter tile (L·L, QU, CH) is one chip
    const chips = rack
      ? tilesOf(rack).map((t) => h("span", { className: [...t].length > 1 ? "rt multi" : "rt", textContent: t }))
      : ["—"];
    const rackEl = h("div", { className: "rack" }, h("span", { className: "tiles", data: { rack } }, ...chips),
      known ? h("span", { className: "known", textContent: " known" }) : null);
    rackEl.setAttribute("aria-label", `rack ${rack ? rack + (known ? " (known)" : "") : "not known"}`);
    const clock = g.clockRemaining.length === 2
      ? h("div", { className: "clock", textContent: `clock ${clockText(g.clockRemaining[i])}` +
          (g.timePenalties[i] ? ` · time penalty −${g.timePenalties[i]}` : "") })
      : null;
    const box = h("div", { className: "player" + (i === g.onTurn ? " on-turn" : ""), data: { player: String(i) } },
      h("div", { className: "name", textContent: `${name}${i === g.onTurn ? " — on turn" : ""}` }),
      h("div", { className: "score", textContent: String(g.scores[i] ?? 0) }), rackEl, clock);
    el.append(box);
  });
  const unseen = tilesOf(g.unseen).length;
  $("unseen").textContent =
    `unseen (${unseen}): ${g.unseen || "—"} · bag ${g.bagCount}` + (g.gameOver ? ` · game over (${g.endReason})` : "");
  // the tile order: the coming draws, first drawn first; the opponent holds the unseen tiles not in it
  const need = g.bagCount > 0 ? Math.max(0, unseen - RACK_SIZE) : 0;
  const hint = $("tile-order-hint");
  hint.dataset.need = String(need);
  hint.textContent = need
    ? `Tile order: ${need} of the unseen tiles, first drawn first (the opponent holds the other ${RACK_SIZE}); empty draws at random.`
    : "The bag is empty: a move draws nothing.";
  // multi-letter tiles are typed as the engine writes them, in brackets (or, where unambiguous, without)
  const multi = /\[/.test(g.cgp + g.unseen);
  $("multi-hint").hidden = !multi;
  if (multi) {
    const seen = [...tilesOf(g.unseen + g.rack), ...parseBoard(g.cgp).flat()].filter((t) => [...t].length > 1);
    const examples = [...new Set(seen.map((t) => t.toUpperCase()))].sort();
    const name = g.distribution ? g.distribution[0].toUpperCase() + g.distribution.slice(1) : "This distribution";
    $("multi-hint").textContent = `${name} has multi-letter tiles: type each in brackets in the Move and Tile order ` +
      `boxes (${examples.map((t) => `[${t}]`).join(", ")}; a blank played as one in lower case, [${(examples[0] ?? "").toLowerCase()}]).`;
  }
  $<HTMLInputElement>("tile-order").disabled = need === 0;
  $<HTMLButtonElement>("copy-cgp").disabled = false;
  $<HTMLButtonElement>("engine-play").disabled = g.gameOver || state.job !== undefined;
  const exportable = state.origin !== "cgp";
  const exp = $<HTMLButtonElement>("export-gcg");
  exp.disabled = !exportable;
  exp.title = exportable ? "Download the whole game as GCG"
    : "This game began at a CGP position, which GCG cannot record (start a new game or load a GCG)";
}

function renderEvents(): void {
  const g = state.game;
  const list = $("events");
  list.replaceChildren();
  $("warnings").replaceChildren(...(g?.warnings ?? []).map((w) => h("li", { textContent: w })));
  const review = !!g && g.numEvents > 0;
  $("turns").hidden = !review;
  $("turns-hint").hidden = !review;
  if (!g || !review) return;
  $("turn-label").textContent = `turn ${g.turn} of ${g.numEvents}`;
  $("turn-label").dataset.turn = String(g.turn);
  for (const ev of g.events) {
    const li = h("li", { value: ev.number, tabIndex: -1, data: { number: String(ev.number) } },
      `${ev.nick}: ${ev.rack ? ev.rack + " " : ""}${ev.move} ${ev.score >= 0 ? "+" : ""}${ev.score} = ${ev.cumulative}`);
    if (ev.note) li.append(h("div", { className: "note", textContent: ev.note }));
    if (ev.number === g.turn) {
      li.className = "current";
      li.setAttribute("aria-current", "step");
    }
    if (ev.number > g.turn) li.className = "future";
    li.title = `go to the position after event ${ev.number}`;
    li.addEventListener("click", () => void guarded(() => goTo(ev.number)));
    list.append(li);
  }
  followCurrent(list);
}

/** Keep the current event in view: centred in the list's own scroll box (the page does not move). */
function followCurrent(list: HTMLElement): void {
  const cur = list.querySelector<HTMLElement>("li.current");
  if (!cur) {
    list.scrollTop = 0;
    return;
  }
  const top = cur.offsetTop;
  const want = top - (list.clientHeight - cur.offsetHeight) / 2;
  list.scrollTop = Math.max(0, Math.min(want, list.scrollHeight - list.clientHeight));
}

function renderAll(): void {
  renderBoard();
  renderPlayers();
  renderEvents();
  drawReview();
  const g = state.game;
  $<HTMLButtonElement>("review-game").disabled = !g || g.numEvents === 0 || state.origin === "cgp" || state.job !== undefined;
}

// ------------------------------------------------------------------ analysis

function clearResults(): void {
  if (state.job) return;     // a running job's results stay until it ends (it analyses the position it started on)
  clearSimHeat();
  $("results").replaceChildren();
  for (const k of Object.keys($("results").dataset)) delete $("results").dataset[k];
  $("job-status").textContent = "";
}

function showMove(move: Move): void {
  state.preview = move;
  $<HTMLInputElement>("move-input").value = move.notation;
  renderBoard();
}

function position() {
  if (!state.cgp) throw new Error("load a position first");
  return { cgp: state.cgp, lexicon: state.lexicon };
}

const val = (id: string) => $<HTMLInputElement>(id).value.trim();
/** A whole number from an input; empty gives `fallback` (the server's "not given"). */
function int(id: string, fallback = 0): number {
  const v = val(id);
  if (v === "") return fallback;
  const n = Number(v);
  if (!Number.isInteger(n)) throw new Error(`${id.replace(/^opt-/, "")}: ${v} is not a whole number`);
  return n;
}
function seconds(id: string): number {
  const v = val(id);
  const n = v === "" ? 0 : Number(v);
  if (!Number.isFinite(n) || n < 0) throw new Error(`${id.replace(/^opt-/, "")}: ${v} is not a number of seconds`);
  return n;
}
const eq3 = (x: number) => (Math.round(x * 1000) / 1000).toFixed(3);
const signed = (x: number) => (x > 0 ? `+${x}` : String(x));

async function generate(): Promise<void> {
  const resp = await client.generateMoves({ position: position(), numPlays: 30 });
  const results = $("results");
  const summary = h("p", { className: "summary" },
    `${resp.counts?.placements ?? 0} placements, ${resp.counts?.exchanges ?? 0} exchanges, ` +
    `${resp.counts?.passes ?? 0} passes (lexicon ${resp.lexicon}); the best ${resp.moves.length} by equity:`);
  results.replaceChildren(summary, table(
    [{ label: "#" }, { label: "move", className: "mv" }, { label: "score" }, { label: "leave", className: "mv" }, { label: "equity" }],
    resp.moves.map((m, i) => [i + 1, m.display, m.score, m.leave, eq3(m.equity)]),
    (i) => ({ move: resp.moves[i].notation, score: String(resp.moves[i].score), equity: eq3(resp.moves[i].equity) }),
    (i) => showMove(resp.moves[i]),
  ));
  results.dataset.kind = "moves";
  $("job-status").textContent = `${resp.moves.length} moves`;
}

function jobStatus(kind: string, snaps: number, elapsed: number, final: boolean, stopped: boolean, why = "",
  target = "results"): void {
  const el = $("job-status");
  let what = "running…";
  if (final && stopped) {
    what = state.stopAsked ? "stopped — the best result so far" : `ended early${why ? ` (${why})` : ""} — the best result so far`;
  } else if (final) {
    what = `finished${why ? ` (${why})` : ""}`;
  }
  el.textContent = `${kind}: ${what} · ${elapsed.toFixed(1)} s · ${snaps} update(s)`;
  const results = $(target);
  results.dataset.state = final ? (stopped ? "stopped" : "final") : "running";
  results.dataset.updates = String(snaps);
}

/** Run a long job, rendering each snapshot into `target` (the results box; a review has its own). */
async function runJob<T extends { jobId: string; final: boolean; stopped: boolean; elapsedSeconds?: number }>(
  kind: string, job: Job<T>, render: (snap: T) => void, why: (snap: T) => string = () => "",
  target = "results"): Promise<void> {
  state.job = job as unknown as AnyJob;
  state.stopAsked = false;
  setRunning(true);
  const t0 = performance.now();
  const results = $(target);
  results.replaceChildren();
  for (const k of Object.keys(results.dataset)) delete results.dataset[k];
  results.dataset.kind = kind;
  results.dataset.state = "starting";
  results.dataset.updates = "0";
  $("job-status").textContent = `${kind}: starting…`;
  let snaps = 0;
  let counted = false;
  const uncount = () => {
    if (!counted) return;
    counted = false;
    ownJobs--;
    renderJobCount();
    void pollJobs();
  };
  try {
    for await (const snap of job) {
      snaps++;
      if (snaps === 1 && !snap.final) {
        counted = true;        // the server registered the job before its first snapshot
        ownJobs++;
        renderJobCount();
        void pollJobs();
      }
      render(snap);
      jobStatus(kind, snaps, snap.elapsedSeconds ?? (performance.now() - t0) / 1000, snap.final, snap.stopped,
        snap.final ? why(snap) : "", target);
      if (snap.final) uncount();
    }
  } finally {
    uncount();
    state.job = undefined;
    setRunning(false);
    void pollJobs();
  }
}

function setRunning(running: boolean): void {
  for (const id of ["gen", "sim", "endgame", "peg", "load-cgp", "load-gcg", "new-game", "engine-play", "review-game",
    "review-batch"]) {
    $<HTMLButtonElement>(id).disabled = running;
  }
  $<HTMLButtonElement>("stop").disabled = !running;
  if (!running) renderAll();     // the buttons that depend on the game (engine move, review) as it now is
}

async function simulate(): Promise<void> {
  const plies = int("opt-sim-plies", 2);
  const job = startJob(client, "simulate", {
    position: position(), numPlays: int("opt-sim-plays"), iterations: int("opt-iterations"), plies,
    maxTime: seconds("opt-sim-time"), stop: Number($<HTMLSelectElement>("opt-sim-stop").value),
    threads: int("opt-sim-threads"), oppRack: val("opt-sim-opp"), plays: listOf(val("opt-sim-extra")),
    stats: $<HTMLInputElement>("opt-sim-stats").checked && plies > 0,
  });
  // the statistics of the play chosen (a row's click; the leader at first) below the table, its heatmap on the board
  const cgp = state.cgp;
  const view = newSimStatsView();
  const statsBox = h("section", { id: "sim-stats", className: "sim-stats" });
  let last: SimulateProgress | undefined;
  const drawStats = () => {
    if (!last) return;
    renderSimStats(statsBox, last, cgp, view, drawStats);
    renderBoard();
  };
  clearSimHeat();
  await runJob("simulation", job, (snap) => {
    last = snap;
    const plays = snap.plays;
    const results = $("results");
    const p = h("p", { className: "summary" },
      `${snap.iterations} iterations · ${plays.length} plays · ${plies} plies${snap.stopReason ? ` · ${snap.stopReason}` : ""}`);
    replaceKeepingScroll(results, p, table(
      [{ label: "#" }, { label: "move", className: "mv" }, { label: "win % ± 95%" }, { label: "equity ± 95%" }, { label: "iters" }],
      plays.map((pl, i) => [i + 1, pl.move?.display ?? "", `${pl.winPct.toFixed(2)} ± ${(1.96 * pl.winPctStderr).toFixed(2)}`,
        `${pl.equity.toFixed(2)} ± ${(1.96 * pl.equityStderr).toFixed(2)}`,
        `${pl.iterations}${pl.pruned ? " (pruned)" : ""}`]),
      (i) => ({ move: plays[i].move?.notation ?? "", winPct: plays[i].winPct.toFixed(3) }),
      (i) => {
        view.play = plays[i].move?.notation ?? "";
        if (last) renderSimStats(statsBox, last, cgp, view, drawStats);
        if (plays[i].move) showMove(plays[i].move!);
      },
    ), statsBox);
    renderSimStats(statsBox, snap, cgp, view, drawStats);
    renderBoard();
    results.dataset.plays = String(plays.length);
    results.dataset.iterations = snap.iterations.toString();
    results.dataset.stopReason = snap.stopReason;
  }, (snap) => snap.stopReason);
}

async function endgame(): Promise<void> {
  const g = state.game;
  const onTurn = g?.onTurn ?? 0;
  const names = g ? [g.players[onTurn], g.players[1 - onTurn]] : ["on turn", "opponent"];
  const spread0 = g ? (g.scores[onTurn] ?? 0) - (g.scores[1 - onTurn] ?? 0) : 0;
  const job = startJob(client, "solveEndgame", {
    position: position(), plies: int("opt-eg-plies"), maxTime: seconds("opt-eg-time"), threads: int("opt-eg-threads"),
    firstWin: $<HTMLInputElement>("opt-eg-first-win").checked,
    disableHeuristics: $<HTMLInputElement>("opt-eg-no-heuristics").checked, ttMegabytes: int("opt-eg-tt"),
    topK: int("opt-eg-top"), alsoSolve: listOf(val("opt-eg-also")),
  });
  await runJob("endgame", job, (snap) => {
    const results = $("results");
    const dl = summaryList([["value", signed(snap.value)], ["final spread", signed(snap.finalSpread)],
      ["depth", String(snap.depth)], ["nodes", snap.nodes.toString()], ["complete", snap.complete ? "yes" : "no"]]);
    // the principal line: each move's score and the spread after it, for the player on turn
    let spread = spread0;
    const rows = snap.bestLine.map((m, i) => {
      const score = m.move?.score ?? 0;
      spread += i % 2 === 0 ? score : -score;
      return [i + 1, names[i % 2], (m.move?.display ?? "").trim() + (m.estimated ? " (estimated)" : ""),
        score, signed(spread)];
    });
    const t = table(
      [{ label: "#" }, { label: "player", className: "left" }, { label: "move", className: "mv" },
        { label: "score", title: "the move's points" },
        { label: "spread", title: "the spread after the move, for the player on turn (starting at " + signed(spread0) + ")" }],
      rows,
      (i) => ({ move: snap.bestLine[i].move?.notation ?? "", score: String(snap.bestLine[i].move?.score ?? 0),
        spread: String(rows[i][4]), estimated: String(snap.bestLine[i].estimated) }),
      (i) => snap.bestLine[i].move && showMove(snap.bestLine[i].move!),
    );
    t.classList.add("line");
    t.querySelector("table")!.setAttribute("aria-label", "best line");
    snap.bestLine.forEach((m, i) => { if (m.estimated) t.querySelectorAll("tbody tr")[i].classList.add("estimated"); });
    const parts: Node[] = [dl, t];
    if (snap.bestLine.length) {
      const rest = snap.finalSpread - spread;
      parts.push(h("p", { className: "summary", id: "eg-end" },
        `start ${signed(spread0)} · after the line ${signed(spread)}` +
        (rest ? ` · ${signed(rest)} from the racks left at the end` : "") + ` · final spread ${signed(snap.finalSpread)}`));
    }
    parts.push(...runnerUps(snap));
    replaceKeepingScroll(results, ...parts);
    results.dataset.value = String(snap.value);
    results.dataset.finalSpread = String(snap.finalSpread);
    results.dataset.line = snap.bestLine.map((m) => m.move?.notation ?? "").join(" | ");
    results.dataset.topLines = String(snap.topLines.length);
  }, (snap) => snap.stopReason);
}

/** A top-k solve's first moves (rank, value, loss against the best, line) and its also-solved moves: a row
 * shows its first move on the board. */
function runnerUps(snap: EndgameProgress): Node[] {
  const parts: Node[] = [];
  const lineText = (line: EndgameProgress["bestLine"]) =>
    line.map((m) => `${(m.move?.display ?? "").trim()}${m.estimated ? " (estimated)" : ""}`).join(" · ");
  const cols = [{ label: "#" }, { label: "first move", className: "mv" }, { label: "value", title: "spread change for the player on turn" },
    { label: "loss", title: "the best first move's value minus this one" }, { label: "line", className: "left" }];
  if (snap.topLines.length) {
    const rows = snap.topLines;
    parts.push(h("h3", {}, `Best ${rows.length} first moves` + (snap.depth ? ` at depth ${snap.depth} (exact values)` : "")));
    const t = table(cols,
      rows.map((r, i) => [i + 1, (r.line[0]?.move?.display ?? "").trim(), signed(r.value), r.loss, lineText(r.line.slice(1))]),
      (i) => ({ move: rows[i].line[0]?.move?.notation ?? "", value: String(rows[i].value), loss: String(rows[i].loss) }),
      (i) => rows[i].line[0]?.move && showMove(rows[i].line[0].move!),
    );
    t.querySelector("table")!.setAttribute("aria-label", "best first moves");
    t.id = "eg-top";
    parts.push(t);
  }
  if (snap.alsoSolved.length) {
    const rows = snap.alsoSolved;
    parts.push(h("h3", {}, "Also solved"));
    const t = table(cols,
      rows.map((r, i) => r.searched
        ? [i + 1, r.requested, signed(r.value), r.loss, lineText(r.line.slice(1))]
        : [i + 1, r.requested, "", "", "not searched (stopped first)"]),
      (i) => ({ move: rows[i].requested, searched: String(rows[i].searched), value: rows[i].searched ? String(rows[i].value) : "",
        loss: rows[i].searched ? String(rows[i].loss) : "" }),
      (i) => rows[i].line[0]?.move && showMove(rows[i].line[0].move!),
    );
    t.querySelector("table")!.setAttribute("aria-label", "also solved");
    t.id = "eg-also";
    parts.push(t);
  }
  return parts;
}

async function preEndgame(): Promise<void> {
  const opts = pegOptions();
  const view = newPegView();
  const job = startJob(client, "solvePreEndgame", { position: position(), ...opts });
  await runJob("pre-endgame", job, (snap) => {
    renderPeg(snap, view, $("results"), (p) => p.move && showMove(p.move));
  }, (snap) => {
    if (snap.eventuality) return "eventuality explained";
    if (snap.complete) return "";
    if (snap.stopReason === "time limit") return "time limit";
    return `${snap.drawGroupsLeft} draw groups left`;
  });
}

// ------------------------------------------------------------------ review

/** The review's budgets from its options (empty: the server's defaults). */
function reviewOptions() {
  const opt = (id: string) => (val(id) === "" ? undefined : int(id));
  return {
    simIterations: int("opt-rv-iterations"), simPlies: opt("opt-rv-plies"), simPlays: int("opt-rv-plays"),
    pegMaxBag: opt("opt-rv-peg-bag"), endgamePlies: int("opt-rv-eg-plies"), threads: int("opt-rv-threads"),
    player: val("opt-rv-player"),
  };
}

function clearReview(): void {
  state.review = undefined;
  const box = $("review");
  box.replaceChildren();
  for (const k of Object.keys(box.dataset)) delete box.dataset[k];
}

function drawReview(): void {
  const rv = state.review;
  if (!rv || rv.gameId !== state.game?.gameId) return;
  renderReview($("review"), rv.view, state.game.turn, (event) => void guarded(() => reviewTurn(event)));
}

/** A reviewed turn: the position before it, with the engine's best move in the Move box. */
async function reviewTurn(event: number): Promise<void> {
  const t = state.review?.view.turns.get(event);
  await goTo(event - 1);
  if (t?.best?.move) $<HTMLInputElement>("move-input").value = t.best.move;
}

async function reviewGame(): Promise<void> {
  const g = state.game;
  if (!g || g.numEvents === 0) throw new Error("load a GCG or play a game first: a review analyses the game's record");
  if (state.origin === "cgp") throw new Error("this game began at a CGP position, which a game record cannot hold: review a game from the empty board");
  const opts = reviewOptions();
  const { gcg } = await client.exportGame({ gameId: g.gameId });
  const view = newReviewView(g.players, g.numEvents);
  state.review = { view, gameId: g.gameId };
  const job = startJob(client, "analyzeGame", { gcg, lexicon: state.lexicon, ...opts });
  await runJob("review", job, (snap) => {
    for (const t of snap.turns) view.turns.set(t.event, t);
    view.last = snap;
    drawReview();
  }, (snap) => (snap.stopped ? "" : `${snap.turnsDone} turns`), "review");
}

const MAX_REVIEW_FILES = 1000;
const MAX_GCG_BYTES = 262_144;

async function reviewFiles(): Promise<void> {
  const files = [...($<HTMLInputElement>("review-files").files ?? [])];
  if (!files.length) throw new Error("choose the GCG files to review (Many games, under Review options)");
  if (files.length > MAX_REVIEW_FILES) throw new Error(`${files.length} files: at most ${MAX_REVIEW_FILES} a review`);
  const big = files.find((f) => f.size > MAX_GCG_BYTES);
  if (big) throw new Error(`${big.name} is larger than 256 KiB`);
  const games = await Promise.all(files.map(async (f) => ({ name: f.name, gcg: await f.text() })));
  const opts = reviewOptions();
  clearReview();
  const errors: { game: string; error: string }[] = [];
  const job = startJob(client, "reviewGames", { games, options: { lexicon: state.lexicon, ...opts } });
  await runJob("batch review", job, (snap) => {
    errors.push(...snap.errors.map((e) => ({ game: e.game, error: e.error })));
    renderBatch($("review"), snap, errors);
  }, (snap) => `${snap.gamesDone} games`, "review");
}

// ------------------------------------------------------------------ wiring

function on(id: string, fn: () => Promise<void>): void {
  $(id).addEventListener("click", () => void guarded(fn));
}

on("load-cgp", loadCgp);
on("new-game", newGame);
on("load-gcg", loadGcg);
on("turn-first", () => step("first"));
on("turn-prev", () => step("prev"));
on("turn-next", () => step("next"));
on("turn-last", () => step("last"));
on("gen", generate);
on("sim", simulate);
on("endgame", endgame);
on("peg", preEndgame);
on("copy-cgp", copyCgp);
on("engine-play", engineMove);
on("export-gcg", exportGcg);
on("review-game", reviewGame);
on("review-batch", reviewFiles);
on("stop", async () => {
  if (!state.job) return;
  state.stopAsked = true;
  await state.job.stop();
});
$("peg-only-add").addEventListener("click", () => addOnlySolve(val("move-input")));
$("peg-defaults").addEventListener("click", () => resetPegOptions());
$("peg-options").addEventListener("input", () => describePegOptions());
$("peg-options").addEventListener("change", () => describePegOptions());
$("play-form").addEventListener("submit", (e) => {
  e.preventDefault();
  void guarded(() => playMove(val("move-input")));
});
$("gcg-file").addEventListener("change", () => void guarded(async () => {
  const file = $<HTMLInputElement>("gcg-file").files?.[0];
  if (!file) return;
  if (file.size > 262_144) throw new Error(`${file.name} is larger than 256 KiB`);
  $<HTMLTextAreaElement>("gcg").value = await file.text();
  await loadGcg();
}));
$("token-form").addEventListener("submit", (e) => {
  e.preventDefault();
  void guarded(async () => {
    const field = $<HTMLInputElement>("token");
    const token = field.value.trim();
    if (token) {
      checkToken(token);                 // a token in the wrong form is refused here, before it is sent
      sessionStorage.setItem(TOKEN_KEY, token);
    } else {
      sessionStorage.removeItem(TOKEN_KEY);
    }
    field.value = "";
    client = makeClient();
    $("token-box").classList.remove("wanted");
    await loadServerInfo();
    const refused = $("error").dataset.status;
    $("token-state").textContent = !token ? "no token" : refused === "401" ? "the token was refused"
      : refused === "429" ? "a token is set (not checked: the address is refused for now)" : "a token is in use";
  });
});
document.addEventListener("keydown", (e) => {
  const g = state.game;
  if (!g || g.numEvents === 0 || e.altKey || e.ctrlKey || e.metaKey) return;
  if ((e.target as HTMLElement).closest("input, textarea, select")) return;
  const keys: Record<string, "first" | "prev" | "next" | "last"> = { ArrowLeft: "prev", ArrowRight: "next", Home: "first", End: "last" };
  const where = keys[e.key];
  if (!where) return;
  e.preventDefault();
  void guarded(() => step(where));
});

resetPegOptions();
renderBoard();
$("token-state").textContent = sessionStorage.getItem(TOKEN_KEY) ? "a token is in use" : "";
void loadServerInfo();
