// A simulated play's statistics (SimulateRequest.stats): the histogram of each ply's scores, the opponent's rack
// around their reply, and the heatmap of the squares a ply's moves put tiles on, drawn over the board.
import type { SimmedPlayInfo, SimulateProgress } from "@macondo/client";
import { h } from "./dom";

/** What the statistics panel shows: the play (its notation; "" the leader) and the ply (1: the opponent's reply). */
export interface SimStatsView {
  play: string;
  ply: number;
}

interface Heat {
  cgp: string;             // the position the heat belongs to: drawn only over that board
  counts: number[];        // row-major, dim x dim
  dim: number;
  iterations: number;
  max: number;
}

let heat: Heat | undefined;

export function newSimStatsView(): SimStatsView {
  return { play: "", ply: 1 };
}

/** No heatmap over the board (a new job, another position). */
export function clearSimHeat(): void {
  heat = undefined;
}

export function hasStats(p: SimmedPlayInfo): boolean {
  return p.plyStats.some((s) => s.scoreHistogram.length > 0) || p.opponentLeave.length > 0;
}

/** Paint an empty square of the board with its heat: the share of the iterations in which the ply shown put a
 * tile there, as a colour and a per-cent label. */
export function paintHeat(sq: HTMLElement, row: number, col: number, cgp: string): void {
  if (!heat || heat.cgp !== cgp || row >= heat.dim || col >= heat.dim) return;
  const count = heat.counts[row * heat.dim + col] ?? 0;
  if (count === 0) return;
  const share = count / Math.max(1, heat.iterations);
  const x = count / Math.max(1, heat.max);
  sq.classList.add("heat");
  sq.style.background = `rgba(215, 48, 31, ${(0.12 + 0.83 * x).toFixed(3)})`;
  sq.style.color = x > 0.55 ? "#fff" : "#5a1208";
  sq.dataset.heat = String(count);
  sq.replaceChildren(h("span", { className: "heat-pct", textContent: share < 0.01 ? "<1" : String(Math.round(100 * share)) }));
  sq.setAttribute("aria-label", `${sq.getAttribute("aria-label") ?? ""}; reply tiles here in ${(100 * share).toFixed(1)}% of iterations`);
}

const who = (ply: number) => (ply % 2 === 1 ? "the opponent" : "the player on turn");

/** The panel of one play's statistics, and the heatmap it sets for the board (drawn by the caller's redraw).
 * `onChange` runs when the user picks another ply. */
export function renderSimStats(box: HTMLElement, snap: SimulateProgress, cgp: string, view: SimStatsView,
  onChange: () => void): void {
  const plays = snap.plays;
  let idx = plays.findIndex((p) => (p.move?.notation ?? "") === view.play);
  if (idx < 0) idx = 0;
  const p = plays[idx];
  if (!p || !hasStats(p)) {
    box.replaceChildren();
    heat = undefined;
    box.hidden = true;
    return;
  }
  box.hidden = false;
  const plies = p.plyStats.length;
  const ply = Math.min(Math.max(1, view.ply), Math.max(1, plies));
  const stats = p.plyStats[ply - 1];
  const iterations = Number(p.iterations);
  const counts = (stats?.heatmap ?? []).map(Number);
  const dim = Math.round(Math.sqrt(counts.length));
  heat = counts.length ? { cgp, counts, dim, iterations, max: Math.max(0, ...counts) } : undefined;

  const name = (p.move?.display ?? "").trim();
  const title = h("h3", {}, `#${idx + 1} ${name}: statistics over ${iterations} iterations`);
  const plyButtons = h("div", { className: "ply-tabs", role: "group" });
  plyButtons.setAttribute("aria-label", "ply shown");
  for (let k = 1; k <= plies; k++) {
    const b = h("button", { type: "button", textContent: `ply ${k}${k === 1 ? " (reply)" : ""}`, data: { ply: String(k) } });
    b.setAttribute("aria-pressed", String(k === ply));
    b.addEventListener("click", () => {
      view.ply = k;
      onChange();
    });
    plyButtons.append(b);
  }
  const hist = (stats?.scoreHistogram ?? []).map(Number);
  const width = snap.scoreBinWidth || 10;
  const total = hist.reduce((a, b) => a + b, 0);
  const top = Math.max(1, ...hist);
  const lastUsed = hist.reduce((acc, c, i) => (c > 0 ? i : acc), 0);
  const bars = h("div", { className: "hist", data: { total: String(total) } });
  bars.setAttribute("role", "img");
  bars.setAttribute("aria-label", `score histogram of ply ${ply}`);
  hist.forEach((c, i) => {
    if (i > lastUsed && i > 4) return;
    const label = i === hist.length - 1 ? `${i * width}+` : `${i * width}`;
    const pct = total ? (100 * c) / total : 0;
    const bar = h("div", { className: "bar", title: `${label}${i === hist.length - 1 ? "" : `–${(i + 1) * width - 1}`}: ${c} (${pct.toFixed(1)}%)`,
      data: { bin: String(i), count: String(c) } },
    h("div", { className: "fill" }), h("div", { className: "bin", textContent: label }));
    (bar.firstChild as HTMLElement).style.height = `${(100 * c) / top}%`;
    bars.append(bar);
  });
  const heatTotal = counts.reduce((a, b) => a + b, 0);
  const line = h("p", { className: "summary" },
    `ply ${ply} (${who(ply)}): mean score ${(stats?.meanScore ?? 0).toFixed(2)}, bingos ${(stats?.bingoPct ?? 0).toFixed(2)}%` +
    ` · the board shows where its tiles went (${heatTotal} tiles; % of iterations)`);
  const parts: Node[] = [title, plyButtons, line, bars, h("p", { className: "hint" }, `points scored, bins of ${width}`)];
  const leave = p.opponentLeave.filter((t) => t.held > 0);
  if (leave.length) {
    const rows = leave.map((t) => h("tr", {}, h("td", { className: "mv", textContent: t.tile }),
      h("td", { textContent: t.held.toFixed(2) }), h("td", { textContent: t.kept.toFixed(2) })));
    const t = h("table", { className: "leave-stats" });
    t.createTHead().append(h("tr", {}, h("th", { className: "mv", textContent: "tile" }),
      h("th", { textContent: "held", title: "mean count on the opponent's rack before their reply" }),
      h("th", { textContent: "kept", title: "mean count left after their reply (before drawing)" })));
    t.createTBody().append(...rows);
    parts.push(h("h4", {}, "The opponent's rack around their reply (mean count per iteration)"), h("div", { className: "scroll short" }, t));
  }
  box.replaceChildren(...parts);
  Object.assign(box.dataset, { play: p.move?.notation ?? "", ply: String(ply), histogramTotal: String(total),
    heatTotal: String(heatTotal), iterations: String(iterations) });
}
