// Drives the board's review in headless Chromium: a GCG loaded and reviewed with small budgets (the chart of
// the win probability with its mistakes, the per-player summary, the turns), a mistake clicked on the chart (the
// board goes to the position before it, the engine's best move in the Move box), the cursor moved (the review
// stays, its cursor line follows), then a batch of GCG files summed up per player, a broken file among them.
// Prints what the page showed as JSON for tests/api/test_web_review.py; the shot board-review-chart.png is the
// one docs/web-board.md shows. Usage: node test/review.mjs URL OUT_DIR; inputs from env: MACONDO_GCG_FILE,
// MACONDO_BATCH_FILES (paths, os.pathsep-separated), MACONDO_LEXICON,
// MACONDO_REVIEW_OPTIONS (JSON: input id -> value), CHROMIUM.
import { readFileSync } from "node:fs";
import { delimiter } from "node:path";
import { runBoard } from "./board.mjs";

const [url, outDir] = process.argv.slice(2);
const env = process.env;

await runBoard(outDir, async ({ page, out, shot }) => {
  const ended = () => page.waitForFunction(
    () => ["final", "stopped"].includes(document.getElementById("review").dataset.state), null, { timeout: 240_000 });
  const rows = (sel) => page.$$eval(`${sel} tbody tr`, (trs) => trs.map((tr) => ({ ...tr.dataset,
    cells: [...tr.cells].map((td) => td.textContent) })));

  await page.goto(url);
  await page.waitForFunction(() => document.getElementById("server-status").textContent.startsWith("server"));
  out.disabledBefore = await page.$eval("#review-game", (el) => el.disabled);
  await page.waitForFunction((lx) => [...document.getElementById("lexicon").options].some((o) => o.value === lx),
    env.MACONDO_LEXICON);
  await page.selectOption("#lexicon", env.MACONDO_LEXICON);
  await page.fill("#gcg", readFileSync(env.MACONDO_GCG_FILE, "utf8"));
  await page.click("#load-gcg");
  await page.waitForFunction(() => !document.getElementById("turns").hidden);
  await page.click("#turn-last");
  await page.waitForFunction(() => document.getElementById("turn-label").dataset.turn !== "0");
  out.disabledLoaded = await page.$eval("#review-game", (el) => el.disabled);
  await page.click("#review-options > summary");
  for (const [id, value] of Object.entries(JSON.parse(env.MACONDO_REVIEW_OPTIONS))) await page.fill(`#${id}`, value);

  // 1. the game reviewed: chart, summary, turns
  await page.click("#review-game");
  await ended();
  out.review = await page.$eval("#review", (el) => ({ ...el.dataset }));
  out.points = await page.$$eval("#review .win-chart g.turn", (gs) => gs.map((g) => ({ event: Number(g.dataset.event),
    mistake: g.dataset.mistake, cy: Number(g.querySelector("circle").getAttribute("cy")),
    hollow: g.querySelector("circle").getAttribute("fill") === "#fff", drop: !!g.querySelector("line.drop"),
    title: g.querySelector("title").textContent })));
  out.chartBox = await page.$eval("#review .win-chart", (el) => el.getAttribute("viewBox"));
  const cursorX = () => page.$eval("#review .win-chart line.cursor", (el) => Number(el.getAttribute("x1")));
  out.cursorAtEnd = await cursorX();
  out.summary = await rows("#review-summary");
  out.turns = await rows("#review-turns");
  out.width = await page.$eval("#review", (el) => el.getBoundingClientRect().width);
  await shot("board-review-chart");

  // 2. a mistake clicked on the chart: the position before it, the best move in the Move box, the review kept
  const mistake = out.points.filter((p) => p.mistake !== "none").sort((a, b) => a.event - b.event)[0];
  if (mistake) {
    await page.click(`#review .win-chart g.turn[data-event="${mistake.event}"]`);
    await page.waitForFunction((t) => document.getElementById("turn-label").dataset.turn === String(t),
      mistake.event - 1);
    out.clicked = { event: mistake.event, turn: await page.$eval("#turn-label", (el) => el.dataset.turn),
      moveBox: await page.$eval("#move-input", (el) => el.value),
      kept: await page.$eval("#review", (el) => el.querySelectorAll(".win-chart g.turn").length),
      cursorX: await cursorX(),
      mistakeX: await page.$eval(`#review .win-chart g.turn[data-event="${mistake.event}"] circle`,
        (el) => Number(el.getAttribute("cx"))) };
  }

  // 3. many games summed up per player, a broken file among them
  const files = env.MACONDO_BATCH_FILES.split(delimiter);
  await page.setInputFiles("#review-files", files);
  await page.$eval("#review", (el) => { delete el.dataset.state; });     // the game's review has ended
  await page.click("#review-batch");
  await ended();
  out.batch = await page.$eval("#review", (el) => ({ ...el.dataset }));
  out.batchSummary = await rows("#batch-summary");
  out.batchErrors = await page.$$eval("#batch-errors li", (lis) => lis.map((li) => li.textContent));
  out.batchMistakes = await page.$$eval("#review .mistakes li", (lis) => lis.length);
  out.error = await page.$eval("#error", (el) => el.textContent);
  await shot("review-batch");
});
