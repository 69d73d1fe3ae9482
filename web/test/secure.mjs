// Drives the board in headless Chromium against servers with TLS and bearer tokens, as a user would: the board
// served over https by the server itself, no token (the 401 and what to do), a wrong token, a token in the wrong
// form, the right token (then the RPCs work), a proxy turning calls into application/grpc (415), a host name the
// server does not answer to (403), and on a server refusing an address after 3 failed tokens, the 429. Prints
// what the page showed as JSON for tests/api/test_security_web.py. Usage: node test/secure.mjs OUT_DIR; inputs
// from env: MACONDO_BOARD_URL, MACONDO_STRICT_URL (https://127.0.0.1:PORT/), MACONDO_TOKEN, MACONDO_SPKI (the
// server key's SHA-256 SPKI hash, the only certificate Chromium is told to accept), MACONDO_CGP, CHROMIUM.
import { runBoard } from "./board.mjs";

const [outDir] = process.argv.slice(2);
const env = process.env;
const BOARD = env.MACONDO_BOARD_URL;
const STRICT = env.MACONDO_STRICT_URL;
const TOKEN = env.MACONDO_TOKEN;
const REBOUND = "rebound.test";

// the test CA is trusted the way a user pins one certificate: by the hash of its key, nothing else; the name
// rebound.test resolves to 127.0.0.1 (a page rebinding its own name to the local server)
const TRUST = [`--ignore-certificate-errors-spki-list=${env.MACONDO_SPKI}`, `--host-resolver-rules=MAP ${REBOUND} 127.0.0.1`];

await runBoard(outDir, async ({ browser, page, out, shot }) => {
  const calls = [];
  page.on("request", (r) => { if (r.url().includes("/macondo.v1.Engine/")) calls.push(r.url().split("/").pop()); });
  const error = () => page.$eval("#error", (el) => ({ text: el.textContent, code: el.dataset.code || "",
    status: el.dataset.status || "", hint: el.querySelector(".error-hint")?.textContent || "" }));
  const header = () => page.$eval("#server-status", (el) => el.textContent);
  const useToken = async (token) => {
    if (!(await page.$eval("#token-box", (el) => el.open))) await page.click("#token-box > summary");
    await page.fill("#token", token);
    await page.press("#token", "Enter");
  };
  const waitError = (needle) => page.waitForFunction(
    (n) => document.getElementById("error").textContent.includes(n), needle, { timeout: 30_000 });

  // 1. the board over https, no token: it loads (its files need none), and its first call is refused (401)
  await page.clock.install();
  const resp = await page.goto(BOARD);
  out.page = { status: resp.status(), protocol: await page.evaluate(() => location.protocol),
    secure: await page.evaluate(() => window.isSecureContext) };
  await waitError("bearer token");
  out.noToken = { error: await error(), header: await header(),
    tokenBoxOpen: await page.$eval("#token-box", (el) => el.open) };
  await shot("secure-01-no-token");
  // a refused board stops asking (a board left open without its token must not use up the address's allowance)
  const before = calls.length;
  await page.clock.runFor(65_000);
  await page.waitForTimeout(300);
  out.pollsWhileRefused = calls.length - before;

  // 2. a wrong token: refused with the server's words
  await useToken("wrong-token-0123456789abcdef");
  await waitError("not one this server accepts");
  out.wrongToken = { error: await error(), header: await header(),
    state: await page.$eval("#token-state", (el) => el.textContent) };

  // 3. a token in the wrong form: refused by the board, nothing sent
  const sent = calls.length;
  await useToken(`Bearer ${TOKEN}`);
  await waitError("leave out 'Bearer '");
  out.bearerForm = { error: await error(), sent: calls.length - sent };

  // 4. the right token: the header names the server, a CGP loads and the moves come
  await useToken(TOKEN);
  await page.waitForFunction(() => document.getElementById("server-status").textContent.startsWith("server"));
  out.withToken = { header: await header(), error: (await error()).text,
    state: await page.$eval("#token-state", (el) => el.textContent),
    lexica: await page.$$eval("#lexicon option", (os) => os.length - 1) };
  await page.fill("#cgp", env.MACONDO_CGP);
  await page.click("#load-cgp");
  await page.waitForFunction(() => document.getElementById("board").dataset.tiles !== "0");
  await page.click("#gen");
  await page.waitForSelector("#results[data-kind=moves] tbody tr");
  out.moves = await page.$$eval("#results tbody tr[data-move]", (trs) => trs.length);
  await shot("secure-02-token-in-use");
  // the poll runs again once a token is in use
  const polled = page.waitForRequest((r) => r.url().endsWith("/GetServerInfo"), { timeout: 10_000 });
  await page.clock.runFor(11_000);
  out.pollsWithToken = (await polled) ? 1 : 0;

  // 5. a proxy that turns the board's calls into application/grpc over HTTP/1.1: the 415, clearly
  await page.route("**/macondo.v1.Engine/GenerateMoves", (route) =>
    route.continue({ headers: { ...route.request().headers(), "content-type": "application/grpc" } }));
  await page.click("#gen");
  await waitError("gRPC needs HTTP/2");
  out.grpcOverHttp1 = await error();
  await page.unroute("**/macondo.v1.Engine/GenerateMoves");

  // 6. the same server reached by another name (a page that rebound its name to 127.0.0.1): refused, 403
  const port = new URL(BOARD).port;
  const rebound = await browser.newPage();
  const r403 = await rebound.goto(`https://${REBOUND}:${port}/`);
  out.rebound = { status: r403.status(), body: await rebound.evaluate(() => document.body.innerText) };
  // and a call from there, token and all
  out.reboundCall = await rebound.evaluate(async (token) => {
    const r = await fetch("/macondo.v1.Engine/GetServerInfo", { method: "POST", body: "{}",
      headers: { "content-type": "application/json", authorization: `Bearer ${token}` } });
    return { status: r.status, body: await r.json() };
  }, TOKEN);
  await rebound.close();

  // 7. a server refusing an address after 3 failed tokens: no token (1), two wrong ones (2, 3), then the right
  // one is refused too, 429, with when to retry
  const strict = await browser.newPage();
  strict.on("pageerror", (e) => out.consoleErrors.push(String(e)));
  const errorOf = () => strict.$eval("#error", (el) => ({ text: el.textContent, code: el.dataset.code || "",
    status: el.dataset.status || "", hint: el.querySelector(".error-hint")?.textContent || "" }));
  const strictToken = async (token, needle) => {
    if (!(await strict.$eval("#token-box", (el) => el.open))) await strict.click("#token-box > summary");
    await strict.fill("#token", token);
    await strict.press("#token", "Enter");
    await strict.waitForFunction((n) => document.getElementById("error").textContent.includes(n), needle,
      { timeout: 30_000 });
  };
  await strict.goto(STRICT);
  await strict.waitForFunction(() => document.getElementById("error").dataset.status === "401");
  await strictToken("wrong-token-0123456789abcdef", "not one this server accepts");
  await strictToken("wrong-token-0123456789abcdeg", "not one this server accepts");
  await strictToken(TOKEN, "too many failed authentications");
  out.limited = { error: await errorOf(), header: await strict.$eval("#server-status", (el) => el.textContent) };
  await shot("secure-03-rate-limited", strict);
  await strict.close();
}, { args: TRUST });
