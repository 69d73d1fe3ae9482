// The pre-endgame: its options (every one SolvePreEndgameRequest has, as `macondo peg` has them) and the live
// results: per-play full-depth wins with their bounds, the quick pass beside them, the leader and why, each
// play's draws as a one-line summary that expands into a bounded grid, and every play reachable.
import type { PEGOutcomeInfo, PEGPlayInfo, PreEndgameProgress, SolvePreEndgameRequest } from "@macondo/client";
import { $, h, listOf, replaceKeepingScroll, summaryList, table, type Column } from "./dom";

// Fields the server may add to PreEndgameProgress / PEGPlayInfo (read when the generated types and the
// server have them; the board works without them).
interface PegExtras {
  leader: string;                    // the play named by the best knowledge so far
  leaderTies: string[];              // plays tied with the leader by everything known
  scopeNote: string;                 // plays left out by the options, and which option takes them in
  playsOutOfScope: bigint | number;
  nestingNote: string;               // what the nesting cap did
  nestingCap: string;                // skip or unresolved
  calibratedOn: bigint | number;     // full-depth verdicts the estimate's calibration rests on
}
interface PlayExtras {
  cappedLow: number;                 // the count with continuations past the nesting cap as losses
  cappedHigh: number;                // ... as wins
  cappedWeight: bigint | number;     // ordered draws whose verdict the cap took part in
}
type Snap = PreEndgameProgress & Partial<PegExtras>;
type Play = PEGPlayInfo & Partial<PlayExtras>;

// ------------------------------------------------------------------ options

interface Defaults { [id: string]: string | boolean }
const DEFAULTS: Defaults = {
  "opt-peg-plies": "4", "opt-peg-threads": "0", "opt-peg-time": "0", "opt-peg-max-tiles": "1", "opt-peg-nested": "1",
  "opt-peg-nesting-cap": "skip",
  "opt-peg-opp-model": "pessimistic", "opt-peg-leaf": "auto", "opt-peg-rows": "40", "opt-peg-quick": true,
  "opt-peg-early-cutoff": false, "opt-peg-skip-deep": true, "opt-peg-skip-tiebreak": false,
  "opt-peg-heuristics": false, "opt-peg-summary-only": false, "opt-peg-opp-rack": "", "opt-peg-only": "",
  "opt-peg-eventuality": "", "opt-peg-cluster": false, "opt-peg-checkpoint": false, "opt-peg-resume": false,
};

const val = (id: string) => ($<HTMLInputElement>(id).value ?? "").trim();
const checked = (id: string) => $<HTMLInputElement>(id).checked;
function int(id: string, fallback: number): number {
  const v = val(id);
  if (v === "") return fallback;
  const n = Number(v);
  if (!Number.isInteger(n)) throw new Error(`${labelOf(id)}: ${v} is not a whole number`);
  return n;
}
function seconds(id: string): number {
  const v = val(id);
  const n = v === "" ? 0 : Number(v);
  if (!Number.isFinite(n) || n < 0) throw new Error(`${labelOf(id)}: ${v} is not a number of seconds`);
  return n;
}
function labelOf(id: string): string {
  const el = $<HTMLInputElement>(id);
  return (el.labels?.[0]?.firstChild?.textContent ?? id).trim();
}

export function resetPegOptions(): void {
  for (const [id, v] of Object.entries(DEFAULTS)) {
    const el = $<HTMLInputElement>(id);
    if (typeof v === "boolean") el.checked = v;
    else el.value = v;
  }
  describePegOptions();
}

