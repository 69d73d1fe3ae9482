// Drives the board in headless Chromium through other languages and the 21x21 board: a Catalan position with
// L·L, NY and QU tiles (each label inside its square), its moves; a Catalan move played with a tile order holding
// multi-letter tiles in brackets, and one typed without brackets as the engine reads them; a 21x21 position
// (the grid sized from it, quadruple squares coloured and labelled), its opening generated and played. Prints
// what the page showed as JSON for tests/api/test_web_languages.py. Usage: node test/languages.mjs URL OUT_DIR;
// inputs from env: MACONDO_CATALAN_CGP, MACONDO_CATALAN_BAG_CGP (L·L and NY in the bag), MACONDO_CATALAN_MOVE and
// MACONDO_CATALAN_ORDER (played there), MACONDO_CATALAN_EMPTY_CGP and MACONDO_CATALAN_TYPED (a move typed
// without brackets), MACONDO_SUPER_CGP, CHROMIUM.
import { runBoard } from "./board.mjs";

const [url, outDir] = process.argv.slice(2);
const env = process.env;

await runBoard(outDir, async ({ page, out, shot }) => {
  const text = (sel) => page.$eval(sel, (el) => el.textContent);
  const loadCgp = async (cgp) => {
    await page.fill("#cgp", cgp);
    await page.click("#load-cgp");
    await page.waitForFunction((c) => document.getElementById("board").dataset.cgp.split(" ")[0] === c.split(" ")[0]
      && document.getElementById("error").textContent === "", cgp, { timeout: 60_000 });
  };
  /** The board as drawn: its size, its squares' labels and classes, and whether every label fits its square. */
  const board = () => page.$eval("#board", (el) => {
    const squares = [...el.querySelectorAll(".sq")];
    const tiles = squares.filter((s) => s.classList.contains("tile") || s.classList.contains("preview")).map((s) => {
      const sq = s.getBoundingClientRect();
      const lbl = s.querySelector(".lbl").getBoundingClientRect();
      return { coord: s.dataset.coord, label: s.textContent, blank: s.classList.contains("blank"),
        last: s.classList.contains("last"), preview: s.classList.contains("preview"), fits: lbl.left >= sq.left - 0.5 && lbl.right <= sq.right + 0.5
          && lbl.top >= sq.top - 0.5 && lbl.bottom <= sq.bottom + 0.5, labelWidth: lbl.width, squareWidth: sq.width,
        font: parseFloat(getComputedStyle(s.querySelector(".lbl")).fontSize) };
    });
    const first = squares[0].getBoundingClientRect();
    const panel = el.closest(".panel").getBoundingClientRect();
    const box = el.getBoundingClientRect();
    const premium = (cls) => squares.filter((s) => s.classList.contains(cls)).map((s) => ({ coord: s.dataset.coord,
      label: s.textContent, colour: getComputedStyle(s).backgroundColor }));
    return { dim: Number(el.dataset.dim), layout: el.dataset.layout, squares: squares.length,
      columns: [...el.querySelectorAll(".hdr")].slice(1).map((h) => h.textContent).filter((t) => /^[A-Z]$/.test(t)),
      rows: [...el.querySelectorAll(".hdr")].map((h) => h.textContent).filter((t) => /^\d+$/.test(t)).length,
      tiles, squareSize: [first.width, first.height], inPanel: box.right <= panel.right && box.left >= panel.left,
      pageFits: document.documentElement.scrollWidth <= window.innerWidth,
      qws: premium("qws"), qls: premium("qls"), tws: premium("tws").length, dls: premium("dls").length };
  });
  const racks = () => page.$$eval(".player", (ps) => ps.map((p) => ({
    chips: [...p.querySelectorAll(".rack .rt")].map((c) => c.textContent),
    multi: [...p.querySelectorAll(".rack .rt.multi")].map((c) => c.textContent),
    known: !!p.querySelector(".known"), onTurn: p.classList.contains("on-turn") })));
  const moves = () => page.$$eval("#results tbody tr[data-move]", (trs) => trs.map((tr) => ({ ...tr.dataset })));

  await page.goto(url);
  await page.waitForFunction(() => document.getElementById("server-status").textContent.startsWith("server"));

  // 1. Catalan: the board with L·L, NY and QU, their labels inside their squares; the moves
  await loadCgp(env.MACONDO_CATALAN_CGP);
  out.catalan = { board: await board(), racks: await racks(), unseen: await text("#unseen"),
    hint: await page.$eval("#multi-hint", (el) => ({ hidden: el.hidden, text: el.textContent })),
    cgp: await page.$eval("#board", (el) => el.dataset.cgp) };
  await page.click("#gen");
  await page.waitForSelector("#results[data-kind=moves] tbody tr");
  out.catalanMoves = await moves();
  await page.click("#results tbody tr:first-child");
  out.catalanPreview = (await board()).tiles.filter((t) => t.preview).map((t) => t.label);
  await shot("board-catalan");

  // 2. a move with a tile order of multi-letter tiles, in brackets: the player draws L·L and NY (known once the
  // bag is empty)
  await loadCgp(env.MACONDO_CATALAN_BAG_CGP);
  out.bag = { need: await page.$eval("#tile-order-hint", (el) => Number(el.dataset.need)),
    unseen: await text("#unseen") };
  await page.fill("#move-input", env.MACONDO_CATALAN_MOVE);
  await page.fill("#tile-order", env.MACONDO_CATALAN_ORDER);
  await page.click("#play");
  await page.waitForFunction(() => document.getElementById("board").dataset.last !== ""
    || document.getElementById("error").textContent !== "", null, { timeout: 30_000 });
  out.bagPlayed = { error: await text("#error"), cgp: await page.$eval("#board", (el) => el.dataset.cgp),
    last: await page.$eval("#board", (el) => el.dataset.last), racks: await racks() };

  // 3. a move typed without brackets, as the engine reads Catalan (no Q, Y or · alone): QU and L·L are tiles
  await loadCgp(env.MACONDO_CATALAN_EMPTY_CGP);
  out.emptyRack = await racks();
  await page.fill("#move-input", env.MACONDO_CATALAN_TYPED);
  await page.click("#play");
  await page.waitForFunction(() => document.getElementById("board").dataset.last !== ""
    || document.getElementById("error").textContent !== "", null, { timeout: 30_000 });
  out.typed = { error: await text("#error"), last: await page.$eval("#board", (el) => el.dataset.last),
    board: await board(), lastMove: await text("#last-move") };
  await shot("catalan-typed");

  // 4. the 21x21 board: the grid from the position, quadruple squares, the opening generated and played
  await loadCgp(env.MACONDO_SUPER_CGP);
  out.superEmpty = await board();
  await page.click("#gen");
  await page.waitForSelector("#results[data-kind=moves] tbody tr");
  out.superMoves = await moves();
  await page.click("#results tbody tr:first-child");
  await page.click("#play");
  await page.waitForFunction(() => document.getElementById("board").dataset.last !== ""
    || document.getElementById("error").textContent !== "", null, { timeout: 30_000 });
  out.superPlayed = { error: await text("#error"), board: await board(),
    last: await page.$eval("#board", (el) => el.dataset.last), lastMove: await text("#last-move") };
  await page.click("#gen");
  await page.waitForSelector("#results[data-kind=moves] tbody tr");
  await page.click("#results tbody tr:first-child");        // the reply shown on the board, in green
  out.superReply = (await board()).tiles.filter((t) => t.preview).map((t) => t.label);
  await shot("board-super");
});
