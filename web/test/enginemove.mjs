// Drives the board's engine move in headless Chromium: a timed position (its CGP carries the clocks in a tmr
// op) is loaded, the engine plays with a level and then with `best`; the page shows each player's clock, what
// the engine played, how (phase) and in what time. Prints what the page showed as JSON for
// tests/api/test_web_enginemove.py. Usage: node test/enginemove.mjs URL OUT_DIR; inputs from env:
// MACONDO_TIMED_CGP, CHROMIUM.
import { runBoard } from "./board.mjs";

const [url, outDir] = process.argv.slice(2);
const env = process.env;

await runBoard(outDir, async ({ page, out, shot }) => {
  out.moves = [];
  await page.goto(url);
  await page.waitForFunction(() => document.getElementById("lexicon").options.length > 0, null, { timeout: 60_000 });
  await page.fill("#cgp", env.MACONDO_TIMED_CGP);
  await page.click("#load-cgp");
  await page.waitForFunction(() => document.querySelectorAll("#players .clock").length === 2, null, { timeout: 60_000 });
  out.clocksBefore = await page.$$eval("#players .clock", (els) => els.map((e) => e.textContent));
  for (const strategy of ["club", "best"]) {
    const before = await page.$eval("#board", (el) => el.dataset.cgp);
    await page.selectOption("#engine-strategy", strategy);
    await page.click("#engine-play");
    await page.waitForFunction((b) => document.getElementById("board").dataset.cgp !== b
      && (document.getElementById("engine-status").dataset.move ?? "") !== "", before, { timeout: 120_000 });
    out.moves.push(await page.$eval("#engine-status", (el) => ({ text: el.textContent, move: el.dataset.move,
      phase: el.dataset.phase })));
    await page.$eval("#engine-status", (el) => { delete el.dataset.move; });
  }
  out.clocksAfter = await page.$$eval("#players .clock", (els) => els.map((e) => e.textContent));
  out.error = await page.$eval("#error", (el) => el.textContent);
  await shot("board-engine-move");
});