/** The request's options from the form (the position is added by the caller). */
export function pegOptions(): Partial<Omit<SolvePreEndgameRequest, "$typeName" | "position">> {
  return {
    endgamePlies: int("opt-peg-plies", 4),
    threads: int("opt-peg-threads", 0),
    maxTime: seconds("opt-peg-time"),
    maxTilesLeft: int("opt-peg-max-tiles", 1),
    maxNestedDepth: int("opt-peg-nested", 1),
    nestingCap: val("opt-peg-nesting-cap"),
    earlyCutoff: checked("opt-peg-early-cutoff"),
    skipDeepPass: checked("opt-peg-skip-deep"),
    skipTiebreaker: checked("opt-peg-skip-tiebreak"),
    quickPass: checked("opt-peg-quick"),
    endgameHeuristics: checked("opt-peg-heuristics"),
    onlySolve: listOf(val("opt-peg-only")),
    oppRack: val("opt-peg-opp-rack"),
    opponentModel: val("opt-peg-opp-model"),
    endgameLeaf: val("opt-peg-leaf"),
    eventuality: val("opt-peg-eventuality"),
    outcomesSummaryOnly: checked("opt-peg-summary-only"),
    useCluster: checked("opt-peg-cluster"),
    checkpoint: checked("opt-peg-checkpoint"),
    resume: checked("opt-peg-resume"),
  };
}

/** One line beside the options' heading: what differs from the server's defaults. */
export function describePegOptions(): void {
  const parts = [`${val("opt-peg-plies") || "4"} plies`];
  const changed = (id: string) => {
    const el = $<HTMLInputElement>(id);
    const d = DEFAULTS[id];
    return typeof d === "boolean" ? el.checked !== d : el.value.trim() !== d;
  };
  if (changed("opt-peg-time") && val("opt-peg-time") !== "") parts.push(`${val("opt-peg-time")} s`);
  if (changed("opt-peg-max-tiles")) parts.push(`max tiles left ${val("opt-peg-max-tiles")}`);
  if (changed("opt-peg-nested")) parts.push(`nested depth ${val("opt-peg-nested")}`);
  if (changed("opt-peg-nesting-cap")) parts.push(`past the cap: ${val("opt-peg-nesting-cap")}`);
  if (checked("opt-peg-early-cutoff")) parts.push("early cut-off");
  if (!checked("opt-peg-quick")) parts.push("no quick pass");
  if (!checked("opt-peg-skip-deep")) parts.push("deep pass");
  if (checked("opt-peg-skip-tiebreak")) parts.push("no tiebreak");
  if (changed("opt-peg-opp-model")) parts.push(`opponent ${val("opt-peg-opp-model")}`);
  if (changed("opt-peg-leaf")) parts.push(`leaf ${val("opt-peg-leaf")}`);
  const only = listOf(val("opt-peg-only"));
  if (only.length) parts.push(`only ${only.length} play${only.length === 1 ? "" : "s"}`);
  if (val("opt-peg-opp-rack")) parts.push(`opponent holds ${val("opt-peg-opp-rack").toUpperCase()}`);
  if (val("opt-peg-eventuality")) parts.push(`eventuality ${val("opt-peg-eventuality").toUpperCase()}`);
  $("peg-summary").textContent = `(${parts.join(", ")})`;
}

export function addOnlySolve(move: string): void {
  const box = $<HTMLTextAreaElement>("opt-peg-only");
  const plays = listOf(box.value);
  if (move && !plays.includes(move)) plays.push(move);
  box.value = plays.join("\n");
  describePegOptions();
}

// ------------------------------------------------------------------ results

const RESULTS = ["win", "draw", "loss", "unresolved", "pending"] as const;
const SHORT: Record<string, string> = { win: "W", draw: "D", loss: "L", unresolved: "U", pending: "P" };
const INLINE_CELLS = 8;      // a play with at most this many draw groups shows them in its row

/** What the user opened during one solve (kept across its snapshots). */
export interface PegView {
  showAll: boolean;
  expanded: Set<string>;
  rows: number;
}

export function newPegView(): PegView {
  return { showAll: false, expanded: new Set(), rows: Math.max(1, int("opt-peg-rows", 40)) };
}

