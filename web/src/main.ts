// The analysis board: one page talking Connect to the server that serves it (same origin), through the
// typed client generated from proto/ (clients/ts). Every result shown comes from the server as it streams.
import {
  describeError,
  engineClient,
  startJob,
  webTransport,
  type EndgameProgress,
  type EngineClient,
  type GameState,
  type Job,
  type Move,
  type PEGPlayInfo,
  type PreEndgameProgress,
  type SimulateProgress,
} from "@macondo/client";

// ------------------------------------------------------------------ set-up

const $ = <T extends HTMLElement = HTMLElement>(id: string) => document.getElementById(id) as T;
const TOKEN_KEY = "macondo-token";
let client: EngineClient = makeClient();

function makeClient(): EngineClient {
  const token = sessionStorage.getItem(TOKEN_KEY) || undefined;
  return engineClient(webTransport(location.origin, { token }));
}

// the standard 15x15 layout: = triple word, - double word, " triple letter, ' double letter
const LAYOUT = [
  "=  '   =   '  =", " -   \"   \"   - ", "  -   ' '   -  ", "'  -   '   -  '", "    -     -    ",
  " \"   \"   \"   \" ", "  '   ' '   '  ", "=  '   -   '  =", "  '   ' '   '  ", " \"   \"   \"   \" ",
  "    -     -    ", "'  -   '   -  '", "  -   ' '   -  ", " -   \"   \"   - ", "=  '   =   '  =",
];
const PREMIUM: Record<string, [string, string]> = {
  "=": ["tws", "3W"], "-": ["dws", "2W"], "\"": ["tls", "3L"], "'": ["dls", "2L"],
};
const COLS = "ABCDEFGHIJKLMNO";

interface State {
  game?: GameState;
  cgp: string;            // the position analysed (as pasted, or the game's at the current turn)
  lexicon: string;        // the lexicon override chosen, "" = the position's own
  gcg: string;            // the record being stepped through ("" for a pasted CGP)
  job?: Job<SimulateProgress | EndgameProgress | PreEndgameProgress>;
  cursor?: { row: number; col: number; vertical: boolean };
  preview?: Move;
}
const state: State = { cgp: "", lexicon: "", gcg: "" };

// ------------------------------------------------------------------ errors and status

function showError(err: unknown): void {
  const e = describeError(err);
  const code = e.codeName.replace(/([a-z])([A-Z])/g, "$1_$2").toLowerCase();
  $("error").textContent = `${e.message} (${code}${e.reason && e.reason.toLowerCase() !== code ? `, ${e.reason}` : ""})`;
  $("error").dataset.code = code;
}

function clearError(): void {
  $("error").textContent = "";
  delete $("error").dataset.code;
}

async function guarded(fn: () => Promise<void>): Promise<void> {
  clearError();
  try {
    await fn();
  } catch (err) {
    showError(err);
  }
}

async function loadServerInfo(): Promise<void> {
  try {
    const info = await client.getServerInfo({});
    $("server-status").textContent =
      `server ${info.version} · default lexicon ${info.defaultLexicon} · ${info.runningJobs} job(s) running`;
    const sel = $<HTMLSelectElement>("lexicon");
    sel.length = 1;
    for (const lx of info.lexica) sel.add(new Option(lx.name, lx.name));
  } catch (err) {
    $("server-status").textContent = "the server did not answer";
    showError(err);
  }
}

// ------------------------------------------------------------------ positions and games

async function replaceGame(next: GameState): Promise<void> {
  const old = state.game;
  state.game = next;
  state.cursor = undefined;
  state.preview = undefined;
  $<HTMLInputElement>("move-input").value = "";
  if (old && old.gameId !== next.gameId) {
    client.deleteGame({ gameId: old.gameId }).catch(() => undefined);   // sessions are bounded per client
  }
}

async function loadCgp(): Promise<void> {
  const cgp = $<HTMLTextAreaElement>("cgp").value.trim();
  state.lexicon = $<HTMLSelectElement>("lexicon").value;
  const game = await client.createGame({ cgp, lexicon: state.lexicon });
  state.cgp = cgp;
  state.gcg = "";
  await replaceGame(game);
  $("turns").hidden = true;
  $("events").replaceChildren();
  renderAll();
  clearResults();
}

async function loadGcg(turn?: number): Promise<void> {
  if (turn === undefined) {
    state.gcg = $<HTMLTextAreaElement>("gcg").value;
    state.lexicon = $<HTMLSelectElement>("lexicon").value;
  }
  const game = await client.createGame({ gcg: state.gcg, lexicon: state.lexicon, turn: turn ?? 0 });
  state.cgp = game.cgp;
  await replaceGame(game);
  $("turns").hidden = false;
  renderAll();
  clearResults();
}

