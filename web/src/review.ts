// A reviewed game (AnalyzeGame) and a batch of games (ReviewGames) on the board: each player's win probability
// turn by turn with the mistakes marked, the per-player summary, the turns table; and the batch's per-player
// summary. The chart shows the same figures as `macondo analyze --chart` (analysis/review_chart.py): the
// mover's win probability after the move played (TurnAnalysis.win_after), drawn for the first player, hollow
// where it is the win table's estimate; a mistake is drawn as the drop from the engine's best (win_best).
import type { AnalyzeProgress, PlayerAnalysisSummary, ReviewGamesProgress, TurnAnalysis } from "@macondo/client";
import { h, table } from "./dom";

const SVG = "http://www.w3.org/2000/svg";
const W = 640, H = 220, LEFT = 40, RIGHT = 12, TOP = 14, BOTTOM = 28;
const COLOURS = ["#1f77b4", "#d95f02"];

/** What the board keeps of a review while it streams: the turns by event number, and the final message. */
export interface ReviewView {
  turns: Map<number, TurnAnalysis>;
  last?: AnalyzeProgress;
  players: string[];        // the game's player names (first, second)
  numEvents: number;
}

export function newReviewView(players: string[], numEvents: number): ReviewView {
  return { turns: new Map(), players, numEvents };
}

function svg<K extends keyof SVGElementTagNameMap>(tag: K, attrs: Record<string, string | number>,
  ...children: (SVGElement | string)[]): SVGElementTagNameMap[K] {
  const el = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
  for (const c of children) el.append(c);
  return el;
}

/** The first player's win probability after a turn (percent), or undefined when the turn has none. */
function firstPlayersWin(t: TurnAnalysis): number | undefined {
  if (t.winAfter === undefined) return undefined;
  return t.player === 1 ? t.winAfter : 100 - t.winAfter;
}

/** The mover's loss of win probability against the engine's best (points), where the engine valued both. */
export function winDrop(t: TurnAnalysis): number | undefined {
  if (t.winAfter === undefined || t.winBest === undefined || t.winSource === "table") return undefined;
  return Math.max(0, t.winBest - t.winAfter);
}

const isMistake = (t: TurnAnalysis) => t.mistake !== "" && t.mistake !== "none";

/** The loss of the move played against the engine's best, in the measure the turn's phase judges it by: spread
 * in the endgame, win probability in the simulation and the pre-endgame, else equity; "" when there is none. */
function lossText(t: TurnAnalysis, long = false): string {
  const drop = winDrop(t);
  const bound = t.lossIsBound ? (long ? " at least" : "+") : "";
  if (t.spreadLoss !== undefined) return `${t.spreadLoss}${long ? " points of spread" : " pts"}${bound}`;
  if (drop !== undefined) return `${drop.toFixed(1)}${long ? " points of win probability" : "%"}${bound}`;
  if (t.equityLoss !== undefined) return `${t.equityLoss.toFixed(1)}${long ? " points of equity" : " eq"}${bound}`;
  return "";
}

/** The chart: x the events of the record, y the first player's win probability; a dot per analysed turn in
 * the mover's colour (hollow: the win table's estimate), a mistake in red with its drop from the best move,
 * the cursor's event as a dashed line. A click on a turn calls `onTurn(event)`. */