function outcomeCell(o: PEGOutcomeInfo): HTMLElement {
  const cell = h("span", { className: `cell ${o.result}`, textContent: o.draw });
  let title = `${o.draw}: ${o.result}`;
  if (o.result === "pending" && o.quick) {
    cell.classList.add(`q-${o.quick}`);
    title += ` (quick pass: ${o.quick})`;
  }
  cell.title = `${title} · ${o.weight} ordered draw${o.weight === 1n ? "" : "s"}`;
  return cell;
}

/** The play's draw groups: every one in a fixed order when the server lists them all (pending ones with
 * their quick verdict), else the solved ones and a count of the rest. */
function outcomeCells(play: PEGPlayInfo): HTMLElement[] {
  if (play.outcomesAll.length) return play.outcomesAll.map(outcomeCell);
  const cells = play.outcomes.map(outcomeCell);
  const pending = play.outcomeCounts.find((c) => c.result === "pending");
  if (pending && pending.draws > 0n) {
    cells.push(h("span", { className: "cell pending more", textContent: `+${pending.draws}`,
      title: `${pending.draws} draw groups not solved yet` }));
  }
  return cells;
}

function drawGroups(play: PEGPlayInfo): number {
  return play.outcomesAll.length || Number(play.drawsTotal) || play.outcomes.length;
}

/** One line: a bar of the verdicts by weight and the draw-group counts ("7W 1L 112P"). */
function outcomeSummary(play: PEGPlayInfo): HTMLElement {
  const totalWeight = play.outcomeCounts.reduce((s, c) => s + Number(c.weight), 0);
  const bar = h("span", { className: "bar" });
  const counts: string[] = [];
  const words: string[] = [];
  for (const r of RESULTS) {
    const c = play.outcomeCounts.find((x) => x.result === r);
    if (!c || c.draws === 0n) continue;
    const seg = h("span", { className: `seg ${r}` });
    seg.style.width = `${totalWeight ? (100 * Number(c.weight)) / totalWeight : 0}%`;
    bar.append(seg);
    counts.push(`${c.draws}${SHORT[r]}`);
    words.push(`${c.draws} ${r}`);
  }
  const box = h("span", { className: "outc-sum" }, bar, h("span", { className: "counts" }, counts.join(" ") || "—"));
  box.title = words.join(", ") || "no draws";
  return box;
}

function outcomesColumn(play: PEGPlayInfo, view: PegView, rerender: () => void): HTMLElement {
  const key = play.move?.notation ?? "";
  const n = drawGroups(play);
  if (n <= INLINE_CELLS && (play.outcomesAll.length || play.outcomes.length || play.drawsTotal === 0n)) {
    const grid = h("div", { className: "grid inline" }, ...outcomeCells(play));
    grid.setAttribute("aria-label", `outcomes of ${key}`);
    return grid;
  }
  if (!play.outcomesAll.length && !play.outcomes.length) return outcomeSummary(play);   // counts only
  const open = view.expanded.has(key);
  const btn = h("button", { type: "button", className: "outc-toggle" }, outcomeSummary(play),
    h("span", { className: "caret", textContent: open ? "▴" : "▾" }));
  btn.setAttribute("aria-expanded", String(open));
  btn.setAttribute("aria-label", `outcomes of ${key}: ${outcomeSummary(play).title}; ${open ? "hide" : "show"} every draw`);
  btn.dataset.move = key;
  btn.addEventListener("click", (e) => {
    e.stopPropagation();
    if (view.expanded.has(key)) view.expanded.delete(key);
    else view.expanded.add(key);
    rerender();
  });
  return btn;
}

/** Wins count whole and half draws: "1008", "7.5". */
const f1 = (x: number) => (Number.isInteger(x) ? String(x) : x.toFixed(1));
const pct = (x: number, total: number) => (total ? `${((100 * x) / total).toFixed(1)}%` : "");

