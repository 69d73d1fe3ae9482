// Drives the board in headless Chromium (Debian's, through playwright-core; no browser is downloaded) as a
// user would, writes a screenshot of each step, and prints what the page showed as JSON for
// tests/test_web.py to compare with the CLI. Usage: node test/drive.mjs URL OUT_DIR  (inputs from env:
// MACONDO_PEG_CGP, MACONDO_GCG_FILE, MACONDO_GCG_TURN, CHROMIUM)
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium } from "playwright-core";

const [url, outDir] = process.argv.slice(2);
const PEG_CGP = process.env.MACONDO_PEG_CGP;
const GCG_FILE = process.env.MACONDO_GCG_FILE;
const GCG_TURN = Number(process.env.MACONDO_GCG_TURN || "3");
const executablePath = process.env.CHROMIUM || "/usr/bin/chromium";
const profile = mkdtempSync(join(tmpdir(), "macondo-chromium-"));
const out = { steps: [] };

// a fresh profile (playwright passes it as --user-data-dir) and the flags that work here
const browser = await chromium.launchPersistentContext(profile, {
  executablePath,
  headless: true,
  viewport: { width: 1600, height: 1000 },
  args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
    "--disable-component-update", "--disable-sync"],
});
try {
  const page = await browser.newPage();
  const consoleErrors = [];
  page.on("console", (m) => { if (m.type() === "error") consoleErrors.push(m.text()); });
  page.on("pageerror", (e) => consoleErrors.push(String(e)));
  const shot = async (name) => {
    await page.screenshot({ path: join(outDir, `${name}.png`), fullPage: true });
    out.steps.push(name);
  };
  const resultsState = () => page.$eval("#results", (el) => ({ ...el.dataset }));
  const rows = () => page.$$eval("#results tbody tr", (trs) => trs.map((tr) => ({ ...tr.dataset })));

  await page.goto(url);
  await page.waitForFunction(() => document.getElementById("server-status").textContent.startsWith("server"));
  // every control has an accessible name (a label, aria-label or text)
  out.unnamedControls = await page.$$eval("input, textarea, select, button", (els) => els
    .filter((e) => !(e.labels && e.labels.length) && !e.getAttribute("aria-label") && !e.textContent.trim())
    .map((e) => e.id || e.outerHTML.slice(0, 60)));

  // 1. a bad CGP: the server's words
  await page.fill("#cgp", "not a cgp");
  await page.click("#load-cgp");
  await page.waitForFunction(() => document.getElementById("error").textContent !== "");
  out.badCgpError = await page.$eval("#error", (el) => ({ text: el.textContent, code: el.dataset.code }));

  // 2. load a CGP and generate
  await page.fill("#cgp", PEG_CGP);
  await page.click("#load-cgp");
  await page.waitForFunction(() => Number(document.getElementById("board").dataset.tiles) > 0);
  out.errorAfterLoad = await page.$eval("#error", (el) => el.textContent);
  out.boardTiles = Number(await page.$eval("#board", (el) => el.dataset.tiles));
  out.rack = await page.$eval(".player.on-turn .rack", (el) => el.textContent);
  out.unseen = await page.$eval("#unseen", (el) => el.textContent);
  await shot("01-cgp-loaded");
  await page.click("#gen");
  await page.waitForSelector("#results[data-kind=moves] tbody tr");
  out.moves = await rows();
  await page.click("#results tbody tr:first-child");   // the move shown on the board
  out.previewSquares = await page.$$eval(".sq.preview", (els) => els.length);
  await shot("02-generated");

  // 3. a pre-endgame with small plies, watched live to the end
  await page.fill("#opt-peg-plies", process.env.MACONDO_PEG_PLIES || "1");
  await page.click("#peg");
  const seen = new Set();
  let liveShot = false;
  for (;;) {
    const st = await resultsState();
    if (st.state === "running") {
      seen.add(st.updates);
      if (!liveShot && seen.size >= 3 && (await page.$$("#results .cell")).length > 0) {
        await shot("03-peg-live");
        liveShot = true;
      }
    }
    if (st.state === "final" || st.state === "stopped") break;
    await page.waitForTimeout(60);
  }
  out.pegRunningUpdates = seen.size;
  out.peg = { ...(await resultsState()), rows: await rows() };
  out.pegStatus = await page.$eval("#job-status", (el) => el.textContent);
  out.pegGridCells = await page.$$eval("#results .cell:not(.pending)", (els) => els.length - 5);  // less the legend
  await shot("04-peg-final");

  // 4. a longer solve, stopped: the best result so far
  await page.fill("#opt-peg-plies", "4");
  await page.click("#peg");
  await page.waitForFunction(() => {
    const d = document.getElementById("results").dataset;
    return d.state === "running" && Number(d.updates) >= 2;
  });
  const t0 = Date.now();
  await page.click("#stop");
  await page.waitForFunction(() => ["stopped", "final"].includes(document.getElementById("results").dataset.state),
    null, { timeout: 15000 });
  out.stopSeconds = (Date.now() - t0) / 1000;
  out.stopped = { ...(await resultsState()), rows: (await rows()).length };
  out.stoppedStatus = await page.$eval("#job-status", (el) => el.textContent);
  await shot("05-peg-stopped");

  // 5. a move typed and played (the best-by-equity from the list would do too; this is the case's best)
  const tilesBefore = Number(await page.$eval("#board", (el) => el.dataset.tiles));
  await page.fill("#move-input", "13L ONYX");
  await page.press("#move-input", "Enter");
  await page.waitForFunction((n) => Number(document.getElementById("board").dataset.tiles) > n, tilesBefore);
  out.played = {
    tilesAdded: Number(await page.$eval("#board", (el) => el.dataset.tiles)) - tilesBefore,
    scores: await page.$$eval(".player .score", (els) => els.map((e) => Number(e.textContent))),
    onTurn: await page.$eval(".player.on-turn", (el) => Number(el.dataset.player)),
  };

  // 6. a GCG uploaded from the browser, stepped through
  await page.setInputFiles("#gcg-file", GCG_FILE);
  await page.waitForSelector("#turns:not([hidden])");
  out.gcgStart = await page.$eval("#turn-label", (el) => el.textContent);
  const tilesAt = [Number(await page.$eval("#board", (el) => el.dataset.tiles))];
  for (let i = 0; i < GCG_TURN; i++) {
    const before = await page.$eval("#turn-label", (el) => el.dataset.turn);
    await page.click("#turn-next");
    await page.waitForFunction((b) => document.getElementById("turn-label").dataset.turn !== b, before);
    tilesAt.push(Number(await page.$eval("#board", (el) => el.dataset.tiles)));
  }
  out.gcgTilesByTurn = tilesAt;
  out.gcgTurn = await page.$eval("#turn-label", (el) => el.textContent);
  out.gcgCgp = await page.$eval("#board", (el) => el.dataset.cgp);
  out.gcgScores = await page.$$eval(".player .score", (els) => els.map((e) => Number(e.textContent)));
  await shot("06-gcg-stepped");
  await page.click("#turn-prev");
  await page.waitForFunction((t) => document.getElementById("turn-label").dataset.turn === String(t), GCG_TURN - 1);
  out.gcgBack = await page.$eval("#turn-label", (el) => el.textContent);

  // 7. a simulation of the game's position, stopped while it updates: the ranking so far
  await page.fill("#opt-iterations", "1000000");
  await page.fill("#opt-threads", "1");
  await page.click("#sim");
  await page.waitForFunction(() => {
    const d = document.getElementById("results").dataset;
    return d.kind === "simulation" && d.state === "running" && Number(d.updates) >= 3;
  });
  const simRunning = await rows();
  await page.click("#stop");
  await page.waitForFunction(() => document.getElementById("results").dataset.state === "stopped");
  out.sim = { rowsWhileRunning: simRunning.length, rows: await rows(),
    status: await page.$eval("#job-status", (e) => e.textContent) };
  await shot("07-sim-stopped");

  // 8. an endgame (one thread, so the best line is the CLI's); a simulation there is refused as worded
  if (process.env.MACONDO_ENDGAME_CGP) {
    await page.fill("#cgp", process.env.MACONDO_ENDGAME_CGP);
    await page.click("#load-cgp");
    await page.waitForFunction((c) => document.getElementById("board").dataset.cgp === c, process.env.MACONDO_ENDGAME_CGP);
    out.turnsHiddenForCgp = await page.$eval("#turns", (el) => el.hidden && getComputedStyle(el).display === "none");
    await page.fill("#opt-eg-plies", "3");
    await page.click("#endgame");
    await page.waitForFunction(() => ["final", "stopped"].includes(document.getElementById("results").dataset.state));
    out.endgame = { ...(await resultsState()), lineShown: await page.$$eval("#results ol.line li", (l) => l.length) };
    await shot("08-endgame");
    await page.click("#sim");
    await page.waitForFunction(() => document.getElementById("error").textContent !== "");
    out.simInEndgameError = await page.$eval("#error", (el) => ({ text: el.textContent, code: el.dataset.code }));
  }
  out.consoleErrors = consoleErrors;
} finally {
  await browser.close();
  rmSync(profile, { recursive: true, force: true });
}
console.log(JSON.stringify(out));