async function step(where: "first" | "prev" | "next" | "last"): Promise<void> {
  const g = state.game;
  if (!g || !state.gcg) return;
  const target = { first: 0, prev: g.turn - 1, next: g.turn + 1, last: g.numEvents }[where];
  if (target < 0 || target > g.numEvents) return;
  await loadGcg(target);
}

async function playMove(move: string): Promise<void> {
  if (!state.game) throw new Error("load a position first");
  const game = await client.playMove({ gameId: state.game.gameId, move });
  state.cgp = game.cgp;
  state.game = game;
  state.preview = undefined;
  state.cursor = undefined;
  $<HTMLInputElement>("move-input").value = "";
  renderAll();
  clearResults();
}

// ------------------------------------------------------------------ drawing the position

/** The board of a CGP as 15 rows of 15 cells: "" empty, else the tile (lowercase = blank). */
function parseBoard(cgp: string): string[][] {
  const rows = (cgp.trim().split(/\s+/)[0] ?? "").split("/");
  return rows.map((row) => {
    const cells: string[] = [];
    for (const m of row.matchAll(/(\d+)|\[([^\]]+)\]|(.)/g)) {
      if (m[1]) for (let i = 0; i < Number(m[1]); i++) cells.push("");
      else cells.push(m[2] ?? m[3]);
    }
    return cells;
  });
}

function previewTiles(move: Move | undefined): Map<string, string> {
  const out = new Map<string, string>();
  if (!move || move.type !== 0) return out;
  const tiles = [...move.tiles];
  tiles.forEach((t, i) => {
    if (t === ".") return;
    const r = move.row + (move.direction === 1 ? i : 0);
    const c = move.column + (move.direction === 1 ? 0 : i);
    out.set(`${r},${c}`, t);
  });
  return out;
}

function renderBoard(): void {
  const board = parseBoard(state.cgp);
  const preview = previewTiles(state.preview);
  const el = $("board");
  const cells: HTMLElement[] = [];
  const corner = document.createElement("div");
  corner.className = "hdr";
  cells.push(corner);
  for (const c of COLS) {
    const h = document.createElement("div");
    h.className = "hdr";
    h.textContent = c;
    h.setAttribute("aria-hidden", "true");
    cells.push(h);
  }
  for (let r = 0; r < 15; r++) {
    const h = document.createElement("div");
    h.className = "hdr";
    h.textContent = String(r + 1);
    h.setAttribute("aria-hidden", "true");
    cells.push(h);
    for (let c = 0; c < 15; c++) {
      const sq = document.createElement("button");
      sq.type = "button";
      sq.className = "sq";
      const tile = board[r]?.[c] ?? "";
      const prem = PREMIUM[LAYOUT[r][c]];
      const coord = `${COLS[c]}${r + 1}`;
      const pv = preview.get(`${r},${c}`);
      if (tile) {
        sq.classList.add("tile");
        if (tile !== tile.toUpperCase()) sq.classList.add("blank");
        sq.textContent = tile.toUpperCase();
        sq.setAttribute("aria-label", `${coord} ${tile.toUpperCase()}${tile !== tile.toUpperCase() ? " (blank)" : ""}`);
      } else if (pv) {
        sq.classList.add("preview");
        sq.textContent = pv.toUpperCase();
        sq.setAttribute("aria-label", `${coord} ${pv.toUpperCase()} (the move shown)`);
      } else {
        if (prem) {
          sq.classList.add(prem[0]);
          const p = document.createElement("span");
          p.className = "prem";
          p.textContent = prem[1];
          sq.append(p);
        }
        sq.setAttribute("aria-label", `${coord} empty${prem ? `, ${prem[1]}` : ""}`);
      }
      if (state.cursor && state.cursor.row === r && state.cursor.col === c) sq.classList.add("cursor");
      sq.dataset.coord = coord;
      sq.addEventListener("click", () => clickSquare(r, c));
      cells.push(sq);
    }
  }
  el.replaceChildren(...cells);
  el.dataset.tiles = String(board.flat().filter(Boolean).length);
  el.dataset.cgp = state.cgp;
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
    const box = document.createElement("div");
    box.className = "player" + (i === g.onTurn ? " on-turn" : "");
    box.dataset.player = String(i);
    const rack = i === g.onTurn ? g.rack : (g.knownOpp ? `${g.knownOpp} (known)` : "");
    box.innerHTML = "";
    const n = document.createElement("div");
    n.className = "name";
    n.textContent = `${name}${i === g.onTurn ? " — on turn" : ""}`;
    const s = document.createElement("div");
    s.className = "score";
    s.textContent = String(g.scores[i] ?? 0);
    const r = document.createElement("div");
    r.className = "rack";
    r.textContent = rack || "—";
    r.setAttribute("aria-label", `rack ${rack || "not known"}`);
    box.append(n, s, r);
    el.append(box);
  });
  $("unseen").textContent =
    `unseen (${g.unseen.length}): ${g.unseen || "—"} · bag ${g.bagCount}` + (g.gameOver ? ` · game over (${g.endReason})` : "");
}