function withPct(x: number, total: number): HTMLElement {
  return h("span", {}, f1(x), total ? h("span", { className: "sub" }, ` ${pct(x, total)}`) : null);
}

/** The quick pass's wins at the deepest level complete for the play (marked "+" at the second level), else the
 * first level's, with the draw groups judged while it runs. */
function quickCell(p: PEGPlayInfo, total: number): HTMLElement | string {
  if (p.quickDrawsDone === 0n) return "—";
  const deep = p.drawsTotal > 0n && p.quick2DrawsDone === p.drawsTotal;
  const cell = withPct(deep ? p.quick2Wins : p.quickWins, total);
  if (deep) {
    cell.append(h("span", { className: "sub", title: `at the second level; first level ${f1(p.quickWins)}` }, "+"));
  } else if (p.quickDrawsDone < p.drawsTotal) {
    cell.append(h("span", { className: "sub" }, ` (${p.quickDrawsDone}/${p.drawsTotal})`));
  }
  return cell;
}

const DEPTH: Record<string, string> = {
  full: "full depth", estimate: "best estimate", quick: "by the quick pass", only: "the only candidate",
};

/** "winner" once known (finished, proven by bounds, the only play), else "leader" by the best knowledge so far,
 * with the server's reason, or why there is none; plays tied with it listed (the first few, the rest on a click). */
function leaderLine(s: Snap): HTMLElement {
  const leader = s.leader !== undefined ? s.leader : s.winner;
  const known = s.winner !== "" && s.winner === leader;
  const box = h("p", { className: "leader-line", id: "peg-leader" });
  box.dataset.leader = leader;
  box.dataset.depth = s.leaderDepth;
  if (!leader) {
    box.append(h("strong", {}, "leader: "), `none yet${s.noLeaderReason ? ` — ${s.noLeaderReason}` : ""}`);
    return box;
  }
  const why = s.leaderReason || DEPTH[s.leaderDepth] || s.leaderDepth;
  box.append(h("strong", {}, known ? "winner: " : "leader: "), h("span", { className: "mv" }, leader),
    why ? ` — ${why}` : "");
  if (s.calibratedOn && s.leaderDepth === "estimate") box.append(` (calibrated on ${s.calibratedOn} full-depth verdicts)`);
  const ties = s.leaderTies ?? [];
  if (ties.length) {
    const FEW = 4;
    box.append(` · tied with ${ties.slice(0, FEW).join(", ")}`);
    if (ties.length > FEW) {
      const more = h("details", { className: "ties" }, h("summary", {}, `and ${ties.length - FEW} more`),
        h("span", { className: "mv" }, ties.slice(FEW).join(", ")));
      box.append(" ", more);
    }
  }
  return box;
}

function eta(s: number): string {
  if (!s) return "";
  return s < 90 ? `${s.toFixed(0)} s` : s < 5400 ? `${(s / 60).toFixed(0)} min` : `${(s / 3600).toFixed(1)} h`;
}

