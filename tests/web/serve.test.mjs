// Browser test of `camelot serve`: the page in Debian's headless Chromium, driven by
// playwright-core. It loads the board, refuses illegal clicks (client side) and an illegal typed
// move (server side), plays a legal multi-leg move by clicks, sees the engine's reply with its
// evaluation, plays Black on a flipped board, and takes a screenshot.
//
//   node serve.test.mjs [CAMELOT_BINARY] [SCREENSHOT.png]
//
// Defaults: ../../target/release/camelot and ../../target/serve/board.png (under
// $CARGO_TARGET_DIR where set). CHROMIUM overrides /usr/bin/chromium.

import { chromium } from "playwright-core";
import { spawn } from "node:child_process";
import { mkdtempSync, mkdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import assert from "node:assert/strict";

const here = dirname(fileURLToPath(import.meta.url));
const target = resolve(here, "../..", process.env.CARGO_TARGET_DIR || "target");
const binary = resolve(process.argv[2] || join(target, "release/camelot"));
const screenshot = resolve(process.argv[3] || join(target, "serve/board.png"));
const STEP_TIMEOUT = 30_000;

// Starts the server on a free port and resolves with its address line's URL.
function startServer() {
  const server = spawn(binary, ["serve", "--port", "0", "--player", "alphabeta:depth=1"], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  const url = new Promise((resolveUrl, reject) => {
    let out = "";
    server.stdout.on("data", (chunk) => {
      out += chunk;
      const found = out.match(/listening on (http:\/\/\S+)/);
      if (found) resolveUrl(found[1]);
    });
    server.on("exit", (code) => reject(new Error(`camelot serve exited (${code}) before listening: ${out}`)));
    setTimeout(() => reject(new Error("camelot serve printed no address within 30 s")), STEP_TIMEOUT);
  });
  return { server, url };
}

async function main() {
  const { server, url: urlPromise } = startServer();
  const profile = mkdtempSync(join(tmpdir(), "camelot-chromium-"));
  mkdirSync(dirname(screenshot), { recursive: true });
  let context;
  try {
    const url = await urlPromise;
    console.log(`server at ${url}`);
    context = await chromium.launchPersistentContext(profile, {
      executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
      headless: true,
      viewport: { width: 1100, height: 900 },
      args: [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
      ],
    });
    const page = context.pages()[0] || (await context.newPage());
    page.setDefaultTimeout(STEP_TIMEOUT);
    const problems = [];
    page.on("pageerror", (err) => problems.push(`page error: ${err.message}`));
    page.on("console", (msg) => {
      // The refused typed move below is a 400 by design; Chromium logs every 4xx it loads.
      const refused = msg.text().includes("status of 400");
      if (msg.type() === "error" && !refused) problems.push(`console error: ${msg.text()}`);
    });

    // Load: the Camelot board, its coordinates and both armies.
    await page.goto(url);
    await page.waitForSelector('body[data-status="human"]');
    assert.equal(await page.locator("rect[data-square]").count(), 160, "160 squares");
    assert.equal(await page.locator("circle[data-piece]").count(), 28, "28 pieces");
    assert.equal(await page.locator('circle[data-piece="white knight"]').count(), 4, "4 white knights");
    const coords = await page.locator("text.coord").allTextContents();
    for (const label of ["A", "L", "1", "16"]) assert.ok(coords.includes(label), `coordinate ${label}`);
    assert.match(await page.textContent("#status"), /Your move \(White/);
    console.log("loaded: 160 squares, 28 pieces, coordinates");

    // Illegal clicks are refused on the page, and nothing is sent.
    await page.click('[data-square="A8"]');
    assert.match(await page.textContent("#message"), /A8 is empty/);
    await page.click('[data-square="C6"]');
    assert.ok(await page.locator('[data-target="E8"]').count(), "E8 is highlighted as C6's next leg");
    await page.click('[data-square="A13"]');
    assert.equal(await page.textContent("#message"), "A13 is not a legal destination for the piece on C6.");
    assert.equal(await page.locator("#moves li").count(), 0, "no move was played");
    console.log("illegal click refused");

    // An illegal move typed in is refused by the server, with its reason.
    await page.keyboard.press("Escape");
    await page.fill("#move-text", "A4-A5");
    await page.click('#type-move button[type="submit"]');
    await page.waitForFunction(() => document.querySelector("#message").textContent.includes("A4-A5"));
    assert.equal(await page.textContent("#message"), "move `A4-A5`: no white piece on A4");
    console.log("illegal typed move refused by the server");

    // A legal canter of three legs, clicked leg by leg: F7, H5 and J7 (where it could stop), J5.
    await page.click('[data-square="F7"]');
    await page.click('[data-square="H5"]');
    assert.match(await page.textContent("#message"), /Click H5 again to stop there/);
    await page.click('[data-square="J7"]');
    assert.ok(await page.locator('[data-target="J5"]').count(), "J5 is highlighted as the next leg");
    assert.equal(await page.locator("polyline.path:not(.last)").count(), 1, "the legs so far are drawn");
    await page.screenshot({ path: screenshot.replace(/\.png$/, "-legs.png"), fullPage: true });
    await page.click('[data-square="J5"]');
    await page.waitForFunction(() => document.querySelectorAll("#moves li").length === 1);
    assert.match(await page.textContent("#moves li"), /^F7-H5-J7-J5/);
    console.log("legal move played: F7-H5-J7-J5");

    // The engine's reply: a Black move in the list, the reply with its evaluation.
    await page.waitForFunction(() => /^F7-H5-J7-J5 {2}\S+/.test(document.querySelector("#moves li").textContent));
    await page.waitForSelector('body[data-status="human"]');
    const reply = await page.textContent("#reply");
    assert.match(reply, /^alphabeta:depth=1 \(black\) played \S+; its evaluation: [+-]\d+\.\d\d for black/);
    console.log(`engine replied: ${reply}`);
    await page.screenshot({ path: screenshot, fullPage: true });
    console.log(`screenshot: ${screenshot}`);

    // Playing Black: the engine opens, the board is turned (rank 16 at the bottom).
    await page.selectOption("#side", "black");
    await page.click("#new");
    await page.waitForFunction(() => document.querySelector("#status").textContent.startsWith("Your move (Black"));
    assert.equal(await page.locator("#moves li").count(), 1, "the engine's opening move is listed");
    const y = async (name) => Number(await page.getAttribute(`[data-square="${name}"]`, "y"));
    assert.ok((await y("F16")) > (await y("F1")), "Black's castle is at the bottom");
    assert.match(await page.textContent("#reply"), /\(white\) played/);
    console.log("playing Black: the engine opened, the board is turned");

    assert.deepEqual(problems, [], "no page errors");
    console.log("browser test passed");
  } finally {
    if (context) await context.close();
    server.kill();
    rmSync(profile, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