function renderEvents(): void {
  const g = state.game;
  const list = $("events");
  list.replaceChildren();
  const warn = $("warnings");
  warn.replaceChildren(...(g?.warnings ?? []).map((w) => Object.assign(document.createElement("li"), { textContent: w })));
  if (!g || !state.gcg) return;
  $("turn-label").textContent = `turn ${g.turn} of ${g.numEvents}`;
  $("turn-label").dataset.turn = String(g.turn);
  for (const ev of g.events) {
    const li = document.createElement("li");
    li.value = ev.number;
    li.textContent = `${ev.nick}: ${ev.rack ? ev.rack + " " : ""}${ev.move} ${ev.score >= 0 ? "+" : ""}${ev.score} = ${ev.cumulative}`;
    if (ev.number === g.turn) li.className = "current";
    if (ev.number > g.turn) li.className = "future";
    list.append(li);
  }
}

function renderAll(): void {
  renderBoard();
  renderPlayers();
  renderEvents();
}

// ------------------------------------------------------------------ analysis

function clearResults(): void {
  $("results").replaceChildren();
  for (const k of Object.keys($("results").dataset)) delete $("results").dataset[k];
  $("job-status").textContent = "";
}

function table(headers: string[], rows: (string | number)[][], rowData?: (i: number) => Record<string, string>,
  onRow?: (i: number) => void): HTMLElement {
  const t = document.createElement("table");
  const head = t.createTHead().insertRow();
  headers.forEach((h, i) => {
    const th = document.createElement("th");
    th.scope = "col";
    th.textContent = h;
    if (i === 1) th.className = "mv";
    head.append(th);
  });
  const body = t.createTBody();
  rows.forEach((row, i) => {
    const tr = body.insertRow();
    row.forEach((v, j) => {
      const td = tr.insertCell();
      td.textContent = String(v);
      if (j === 1) td.className = "mv";
    });
    if (rowData) Object.assign(tr.dataset, rowData(i));
    if (onRow) {
      tr.tabIndex = 0;
      tr.addEventListener("click", () => onRow(i));
      tr.addEventListener("keydown", (e) => { if (e.key === "Enter") onRow(i); });
    }
  });
  const wrap = document.createElement("div");
  wrap.className = "scroll";
  wrap.append(t);
  return wrap;
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

const num = (id: string) => Number($<HTMLInputElement>(id).value) || 0;
const eq3 = (x: number) => (Math.round(x * 1000) / 1000).toFixed(3);

async function generate(): Promise<void> {
  const resp = await client.generateMoves({ position: position(), numPlays: 30 });
  const results = $("results");
  const summary = document.createElement("p");
  summary.className = "summary";
  summary.textContent = `${resp.counts?.placements ?? 0} placements, ${resp.counts?.exchanges ?? 0} exchanges, ` +
    `${resp.counts?.passes ?? 0} passes (lexicon ${resp.lexicon}); the best ${resp.moves.length} by equity:`;
  results.replaceChildren(summary, table(
    ["#", "move", "score", "leave", "equity"],
    resp.moves.map((m, i) => [i + 1, m.display, m.score, m.leave, eq3(m.equity)]),
    (i) => ({ move: resp.moves[i].notation, score: String(resp.moves[i].score), equity: eq3(resp.moves[i].equity) }),
    (i) => showMove(resp.moves[i]),
  ));
  results.dataset.kind = "moves";
  $("job-status").textContent = `${resp.moves.length} moves`;
}

function jobStatus(kind: string, snaps: number, elapsed: number, final: boolean, stopped: boolean, extra = ""): void {
  const el = $("job-status");
  const what = final ? (stopped ? "stopped — the best result so far" : "finished") : "running…";
  el.textContent = `${kind}: ${what} · ${elapsed.toFixed(1)} s · ${snaps} update(s)${extra ? " · " + extra : ""}`;
  const results = $("results");
  results.dataset.state = final ? (stopped ? "stopped" : "final") : "running";
  results.dataset.updates = String(snaps);
}

async function runJob<T extends { jobId: string; final: boolean; stopped: boolean; elapsedSeconds: number }>(
  kind: string, job: Job<T>, render: (snap: T) => void): Promise<void> {
  state.job = job as unknown as State["job"];
  setRunning(true);
  const results = $("results");
  results.replaceChildren();
  results.dataset.kind = kind;
  results.dataset.state = "starting";
  results.dataset.updates = "0";
  $("job-status").textContent = `${kind}: starting…`;
  let snaps = 0;
  try {
    for await (const snap of job) {
      snaps++;
      render(snap);
      jobStatus(kind, snaps, snap.elapsedSeconds, snap.final, snap.stopped);
    }
  } finally {
    state.job = undefined;
    setRunning(false);
  }
}

function setRunning(running: boolean): void {
  for (const id of ["gen", "sim", "endgame", "peg", "load-cgp", "load-gcg"]) $<HTMLButtonElement>(id).disabled = running;
  $<HTMLButtonElement>("stop").disabled = !running;
}

async function simulate(): Promise<void> {
  const job = startJob(client, "simulate", {
    position: position(), iterations: num("opt-iterations") || 1000, plies: num("opt-sim-plies") || 2,
    numPlays: 10, threads: num("opt-threads"),
  });
  await runJob("simulation", job, (snap) => {
    const plays = snap.plays;
    const results = $("results");
    const p = document.createElement("p");
    p.className = "summary";
    p.textContent = `${snap.iterations} iterations${snap.stopReason ? ` · ${snap.stopReason}` : ""}`;
    results.replaceChildren(p, table(
      ["#", "move", "win % ± 95%", "equity ± 95%", "iters"],
      plays.map((pl, i) => [i + 1, pl.move?.display ?? "", `${pl.winPct.toFixed(2)} ± ${(1.96 * pl.winPctStderr).toFixed(2)}`,
        `${pl.equity.toFixed(2)} ± ${(1.96 * pl.equityStderr).toFixed(2)}`,
        `${pl.iterations}${pl.pruned ? " (pruned)" : ""}`]),
      (i) => ({ move: plays[i].move?.notation ?? "", winPct: plays[i].winPct.toFixed(3) }),
      (i) => plays[i].move && showMove(plays[i].move!),
    ));
  });
}

async function endgame(): Promise<void> {
  const job = startJob(client, "solveEndgame", {
    position: position(), plies: num("opt-eg-plies") || 4, threads: num("opt-threads"),
  });
  await runJob("endgame", job, (snap) => {
    const results = $("results");
    const dl = document.createElement("dl");
    dl.className = "summary";
    for (const [k, v] of [["value", snap.value >= 0 ? `+${snap.value}` : String(snap.value)],
      ["final spread", String(snap.finalSpread)], ["depth", String(snap.depth)], ["nodes", snap.nodes.toString()],
      ["complete", snap.complete ? "yes" : "no"]] as const) {
      dl.append(Object.assign(document.createElement("dt"), { textContent: k }),
        Object.assign(document.createElement("dd"), { textContent: v }));
    }
    const ol = document.createElement("ol");
    ol.className = "line";
    ol.setAttribute("aria-label", "best line");
    for (const m of snap.bestLine) {
      const li = document.createElement("li");
      li.textContent = (m.move?.display ?? "") + (m.estimated ? " (estimated)" : "");
      if (m.estimated) li.className = "estimated";
      ol.append(li);
    }
    results.replaceChildren(dl, ol);
    results.dataset.value = String(snap.value);
    results.dataset.line = snap.bestLine.map((m) => m.move?.notation ?? "").join(" | ");
  });
}

const RESULTS = ["win", "draw", "loss", "unresolved", "pending"] as const;

function outcomeGrid(play: PEGPlayInfo): HTMLElement {
  const grid = document.createElement("div");
  grid.className = "grid";
  grid.setAttribute("aria-label", `outcomes of ${play.move?.notation}`);
  for (const o of play.outcomes) {
    const cell = document.createElement("span");
    cell.className = `cell ${o.result}`;
    cell.textContent = o.draw;
    cell.title = `${o.draw}: ${o.result} (${o.weight} ordered draw${o.weight === 1n ? "" : "s"})`;
    grid.append(cell);
  }
  const pending = play.outcomeCounts.find((c) => c.result === "pending");
  if (pending && pending.draws > 0n) {
    const cell = document.createElement("span");
    cell.className = "cell pending";
    cell.textContent = `${pending.draws}…`;
    cell.title = `${pending.draws} draw groups not solved yet`;
    grid.append(cell);
  }
  return grid;
}

async function preEndgame(): Promise<void> {
  const job = startJob(client, "solvePreEndgame", {
    position: position(), endgamePlies: num("opt-peg-plies") || 4, threads: num("opt-threads"),
  });
  const MAX_ROWS = 40;
  await runJob("pre-endgame", job, (snap) => {
    const results = $("results");
    const dl = document.createElement("dl");
    dl.className = "summary";
    const leader = snap.winner ? `${snap.winner} (${snap.leaderReason})` : `none yet${snap.noLeaderReason ? ` — ${snap.noLeaderReason}` : ""}`;
    for (const [k, v] of [[snap.final && snap.complete ? "winner" : "leader", leader],
      ["draws", `${snap.drawsDone}/${snap.drawsTotal}`], ["orderings", snap.totalPermutations.toString()],
      ["endgames", `${snap.endgames} (${snap.endgamesPerSecond.toFixed(0)}/s)`],
      ["best bounds", `${snap.bestLower.toFixed(1)}–${snap.bestUpper.toFixed(1)}`],
      ["draw groups left", snap.drawGroupsLeft.toString()]] as const) {
      dl.append(Object.assign(document.createElement("dt"), { textContent: k }),
        Object.assign(document.createElement("dd"), { textContent: v }));
    }
    const legend = document.createElement("div");
    legend.className = "legend";
    for (const r of RESULTS) {
      const s = document.createElement("span");
      s.innerHTML = "";
      s.append(Object.assign(document.createElement("span"), { className: `cell ${r}`, textContent: " " }), ` ${r}`);
      legend.append(s);
    }
    const plays = snap.plays.slice(0, MAX_ROWS);
    const t = table(
      ["#", "move", "wins", "win %", "lower–upper", "draws done", "outcomes"],
      plays.map((p, i) => [i + 1, p.move?.display ?? "", p.wins.toFixed(1), p.winPct.toFixed(1),
        `${p.lowerWins.toFixed(1)}–${p.upperWins.toFixed(1)}`, `${p.drawsDone}/${p.drawsTotal}${p.cutOff ? " (cut off)" : ""}`, ""]),
      (i) => ({ move: plays[i].move?.notation ?? "", wins: plays[i].wins.toFixed(2), lower: String(plays[i].lowerWins),
        upper: String(plays[i].upperWins) }),
      (i) => plays[i].move && showMove(plays[i].move!),
    );
    t.querySelectorAll("tbody tr").forEach((tr, i) => {
      const cell = (tr as HTMLTableRowElement).cells[6];
      cell.style.textAlign = "left";
      cell.append(outcomeGrid(plays[i]));
    });
    const more = document.createElement("p");
    more.className = "summary";
    more.textContent = snap.plays.length > MAX_ROWS ? `(${snap.plays.length - MAX_ROWS} more plays not shown)` : "";
    results.replaceChildren(dl, legend, t, more);
    results.dataset.winner = snap.winner;
  });
}

// ------------------------------------------------------------------ wiring

function on(id: string, fn: () => Promise<void>): void {
  $(id).addEventListener("click", () => void guarded(fn));
}

on("load-cgp", loadCgp);
on("load-gcg", () => loadGcg());
on("turn-first", () => step("first"));
on("turn-prev", () => step("prev"));
on("turn-next", () => step("next"));
on("turn-last", () => step("last"));
on("gen", generate);
on("sim", simulate);
on("endgame", endgame);
on("peg", preEndgame);
on("stop", async () => {
  if (state.job) await state.job.stop();
});
$("play-form").addEventListener("submit", (e) => {
  e.preventDefault();
  void guarded(() => playMove($<HTMLInputElement>("move-input").value.trim()));
});
$("gcg-file").addEventListener("change", () => void guarded(async () => {
  const file = $<HTMLInputElement>("gcg-file").files?.[0];
  if (!file) return;
  if (file.size > 262_144) throw new Error(`${file.name} is larger than 256 KiB`);
  $<HTMLTextAreaElement>("gcg").value = await file.text();
  await loadGcg();
}));
$("token-save").addEventListener("click", () => {
  sessionStorage.setItem(TOKEN_KEY, $<HTMLInputElement>("token").value);
  client = makeClient();
  void loadServerInfo();
});
document.addEventListener("keydown", (e) => {
  if (!state.gcg || (e.target as HTMLElement).closest("input, textarea, select")) return;
  if (e.key === "ArrowLeft") void guarded(() => step("prev"));
  if (e.key === "ArrowRight") void guarded(() => step("next"));
});

renderBoard();
void loadServerInfo();