export function winChart(view: ReviewView, cursor: number, onTurn: (event: number) => void): SVGSVGElement {
  const turns = [...view.turns.values()].sort((a, b) => a.event - b.event);
  const n = Math.max(view.numEvents, turns.length ? turns[turns.length - 1].event : 1, 1);
  const x = (ev: number) => LEFT + (W - LEFT - RIGHT) * (ev / n);
  const y = (pct: number) => TOP + (H - TOP - BOTTOM) * (1 - pct / 100);
  const chart = svg("svg", { viewBox: `0 0 ${W} ${H}`, class: "win-chart", role: "img" });
  chart.setAttribute("aria-label", `${view.players[0] ?? "first player"}'s win probability turn by turn`);
  for (const pct of [0, 25, 50, 75, 100]) {
    chart.append(svg("line", { x1: LEFT, x2: W - RIGHT, y1: y(pct), y2: y(pct), class: pct === 50 ? "mid" : "grid" }),
      svg("text", { x: LEFT - 4, y: y(pct) + 3, class: "ylab" }, `${pct}%`));
  }
  const step = Math.max(1, Math.ceil(n / 12));
  for (let ev = 0; ev <= n; ev += step) chart.append(svg("text", { x: x(ev), y: H - BOTTOM + 14, class: "xlab" }, String(ev)));
  chart.append(svg("text", { x: (LEFT + W - RIGHT) / 2, y: H - 3, class: "xlab" }, "event"));
  if (cursor > 0) chart.append(svg("line", { x1: x(cursor), x2: x(cursor), y1: TOP, y2: H - BOTTOM, class: "cursor" }));
  // the line through the turns with a figure, starting level at 50%
  const pts: [number, number][] = [[x(0), y(50)]];
  for (const t of turns) {
    const w = firstPlayersWin(t);
    if (w !== undefined) pts.push([x(t.event), y(w)]);
  }
  chart.append(svg("polyline", { points: pts.map(([a, b]) => `${a.toFixed(1)},${b.toFixed(1)}`).join(" "), class: "line" }));
  for (const t of turns) {
    const w = firstPlayersWin(t);
    if (w === undefined) continue;
    const drop = winDrop(t);
    const mistake = isMistake(t);
    const g = svg("g", { class: `turn${mistake ? " mistake" : ""}`, tabindex: 0, "data-event": t.event,
      "data-mistake": t.mistake || "none" });
    if (mistake && drop !== undefined && drop > 0) {
      const best = t.player === 1 ? w + drop : w - drop;
      g.append(svg("line", { x1: x(t.event), x2: x(t.event), y1: y(best), y2: y(w), class: "drop" }));
    }
    const colour = mistake ? "#c0392b" : COLOURS[t.player - 1] ?? "#444";
    const estimate = t.winSource === "table";
    g.append(svg("circle", { cx: x(t.event), cy: y(w), r: mistake ? 4.5 : 3, stroke: colour,
      fill: estimate ? "#fff" : colour }));
    const who = view.players[t.player - 1] ?? t.nick;
    const lost = lossText(t, true);
    const loss = lost ? `, ${lost} below ${t.best?.move ?? "the best"}` : "";
    g.append(svg("title", {}, `event ${t.event}: ${who} ${t.played?.move ?? ""} — ${(t.player === 1 ? w : 100 - w).toFixed(1)}% ` +
      `for ${who}${estimate ? " (win table estimate)" : ""}${loss}${mistake ? ` (${t.mistake} mistake)` : ""}`));
    g.addEventListener("click", () => onTurn(t.event));
    g.addEventListener("keydown", (e) => { if ((e as KeyboardEvent).key === "Enter") onTurn(t.event); });
    chart.append(g);
  }
  return chart;
}

function summaryRows(sums: PlayerAnalysisSummary[]) {
  return sums.map((s) => [s.nick, s.turns, s.optimal, s.mistakeIndex.toFixed(1),
    `${s.smallMistakes} / ${s.mediumMistakes} / ${s.largeMistakes}`, s.winPctLost.toFixed(1), s.equityLost.toFixed(1),
    `${s.bingosMissed} of ${s.bingosAvailable}`, `${s.phonies} (${s.phoniesChallenged} challenged)`, s.challengesMissed]);
}

