// The browser tests' one harness: Debian's Chromium (through playwright-core; no browser is downloaded) in a
// fresh profile with the flags that work on a machine without a network, a page whose console errors are
// collected, screenshots by name, and the result printed as one JSON line for the Python test that started
// the script. A script calls `runBoard(outDir, async (b) => { ... })` and fills `b.out`.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium } from "playwright-core";

const FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
  "--disable-component-update", "--disable-sync"];

/** Launch Chromium, open a page, run `body({ browser, page, out, shot, watch })`, close, print `out` as JSON.
 * Options: extra Chromium `args`, `acceptDownloads`, the `viewport`. `out.steps` lists the shots taken and
 * `out.consoleErrors` what the pages logged as errors (`watch(page)` adds another page's). */
export async function runBoard(outDir, body, options = {}) {
  const profile = mkdtempSync(join(tmpdir(), "macondo-chromium-"));
  const out = { steps: [], consoleErrors: [] };
  const browser = await chromium.launchPersistentContext(profile, {
    executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
    headless: true,
    viewport: options.viewport ?? { width: 1600, height: 1000 },
    acceptDownloads: options.acceptDownloads ?? false,
    args: [...FLAGS, ...(options.args ?? [])],
  });
  const watch = (page) => {
    page.on("console", (m) => { if (m.type() === "error") out.consoleErrors.push(m.text()); });
    page.on("pageerror", (e) => out.consoleErrors.push(String(e)));
    return page;
  };
  try {
    const page = watch(await browser.newPage());
    const shot = async (name, which = page) => {
      await which.screenshot({ path: join(outDir, `${name}.png`), fullPage: true });
      out.steps.push(name);
    };
    await body({ browser, page, out, shot, watch });
  } finally {
    await browser.close();
    rmSync(profile, { recursive: true, force: true });
  }
  console.log(JSON.stringify(out));
}
