// Drives the board in headless Chromium (Debian's, through playwright-core; no browser is downloaded) as a
// user would, writes a screenshot of each step, and prints what the page showed as JSON for
// tests/api/test_web.py to compare with the CLI. The shots named board-*.png are the ones docs/web-board.md shows. Usage: node test/drive.mjs URL OUT_DIR  (inputs from env:
// MACONDO_PEG_CGP (1 tile in the bag), MACONDO_PEG4_CGP (4 in the bag), MACONDO_GCG_FILE, MACONDO_GCG_TURN,
// MACONDO_ENDGAME_CGP, MACONDO_PEG_PLIES, CHROMIUM)
import { readFileSync } from "node:fs";
import { runBoard } from "./board.mjs";

const [url, outDir] = process.argv.slice(2);
const PEG_CGP = process.env.MACONDO_PEG_CGP;
const PEG4_CGP = process.env.MACONDO_PEG4_CGP;
const GCG_FILE = process.env.MACONDO_GCG_FILE;
const GCG_TURN = Number(process.env.MACONDO_GCG_TURN || "3");

await runBoard(outDir, async ({ browser, page, out, shot }) => {
  await browser.grantPermissions(["clipboard-read", "clipboard-write"], { origin: new URL(url).origin });
  const resultsState = () => page.$eval("#results", (el) => ({ ...el.dataset }));
  const rows = () => page.$$eval("#results tbody tr[data-move]", (trs) => trs.map((tr) => ({ ...tr.dataset })));
  const text = (sel) => page.$eval(sel, (el) => el.textContent);
  const jobCount = () => page.$eval("#job-count", (el) => ({ text: el.textContent, ...el.dataset }));
  const ended = () => page.waitForFunction(
    () => ["final", "stopped"].includes(document.getElementById("results").dataset.state), null, { timeout: 120000 });
  const openOptions = async (id) => {
    if (!(await page.$eval(`#${id}`, (el) => el.open))) await page.click(`#${id} > summary`);
  };
  const closeOptions = async (id) => {
    if (await page.$eval(`#${id}`, (el) => el.open)) await page.click(`#${id} > summary`);
  };
  const loadCgp = async (cgp) => {
    await page.fill("#cgp", cgp);
    await page.click("#load-cgp");
    await page.waitForFunction((c) => document.getElementById("board").dataset.cgp.split(" ")[0] === c.split(" ")[0]
      && document.getElementById("error").textContent === "", cgp);
  };
  /** The current event of the list: its number, and whether it lies inside the list's visible box. */
  const currentEvent = () => page.$eval("#events", (list) => {
    const cur = list.querySelector("li.current");
    if (!cur) return { number: 0, visible: true };
    const a = list.getBoundingClientRect();
    const b = cur.getBoundingClientRect();
    return { number: Number(cur.dataset.number), visible: b.top >= a.top - 1 && b.bottom <= a.bottom + 1,
      scrolled: list.scrollTop };
  });

  await page.goto(url);
  await page.waitForFunction(() => document.getElementById("server-status").textContent.startsWith("server"));
  // every control has an accessible name (a label, aria-label or text)
  out.unnamedControls = await page.$$eval("input, textarea, select, button", (els) => els
    .filter((e) => !(e.labels && e.labels.length) && !e.getAttribute("aria-label") && !e.textContent.trim())
    .map((e) => e.id || e.outerHTML.slice(0, 60)));
  out.jobCountIdle = await jobCount();

  // 1. a bad CGP: the server's words
  await page.fill("#cgp", "not a cgp");
  await page.click("#load-cgp");
  await page.waitForFunction(() => document.getElementById("error").textContent !== "");
  out.badCgpError = await page.$eval("#error", (el) => ({ text: el.textContent, code: el.dataset.code }));

  // 2. load a CGP and generate
  await loadCgp(PEG_CGP);
  out.errorAfterLoad = await text("#error");
  out.boardTiles = Number(await page.$eval("#board", (el) => el.dataset.tiles));
  out.rack = await text(".player.on-turn .rack");
  out.unseen = await text("#unseen");
  await shot("01-cgp-loaded");
  await page.click("#gen");
  await page.waitForSelector("#results[data-kind=moves] tbody tr");
  out.moves = await rows();
  await page.click("#results tbody tr:first-child");   // the move shown on the board
  out.previewSquares = await page.$$eval(".sq.preview", (els) => els.length);
  await shot("02-generated");

  // 3. a pre-endgame with small plies, watched live to the end; the header counts the job while it runs
  await openOptions("peg-options");
  out.pegDefaults = await page.$eval("#peg-options", (box) => Object.fromEntries(
    [...box.querySelectorAll("input, select, textarea")].map((e) => [e.id, e.type === "checkbox" ? e.checked : e.value])));
  await page.fill("#opt-peg-plies", process.env.MACONDO_PEG_PLIES || "1");
  await page.click("#peg");
  const seen = new Set();
  let liveShot = false;
  out.jobCountRunning = null;
  for (;;) {
    const st = await resultsState();
    if (st.state === "running") {
      seen.add(st.updates);
      if (!out.jobCountRunning) {
        const jc = await jobCount();
        if (jc.own === "1") out.jobCountRunning = jc;
      }
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
  out.pegStatus = await text("#job-status");
  out.pegGridCells = await page.$$eval("#results tbody .cell:not(.pending)", (els) => els.length);
  await page.waitForFunction(() => document.getElementById("job-count").dataset.jobs === "0");
  out.jobCountAfter = await jobCount();
  // every play reachable: "(N more plays not shown)" expands to all of them, and folds back
  out.pegMore = await text("#peg-more");
  await page.click("#peg-more");
  await page.waitForFunction((n) => document.querySelectorAll("#results tbody tr[data-move]").length === n,
    Number(out.peg.plays));
  out.pegAllRows = (await rows()).map((r) => r.move);
  out.pegMoreExpanded = await text("#peg-more");
  await page.click("#peg-more");
  out.pegRowsFolded = (await rows()).length;
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
  out.stoppedStatus = await text("#job-status");
  out.stoppedQuick = (await rows()).filter((r) => Number(r.quickDone) > 0).length;
  await shot("05-peg-stopped");

  // 5. the pre-endgame options reach the solve (4 tiles in the bag: 7920 orderings)
  if (PEG4_CGP) {
    await loadCgp(PEG4_CGP);
    await page.click("#peg-defaults");
    // 5a. only bag-emptying plays, early cut-off, 2 plies, one thread: 120 draw groups per play
    await page.fill("#opt-peg-plies", "2");
    await page.fill("#opt-peg-threads", "1");
    await page.fill("#opt-peg-max-tiles", "0");
    await page.check("#opt-peg-early-cutoff");
    out.pegOptionsSummary = await text("#peg-summary");
    await page.click("#peg");
    await ended();
    out.peg4 = { ...(await resultsState()), rows: await rows(), status: await text("#job-status"),
      leader: await text("#peg-leader") };
    // the long outcome lists: one line each, a click opens a bounded grid under the play
    const cutRow = out.peg4.rows.findIndex((r) => Number(r.draws) > 100);
    const toggle = await page.$(`#results .outc-toggle[data-move="${out.peg4.rows[cutRow].move}"]`);
    out.peg4RowHeights = await page.$$eval("#results tbody tr[data-move]", (trs) => trs.map((tr) => tr.getBoundingClientRect().height));
    await toggle.click();
    await page.waitForSelector("#results tr.detail .grid");
    out.peg4Expanded = await page.$eval("#results", (res) => {
      const grid = res.querySelector("tr.detail .grid");
      const box = grid.getBoundingClientRect();
      const table = res.querySelector("table").getBoundingClientRect();
      const move = res.querySelector("tbody tr[data-move] td.mv").getBoundingClientRect();
      return { move: grid.closest("tr").dataset.detailOf, cells: grid.querySelectorAll(".cell").length,
        width: box.width, height: box.height, scrollHeight: grid.scrollHeight, tableWidth: table.width,
        resultsWidth: res.getBoundingClientRect().width, moveColumnLeft: move.left, viewport: window.innerWidth };
    });
    out.peg4ExpandedMove = out.peg4.rows[cutRow].move;
    out.peg4ExpandedDraws = Number(out.peg4.rows[cutRow].draws);
    await shot("board-peg-options");
    await page.click("#results .outc-toggle[aria-expanded=true]");
    out.peg4Folded = await page.$$eval("#results tr.detail", (t) => t.length);

    // 5b. the default scope (plays leaving a tile too) under a 3 s time limit: stopped with the quick pass beside
    // the full-depth bounds, the leader and why, the notes under the table
    await page.click("#peg-defaults");
    await page.fill("#opt-peg-plies", "2");
    await page.fill("#opt-peg-threads", "1");
    await page.fill("#opt-peg-time", "3");
    await page.click("#peg");
    await ended();
    out.pegTimed = { ...(await resultsState()), rows: await rows(), status: await text("#job-status"),
      leader: await page.$eval("#peg-leader", (e) => ({ text: e.textContent, ...e.dataset })),
      notes: await page.$$eval("#peg-notes li", (l) => l.map((e) => e.textContent)) };
    await shot("board-peg-time-limit");

    // 5c. only one play, against a known opponent rack
    await page.click("#peg-defaults");
    await page.fill("#opt-peg-plies", "2");
    await page.fill("#opt-peg-threads", "1");
    await page.fill("#opt-peg-time", "3");
    await page.fill("#move-input", "2L P.ND");
    await page.click("#peg-only-add");
    await page.click("#peg");
    await ended();
    out.pegOnly = { ...(await resultsState()), rows: await rows(), only: await page.inputValue("#opt-peg-only") };
  }

  // 6. a move played with a tile order (the draw fixed), the last move shown, the new position's CGP copied
  await loadCgp(PEG_CGP);
  const tilesBefore = Number(await page.$eval("#board", (el) => el.dataset.tiles));
  out.tileOrderNeed = await page.$eval("#tile-order-hint", (el) => Number(el.dataset.need));
  await page.fill("#move-input", "13L ONYX");
  await page.fill("#tile-order", "S");
  await page.press("#move-input", "Enter");
  await page.waitForFunction((n) => Number(document.getElementById("board").dataset.tiles) > n, tilesBefore);
  out.played = {
    tilesAdded: Number(await page.$eval("#board", (el) => el.dataset.tiles)) - tilesBefore,
    scores: await page.$$eval(".player .score", (els) => els.map((e) => Number(e.textContent))),
    onTurn: await page.$eval(".player.on-turn", (el) => Number(el.dataset.player)),
    rack: await text(".player.on-turn .rack"),
    otherRack: await text(".player:not(.on-turn) .rack"),
    unseen: await text("#unseen"),
    lastSquares: await page.$$eval(".sq.last", (els) => els.map((e) => e.dataset.coord)),
    last: await page.$eval("#board", (el) => el.dataset.last),
    cgp: await page.$eval("#board", (el) => el.dataset.cgp),
    exportDisabled: await page.$eval("#export-gcg", (el) => el.disabled),
    events: await page.$$eval("#events li", (l) => l.map((e) => e.textContent)),
  };
  await page.click("#copy-cgp");
  await page.waitForFunction(() => document.getElementById("copy-status").dataset.copied);
  out.copied = { via: await page.$eval("#copy-status", (el) => el.dataset.copied),
    text: await page.evaluate(() => navigator.clipboard.readText()) };
  await shot("10-played-tile-order");
  // without a clipboard API (plain http from another host): the CGP in a visible, selected field
  await page.evaluate(() => Object.defineProperty(navigator, "clipboard", { value: undefined, configurable: true }));
  await page.click("#copy-cgp");
  await page.waitForFunction(() => document.getElementById("copy-status").dataset.copied === "field");
  out.copyFallback = await page.$eval("#cgp-copy", (el) => ({ value: el.value, visible: el.offsetParent !== null,
    selected: el.selectionEnd - el.selectionStart }));

  // 7. a GCG uploaded from the browser, stepped through: the event list follows the turn, the last move is marked
  await closeOptions("peg-options");
  await page.setInputFiles("#gcg-file", GCG_FILE);
  await page.waitForSelector("#turns:not([hidden])");
  await page.waitForFunction(() => document.getElementById("turn-label").dataset.turn === "0");
  out.gcgStart = await text("#turn-label");
  const tilesAt = [Number(await page.$eval("#board", (el) => el.dataset.tiles))];
  const follow = [];
  const waitTurn = (t) => page.waitForFunction((n) => document.getElementById("turn-label").dataset.turn === String(n), t);
  for (let i = 0; i < GCG_TURN; i++) {
    await page.click("#turn-next");
    await waitTurn(i + 1);
    tilesAt.push(Number(await page.$eval("#board", (el) => el.dataset.tiles)));
    follow.push({ turn: i + 1, ...(await currentEvent()) });
  }
  out.gcgTilesByTurn = tilesAt;
  out.gcgTurn = await text("#turn-label");
  out.gcgCgp = await page.$eval("#board", (el) => el.dataset.cgp);
  out.gcgScores = await page.$$eval(".player .score", (els) => els.map((e) => Number(e.textContent)));
  out.gcgLast = { move: await page.$eval("#board", (el) => el.dataset.last),
    squares: await page.$$eval(".sq.last", (els) => els.map((e) => e.dataset.coord)) };
  await shot("06-gcg-stepped");
  // the arrow keys, far enough that the list scrolls, then End, Home and a click on an event
  const numEvents = Number((await text("#turn-label")).split(" of ")[1]);
  await page.focus("#turn-next");
  for (let t = GCG_TURN + 1; t <= Math.min(numEvents, GCG_TURN + 18); t++) {
    await page.keyboard.press("ArrowRight");
    await waitTurn(t);
    follow.push({ turn: t, key: "ArrowRight", ...(await currentEvent()) });
  }
  await page.keyboard.press("End");
  await waitTurn(numEvents);
  follow.push({ turn: numEvents, key: "End", ...(await currentEvent()) });
  out.gcgEndLast = await page.$eval("#board", (el) => el.dataset.last);
  await page.keyboard.press("Home");
  await waitTurn(0);
  follow.push({ turn: 0, key: "Home", ...(await currentEvent()) });
  await page.click("#events li[data-number='20']");
  await waitTurn(20);
  follow.push({ turn: 20, key: "click", ...(await currentEvent()) });
  await page.keyboard.press("ArrowLeft");
  await waitTurn(19);
  follow.push({ turn: 19, key: "ArrowLeft", ...(await currentEvent()) });
  out.gcgFollow = follow;
  await shot("board-review");
  // the game exported as GCG (a download)
  const [download] = await Promise.all([page.waitForEvent("download"), page.click("#export-gcg")]);
  out.exported = { name: download.suggestedFilename(), text: readFileSync(await download.path(), "utf8") };
  await page.click("#turn-first");
  await waitTurn(0);
  for (let i = 0; i < GCG_TURN; i++) {
    await page.click("#turn-next");
    await waitTurn(i + 1);
  }
  await page.click("#turn-prev");
  await waitTurn(GCG_TURN - 1);
  out.gcgBack = await text("#turn-label");

  // 8. simulations of the game's position: a play count, stopped while it updates; then a time limit and a
  // stopping rule that end it by themselves
  await openOptions("sim-options");
  await page.fill("#opt-sim-plays", "5");
  await page.fill("#opt-iterations", "1000000");
  await page.fill("#opt-sim-threads", "1");
  await page.click("#sim");
  await page.waitForFunction(() => {
    const d = document.getElementById("results").dataset;
    return d.kind === "simulation" && d.state === "running" && Number(d.updates) >= 3;
  });
  const simRunning = await rows();
  await page.click("#stop");
  await page.waitForFunction(() => document.getElementById("results").dataset.state === "stopped");
  out.sim = { rowsWhileRunning: simRunning.length, rows: await rows(), status: await text("#job-status") };
  await shot("07-sim-stopped");
  await page.fill("#opt-iterations", "");
  await page.fill("#opt-sim-time", "1.5");
  await page.selectOption("#opt-sim-stop", "99");
  await page.fill("#opt-sim-plies", "1");
  await page.click("#sim");
  await ended();
  out.simTimed = { ...(await resultsState()), rows: (await rows()).length, status: await text("#job-status") };

  // 9. an endgame (one thread, so the best line is the CLI's): each move's score and the spread after it;
  // a simulation there is refused as worded
  if (process.env.MACONDO_ENDGAME_CGP) {
    await loadCgp(process.env.MACONDO_ENDGAME_CGP);
    out.turnsHiddenForCgp = await page.$eval("#turns", (el) => el.hidden && getComputedStyle(el).display === "none");
    await openOptions("eg-options");
    await page.fill("#opt-eg-plies", "3");
    await page.fill("#opt-eg-threads", "1");
    await page.click("#endgame");
    await ended();
    out.endgame = { ...(await resultsState()), lineRows: await rows(), end: await text("#eg-end"),
      lineShown: (await rows()).length };
    await shot("08-endgame");
    await page.click("#sim");
    await page.waitForFunction(() => document.getElementById("error").textContent !== "");
    out.simInEndgameError = await page.$eval("#error", (el) => ({ text: el.textContent, code: el.dataset.code }));
    // 10. the runner-up lines: the best 3 first moves and an also-solved pass, each with its value and loss
    await page.fill("#opt-eg-top", "3");
    await page.fill("#opt-eg-also", "pass");
    await page.click("#endgame");
    await ended();
    const dataRows = (sel) => page.$$eval(`${sel} tbody tr`, (trs) => trs.map((tr) => ({ ...tr.dataset })));
    out.endgameTop = { ...(await resultsState()), top: await dataRows("#eg-top"), also: await dataRows("#eg-also") };
    await shot("09-endgame-top");
  }
}, { acceptDownloads: true });