/** A snapshot drawn into `results`; `show` puts a play's move on the board. */
export function renderPeg(snap: PreEndgameProgress, view: PegView, results: HTMLElement,
  show: (play: PEGPlayInfo) => void): void {
  const s = snap as Snap;
  const rerender = () => renderPeg(snap, view, results, show);
  if (s.eventuality) {        // one draw order explained: the verdict blocks, as `macondo peg --eventuality`
    results.replaceChildren(h("pre", { className: "eventuality", id: "peg-eventuality" }, s.eventuality));
    Object.assign(results.dataset, { plays: "0", complete: String(s.complete), elapsed: s.elapsedSeconds.toFixed(2) });
    return;
  }
  const total = Number(s.totalPermutations);
  const pairs: [string, string][] = [
    ["phase", s.phase || "—"],
    ["draws", `${s.drawsDone}/${s.drawsTotal}${s.quickDrawsDone ? ` (quick ${s.quickDrawsDone}` +
      `${s.quick2DrawsDone ? `, second level ${s.quick2DrawsDone}/${s.quick2DrawsTaken}` : ""})` : ""}`],
    ["orderings", s.totalPermutations.toString()],
    ["endgames", `${s.endgames} (${s.endgamesPerSecond.toFixed(0)}/s)`],
    ["best bounds", `${f1(s.bestLower)}–${f1(s.bestUpper)}`],
    ["plies", `${s.endgamePlies}${s.quickEndgamePlies ? ` (quick ${s.quickEndgamePlies}` +
      `${s.quick2DrawsDone ? ` then ${s.quick2EndgamePlies}` : ""}, ${s.quickRepliesPerTurn} replies/turn)` : ""}`],
  ];
  if (s.opponentModel) pairs.push(["opponent", s.opponentModel]);
  if (s.drawGroupsLeft) pairs.push(["draw groups left", s.drawGroupsLeft.toString()]);
  if (!s.final && s.etaSeconds) pairs.push(["ETA", eta(s.etaSeconds)]);
  if (s.nestedCalls) pairs.push(["nested solves", `${s.nestedCalls} (${s.nestedCacheHits} from cache)`]);
  if (s.opponentSolves) pairs.push(["opponent solves", s.opponentSolves.toString()]);
  if (s.reusedVerdicts || s.checkpointedVerdicts) {
    pairs.push(["checkpoint", `${s.reusedVerdicts} reused, ${s.checkpointedVerdicts} recorded`]);
  }
  if (s.clusterWorkers) pairs.push(["cluster", `${s.clusterWorkers} workers, ${s.clusterTasks} tasks`]);
  if (s.nestingNote && s.nestingCap) pairs.push(["past the nesting cap", s.nestingCap]);
  const dl = summaryList(pairs, (k) => k.replace(/\s+/g, "-"));

  const legend = h("div", { className: "legend" });
  for (const r of RESULTS) {
    legend.append(h("span", {}, h("span", { className: `cell ${r}`, textContent: SHORT[r] }), ` ${r}`));
  }
  legend.append(h("span", {}, h("span", { className: "cell pending q-win", textContent: "P" }),
    " pending, underlined by its quick verdict"));

  const plays = s.plays as Play[];
  const shown = view.showAll ? plays : plays.slice(0, view.rows);
  const capped = plays.some((p) => (p.cappedWeight !== undefined && Number(p.cappedWeight) > 0) ||
    (p.cappedLow !== undefined && p.cappedHigh !== undefined && (p.cappedLow !== p.lowerWins || p.cappedHigh !== p.upperWins)));
  const anySpread = plays.some((p) => p.spread !== undefined);
  const cols: Column[] = [
    { label: "#" }, { label: "move", className: "mv" },
    { label: "wins", title: "wins + draws/2 over the ordered draws at full depth (certain so far), and the win %" },
    { label: "bounds", title: "lower–upper: the wins certain so far, and those plus every draw not resolved yet" },
    { label: "quick", title: "wins at the quick pass (a preview, not a bound) and its win %, + at its second level " +
      "(deeper endgames, for the plays the first level cannot separate); (draw groups judged / all) while it runs" },
  ];
  if (capped) {
    cols.push({ label: "capped", title: "the count with the draws a continuation past the nesting cap took part in " +
      "as losses – as wins; the count without the cap lies between them" });
  }
  if (anySpread) cols.push({ label: "spread", title: "the tiebreak: mean spread (tiebroken plays only)" });
  cols.push({ label: "draws", title: "draw groups with a full-depth verdict / all; cut: abandoned by the early cut-off (it cannot beat the leader)" },
    { label: "outcomes", className: "left", title: "each draw group's verdict (W win, D draw, L loss, U unresolved, P pending)" });

  const rows = shown.map((p, i) => {
    const row: (string | number | Node)[] = [i + 1, (p.move?.display ?? "").trim(), withPct(p.wins, total),
      `${f1(p.lowerWins)}–${f1(p.upperWins)}`, quickCell(p, total)];
    if (capped) row.push(p.cappedLow !== undefined && p.cappedHigh !== undefined ? `${f1(p.cappedLow)}–${f1(p.cappedHigh)}` : "");
    if (anySpread) row.push(p.spread !== undefined ? p.spread.toFixed(1) : "");
    const draws = h("span", {}, `${p.drawsDone}/${p.drawsTotal}`);
    if (p.cutOff) draws.append(h("span", { className: "sub cut", title: "cut off: it cannot beat the leader" }, " cut"));
    row.push(draws, outcomesColumn(p, view, rerender));
    return row;
  });
  const t = table(cols, rows,
    (i) => ({
      move: shown[i].move?.notation ?? "", wins: shown[i].wins.toFixed(2), lower: String(shown[i].lowerWins),
      upper: String(shown[i].upperWins), quick: String(shown[i].quickWins), quickDone: String(shown[i].quickDrawsDone),
      quick2: String(shown[i].quick2Wins), quick2Done: String(shown[i].quick2DrawsDone),
      cutOff: String(shown[i].cutOff), completeAt: shown[i].completeAt, draws: String(drawGroups(shown[i])),
    }),
    (i) => show(shown[i]),
  );
  // the expanded outcome lists: a full-width row under their play, wrapping into a bounded grid
  const body = t.querySelector("tbody")!;
  const trs = [...body.rows];
  shown.forEach((p, i) => {
    const key = p.move?.notation ?? "";
    if (!view.expanded.has(key) || drawGroups(p) <= INLINE_CELLS) return;
    const grid = h("div", { className: "grid expanded" }, ...outcomeCells(p));
    grid.setAttribute("aria-label", `every draw of ${key}`);
    const td = h("td", { colSpan: cols.length, className: "left" }, grid);
    const tr = h("tr", { className: "detail", data: { detailOf: key } }, td);
    trs[i].after(tr);
  });
  trs.forEach((tr, i) => {
    if (shown[i].completeAt === "full") tr.classList.add("full");
    tr.title = `estimate ${f1(shown[i].estimate)} (full-depth verdicts, else the quick pass)`;
    if (shown[i].cutOff) tr.classList.add("cut");
    if (shown[i].move?.notation === (s.leader !== undefined ? s.leader : s.winner)) tr.classList.add("leader");
  });

  const parts: Node[] = [leaderLine(s), dl, legend, t];
  if (plays.length > view.rows) {
    const hidden = plays.length - shown.length;
    const more = h("button", { type: "button", id: "peg-more", className: "link" },
      view.showAll ? `Show only the first ${view.rows} plays` : `(${hidden} more plays not shown) — show all ${plays.length}`);
    more.setAttribute("aria-expanded", String(view.showAll));
    more.addEventListener("click", () => {
      view.showAll = !view.showAll;
      rerender();
    });
    parts.push(h("p", { className: "summary more" }, more));
  }
  const notes = [s.scopeNote, s.nestingNote].filter((x): x is string => !!x);
  if (s.playsOutOfScope && !s.scopeNote) notes.push(`${s.playsOutOfScope} plays are outside the options' scope`);
  if (notes.length) {
    parts.push(h("ul", { className: "notes", id: "peg-notes" }, ...notes.map((n) => h("li", {}, n))));
  }
  replaceKeepingScroll(results, ...parts);
  Object.assign(results.dataset, {
    winner: s.winner, leader: s.leader !== undefined ? s.leader : s.winner, plays: String(plays.length),
    shownRows: String(shown.length), complete: String(s.complete), endgamePlies: String(s.endgamePlies),
    opponentModel: s.opponentModel, elapsed: s.elapsedSeconds.toFixed(2), phase: s.phase,
  });
}