/** The review as it stands: the chart, the per-player summary (final), and the turns (a row: go there). */
export function renderReview(box: HTMLElement, view: ReviewView, cursor: number, onTurn: (event: number) => void): void {
  const turns = [...view.turns.values()].sort((a, b) => a.event - b.event);
  const parts: Node[] = [];
  const last = view.last;
  if (last) {
    parts.push(h("p", { className: "summary" },
      `${last.turnsDone} of ${last.turnsTotal} turns analysed` + (last.lexicon ? ` · lexicon ${last.lexicon}` : "") +
      (last.budget && last.final ? ` · sim ${last.budget.simIterations} iterations, ${last.budget.simPlies} plies · ` +
        `pre-endgame up to ${last.budget.pegMaxBag} in the bag · endgame ${last.budget.endgamePlies} plies` : "") +
      (last.reused ? " · from the server's review store" : "")));
  }
  const key = (i: number) => h("span", { className: `key p${i}` }, "●");
  const chart = h("figure", { className: "chart" }, winChart(view, cursor, onTurn),
    h("figcaption", {}, `${view.players[0] ?? "first player"}'s win probability after each turn (` +
      `${view.players[1] ?? "the second player"}'s is the rest): `, key(0), ` ${view.players[0] ?? "first"}'s turns, `,
    key(1), ` ${view.players[1] ?? "second"}'s; red: a mistake, its line the drop from the engine's best; hollow: ` +
      "the win table's estimate. Click a turn to go to it."));
  parts.push(chart);
  if (last?.summary.length) {
    const t = table([{ label: "player", className: "left" }, { label: "turns" }, { label: "best" },
      { label: "mistake index", title: "0.2 × small + 0.5 × medium + 1.0 × large" },
      { label: "small / medium / large" }, { label: "win % lost" }, { label: "equity lost" },
      { label: "bingos missed" }, { label: "phonies" }, { label: "challenges missed" }],
    summaryRows(last.summary), (i) => ({ nick: last.summary[i].nick, mistakeIndex: last.summary[i].mistakeIndex.toFixed(2) }));
    t.id = "review-summary";
    t.querySelector("table")!.setAttribute("aria-label", "review summary");
    parts.push(t);
  }
  const rows = turns.map((t) => {
    const flags = [t.missedBingo ? "missed bingo" : "", t.phony ? "phony" : "", t.missedChallenge ? "missed challenge" : "",
      t.blownEndgame ? "blown endgame" : "", t.skipped ? `skipped: ${t.skipped}` : ""].filter(Boolean).join(", ");
    return [t.event, t.nick, t.phase, t.played?.move ?? "", t.best?.move ?? "", lossText(t),
      isMistake(t) ? t.mistake : "", flags];
  });
  const tt = table([{ label: "event" }, { label: "player", className: "left" }, { label: "phase", className: "left" },
    { label: "played", className: "mv" }, { label: "best", className: "mv" },
    { label: "loss", title: "spread (endgame), win probability (simulation, pre-endgame), else equity; + : at least" },
    { label: "mistake", className: "left" }, { label: "", className: "left" }],
  rows, (i) => ({ event: String(turns[i].event), mistake: turns[i].mistake || "none" }), (i) => onTurn(turns[i].event));
  tt.id = "review-turns";
  tt.querySelector("table")!.setAttribute("aria-label", "reviewed turns");
  turns.forEach((t, i) => { if (isMistake(t)) tt.querySelectorAll("tbody tr")[i].classList.add(`mistake-${t.mistake}`); });
  parts.push(tt);
  box.replaceChildren(...parts);
  box.dataset.turns = String(turns.length);
  box.dataset.mistakes = String(turns.filter(isMistake).length);
}

/** A batch of games summed up per player (ReviewGames): the summary table and each player's biggest
 * mistakes, with the games that could not be reviewed. */
export function renderBatch(box: HTMLElement, snap: ReviewGamesProgress, errors: { game: string; error: string }[]): void {
  const parts: Node[] = [h("p", { className: "summary" }, `${snap.gamesDone} of ${snap.gamesTotal} games reviewed`)];
  const sum = snap.summary;
  if (sum) {
    parts[0].textContent += ` · ${sum.analysed} analysed, ${sum.reused} from the review store, ${sum.failed} failed`;
    const players = sum.players;
    const t = table([{ label: "player", className: "left" }, { label: "games" }, { label: "turns" }, { label: "best" },
      { label: "mistake index / game", title: "the per-game index (0.2 × small + 0.5 × medium + 1.0 × large), mean" },
      { label: "small / medium / large" }, { label: "win % lost / turn" }, { label: "bingos missed" },
      { label: "phonies" }, { label: "blown endgames" }],
    players.map((p) => [p.name, p.games, p.turns, p.optimal, p.mistakeIndexPerGame.toFixed(2),
      `${p.smallMistakes} / ${p.mediumMistakes} / ${p.largeMistakes}`, p.winPctLostPerTurn.toFixed(2),
      `${p.bingosMissed} of ${p.bingosAvailable}`, `${p.phonies} (${p.phoniesChallenged} challenged)`, p.blownEndgames]),
    (i) => ({ name: players[i].name, games: String(players[i].games), mistakeIndex: players[i].mistakeIndexPerGame.toFixed(2) }));
    t.id = "batch-summary";
    t.querySelector("table")!.setAttribute("aria-label", "players over the games");
    parts.push(t);
    for (const p of players) {
      if (!p.biggestMistakes.length) continue;
      parts.push(h("h4", {}, `${p.name}: biggest mistakes`), h("ol", { className: "mistakes" },
        ...p.biggestMistakes.map((m) => h("li", {}, `${m.game}, event ${m.event}: ${m.played} (best ${m.best}), ` +
          (m.winLoss !== undefined ? `${m.winLoss.toFixed(1)}% win` : m.spreadLoss !== undefined ? `${m.spreadLoss} spread`
            : `${(m.equityLoss ?? 0).toFixed(1)} equity`) + `${m.lossIsBound ? " at least" : ""} (${m.size})`))));
    }
  }
  if (errors.length) {
    parts.push(h("ul", { className: "warnings", id: "batch-errors" },
      ...errors.map((e) => h("li", {}, `${e.game}: not reviewed: ${e.error}`))));
  }
  box.replaceChildren(...parts);
  box.dataset.games = String(snap.gamesDone);
}
