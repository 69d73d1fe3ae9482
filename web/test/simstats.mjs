// Drives the board in headless Chromium through a simulation with statistics: the leader's heatmap over the board
// and its score histogram, another play chosen by its row, another ply, and a simulation without statistics.
// Prints what the page showed as JSON for tests/api/test_web_simstats.py; the shot board-sim-stats.png is the one
// docs/web-board.md shows. Usage: node test/simstats.mjs URL OUT_DIR; inputs from env: MACONDO_SIM_CGP,
// MACONDO_SIM_PLAYS, MACONDO_SIM_ITERATIONS, CHROMIUM.
import { runBoard } from "./board.mjs";

const [url, outDir] = process.argv.slice(2);
const env = process.env;

await runBoard(outDir, async ({ page, out, shot }) => {
  const ended = () => page.waitForFunction(
    () => ["final", "stopped"].includes(document.getElementById("results").dataset.state), null, { timeout: 120000 });
  /** The statistics shown: the panel's figures, the histogram's bars, the heat painted on the board. */
  const stats = () => page.evaluate(() => {
    const box = document.getElementById("sim-stats");
    const heat = [...document.querySelectorAll("#board .sq.heat")].map((s) => ({ coord: s.dataset.coord,
      count: Number(s.dataset.heat), label: s.textContent, colour: getComputedStyle(s).backgroundColor }));
    return {
      present: !!box, hidden: box ? box.hidden : true, ...(box ? box.dataset : {}),
      bars: box ? [...box.querySelectorAll(".hist .bar")].map((b) => Number(b.dataset.count)) : [],
      plyButtons: box ? [...box.querySelectorAll(".ply-tabs button")].map((b) => ({ ply: b.dataset.ply,
        pressed: b.getAttribute("aria-pressed") })) : [],
      leaveRows: box ? box.querySelectorAll("table.leave-stats tbody tr").length : 0,
      heat,
      preview: [...document.querySelectorAll("#board .sq.preview")].map((s) => s.dataset.coord),
    };
  });

  await page.goto(url);
  await page.waitForFunction(() => document.getElementById("server-status").textContent.startsWith("server"));
  await page.fill("#cgp", env.MACONDO_SIM_CGP);
  await page.click("#load-cgp");
  await page.waitForFunction(() => document.getElementById("board").dataset.cgp !== "");
  if (!(await page.$eval("#sim-options", (el) => el.open))) await page.click("#sim-options > summary");
  out.statsDefault = await page.$eval("#opt-sim-stats", (el) => el.checked);
  await page.fill("#opt-sim-plays", env.MACONDO_SIM_PLAYS || "4");
  await page.fill("#opt-iterations", env.MACONDO_SIM_ITERATIONS || "150");
  await page.fill("#opt-sim-plies", "2");
  await page.fill("#opt-sim-threads", "1");
  await page.click("#sim-options > summary");

  // the leader's statistics: its ply 1 (the opponent's reply) painted on the board
  await page.click("#sim");
  await ended();
  out.rows = await page.$$eval("#results tbody tr[data-move]", (trs) => trs.map((tr) => tr.dataset.move));
  out.leader = await stats();
  // the leader's row: the play itself shown on the board among the squares its replies used
  await page.click("#results tbody tr:nth-child(1)");
  out.leaderShown = await stats();
  await shot("board-sim-stats");

  // another play, by its row: its statistics and its tiles on the board
  await page.click("#results tbody tr:nth-child(2)");
  await page.waitForFunction((m) => document.getElementById("sim-stats").dataset.play === m, out.rows[1]);
  out.second = await stats();
  // its ply 2
  await page.click("#sim-stats .ply-tabs button[data-ply='2']");
  await page.waitForFunction(() => document.getElementById("sim-stats").dataset.ply === "2");
  out.secondPly2 = await stats();
  await shot("sim-stats-ply2");

  // without statistics: no panel content, no heat
  if (!(await page.$eval("#sim-options", (el) => el.open))) await page.click("#sim-options > summary");
  await page.uncheck("#opt-sim-stats");
  await page.click("#sim");
  await ended();
  await page.waitForFunction(() => document.getElementById("sim-stats")?.hidden);
  out.without = await stats();
});
