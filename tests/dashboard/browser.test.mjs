// The events report and the live page in a real browser: Debian's Chromium driven by
// playwright-core (pinned in the root package.json). `make test-dashboard` installs Chromium
// (apt) when it is missing and builds the CLI; MCPLENS_CLI names the binary.
//
// The events come from gen_events.py (known seeds, planted HTML/script/bidi text, bad lines);
// the figures the page must show are computed here, from the file, independently of the Rust
// code: counts, sessions, error rate, exact nearest-rank percentiles per method, per-tool rows.

import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn, execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, appendFileSync, rmSync } from "node:fs";
import { createInterface } from "node:readline";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { chromium } from "playwright-core";

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, "../..");
const out = join(root, ".build/dashboard");
const cli = process.env.MCPLENS_CLI ?? join(root, "target/debug/mcplens");
// As the machine notes say works here: no sandbox as root, and no background networking (the
// network is closed; Chromium's own connections would fail at every start).
const FLAGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

function generate(file, args) {
  execFileSync("python3", [join(here, "gen_events.py"), file, ...args]);
}

function nearestRank(sorted, q) {
  const n = sorted.length;
  return sorted[Math.min(Math.max(Math.ceil(q * n), 1), n) - 1];
}

/** The figures of an events file, computed from its lines. */
function expected(file) {
  const byType = new Map();
  const byTool = new Map();
  const reads = new Map();
  const sessions = new Set();
  let events = 0;
  let errors = 0;
  let bad = 0;
  for (const line of readFileSync(file, "utf8").split("\n")) {
    if (line.trim() === "") continue;
    let e;
    try {
      e = JSON.parse(line);
    } catch {
      bad++;
      continue;
    }
    if (typeof e !== "object" || e === null || Array.isArray(e) || typeof e.type !== "string" || typeof e.durationMs !== "number") {
      bad++;
      continue;
    }
    events++;
    if (e.type === "mcp:resources/read") reads.set(readGroup(e.resourceName), (reads.get(readGroup(e.resourceName)) ?? 0) + 1);
    if (e.isError) errors++;
    if (e.sessionId) sessions.add(e.sessionId);
    for (const [map, key] of [[byType, e.type], [byTool, e.type === "mcp:tools/call" ? e.resourceName : null]]) {
      if (key == null) continue;
      const g = map.get(key) ?? { durations: [], errors: 0 };
      g.durations.push(e.durationMs);
      if (e.isError) g.errors++;
      map.set(key, g);
    }
  }
  const figures = (map) =>
    new Map(
      [...map].map(([k, g]) => {
        const d = [...g.durations].sort((a, b) => a - b);
        return [k, { count: d.length, errors: g.errors, p50: nearestRank(d, 0.5), p95: nearestRank(d, 0.95), p99: nearestRank(d, 0.99) }];
      }),
    );
  return { events, errors, bad, sessions: sessions.size, types: figures(byType), tools: figures(byTool), reads };
}

// What a simple-string RFC 6570 expansion can produce: unreserved characters and pct-triplets.
const SIMPLE = "(?:[A-Za-z0-9._~-]|%[0-9A-Fa-f]{2})+";

/** The read group of a URI for gen_events.py's two templates, worked out here by pattern (not by
 * the core's matcher): the template it expands, else `O` + its scheme and authority. */
function readGroup(uri) {
  if (new RegExp(`^notes://${SIMPLE}/${SIMPLE}$`).test(uri)) return "Tnotes://{topic}/{id}";
  if (new RegExp(`^file:///docs/${SIMPLE}$`).test(uri)) return "Tfile:///docs/{name}";
  const m = /^([A-Za-z][A-Za-z0-9+.-]*):\/\/([^/?#]*)/.exec(uri);
  return m ? `O${m[1]}://${m[2].replace(/^.*@/, "")}` : "O(no scheme)";
}

/** A browser page that records console errors, page errors, dialogs and any request off loopback. */
async function openPage(browser) {
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  const problems = [];
  page.on("console", (m) => m.type() === "error" && problems.push(`console: ${m.text()}`));
  page.on("pageerror", (e) => problems.push(`page error: ${e.message}`));
  page.on("dialog", async (d) => {
    problems.push(`dialog: ${d.message()}`);
    await d.dismiss();
  });
  page.on("request", (r) => {
    const u = new URL(r.url());
    if (u.protocol !== "file:" && u.hostname !== "127.0.0.1") problems.push(`request off loopback: ${r.url()}`);
  });
  return { page, problems };
}

/** data-value of the overview card `metric`, and its text. */
async function metric(page, name) {
  return page.$eval(`[data-metric="${name}"]`, (el) => [el.dataset.value, el.textContent]);
}

/** The cells of the row `key` of the table in section `section`: {k: [value, text, approx]}. */
async function row(page, section, key) {
  return page.$$eval(`#${section} tr[data-key]`, (rows, key) => {
    const r = rows.find((x) => x.dataset.key === key);
    if (!r) return null;
    return Object.fromEntries([...r.querySelectorAll("td[data-k]")].map((td) => [td.dataset.k, [Number(td.dataset.value), td.textContent, td.dataset.approx === "1"]]));
  }, key);
}

function formatted(n) {
  return n.toLocaleString("en-US");
}

test("the report and the live page in Chromium", async (t) => {
  rmSync(out, { recursive: true, force: true });
  mkdirSync(out, { recursive: true });
  const browser = await chromium.launch({ executablePath: "/usr/bin/chromium", args: FLAGS, headless: true });
  t.after(() => browser.close());

  await t.test("the static report shows the computed figures and nothing planted is live", async () => {
    const events = join(out, "events.jsonl");
    generate(events, ["--events", "3000", "--seed", "7", "--planted", "--bad-lines", "4"]);
    const want = expected(events);
    const report = join(out, "report.html");
    execFileSync(cli, ["events", "report", events, "-o", report], { stdio: ["ignore", "ignore", "pipe"] });

    const { page, problems } = await openPage(browser);
    await page.goto(pathToFileURL(report).href);
    assert.deepEqual(await metric(page, "events"), [String(want.events), formatted(want.events)]);
    assert.deepEqual(await metric(page, "sessions"), [String(want.sessions), formatted(want.sessions)]);
    assert.deepEqual(await metric(page, "bad-lines"), [String(want.bad), String(want.bad)]);
    const [rate, rateText] = await metric(page, "error-rate");
    assert.ok(Math.abs(Number(rate) - want.errors / want.events) < 1e-6, `${rate}`);
    assert.equal(rateText, `${((want.errors / want.events) * 100).toFixed(1)} %`);

    for (const [type, f] of want.types) {
      const r = await row(page, "methods", type);
      assert.ok(r, `a row for ${type}`);
      for (const k of ["count", "errors", "p50", "p95", "p99"]) {
        assert.equal(r[k][0], f[k], `${type} ${k}`);
        assert.equal(r[k][2], false, `${type} ${k} is exact`);
      }
      assert.equal(r.p99[1], f.p99.toFixed(3));
    }
    for (const [tool, f] of want.tools) {
      const r = await row(page, "tools", tool);
      assert.ok(r, `a row for tool ${tool}`);
      assert.equal(r.count[0], f.count, `${tool} count`);
      assert.equal(r.errors[0], f.errors, `${tool} errors`);
      for (const k of ["p50", "p95", "p99"]) {
        const [v, , approx] = r[k];
        assert.equal(approx, f.count > 256, `${tool} ${k}: exact up to 256 events`);
        if (approx) assert.ok(Math.abs(v - f[k]) <= 0.01 * f[k], `${tool} ${k}: ${v} within 1 % of ${f[k]}`);
        else assert.equal(v, f[k], `${tool} ${k}`);
      }
    }
    // Reads grouped by the template they expand (the planted URI matches none: its origin).
    const groups = await page.$$eval("#templates tr[data-key]", (rows) => rows.map((r) => r.dataset.key));
    assert.deepEqual(new Set(groups), new Set(want.reads.keys()), `${groups}`);
    assert.ok(want.reads.get("Tnotes://{topic}/{id}") > 0 && want.reads.get("Tfile:///docs/{name}") > 0);
    for (const [key, count] of want.reads) {
      const r = await row(page, "templates", key);
      assert.equal(r.count[0], count, `reads of ${key}`);
    }
    assert.equal(await page.$eval("#templates-known", (el) => el.dataset.value), "2");

    // Every chart is drawn.
    for (const chart of ["over-time", "latency", "tools", "resources", "templates", "prompts", "errors", "clients"]) {
      const marks = await page.$$eval(`svg[data-chart="${chart}"] rect, svg[data-chart="${chart}"] text`, (els) => els.length);
      assert.ok(marks > 0, `chart ${chart} has marks`);
    }
    // Planted text is text: no script ran, no element was injected, bidi controls are gone.
    assert.equal(await page.evaluate(() => window.__pwned), undefined);
    const injected = await page.$$eval("main script, main img, main iframe, main b, main [onerror], main [onload], main [onmouseover]", (els) => els.length);
    assert.equal(injected, 0);
    const text = await page.$eval("main", (el) => el.textContent);
    assert.ok(text.includes('<script>window.__pwned="tool"</script>'), "the planted tool name is shown as text");
    assert.ok(text.includes("<svg onload=\"window.__pwned='message'\">boom</svg> evil"), "the planted message is shown as text");
    assert.ok(!/[\u202a-\u202e\u2066-\u2069\u200b]/.test(text), "no bidi or zero-width character");
    await page.screenshot({ path: join(out, "report.png"), fullPage: true });
    assert.deepEqual(problems, []);
    await page.close();
  });

  await t.test("the live page updates when events are appended", async (t) => {
    const events = join(out, "live.jsonl");
    generate(events, ["--events", "500", "--seed", "11"]);
    const server = spawn(cli, ["events", "serve", "--port", "0", events], { stdio: ["ignore", "pipe", "inherit"] });
    t.after(() => server.kill());
    const line = await new Promise((ok, fail) => {
      createInterface({ input: server.stdout }).once("line", ok);
      server.once("exit", (code) => fail(new Error(`serve exited with ${code}`)));
    });
    const url = /^serving (http:\/\/127\.0\.0\.1:\d+\/) /.exec(line)?.[1];
    assert.ok(url, line);
    const { page, problems } = await openPage(browser);
    await page.goto(url);
    await page.waitForFunction(() => document.querySelector('[data-metric="events"]')?.dataset.value === "500", null, { timeout: 60_000 });
    const more = join(out, "more.jsonl");
    generate(more, ["--events", "250", "--seed", "12", "--start", "2026-11-29T11:00:00+00:00"]);
    appendFileSync(events, readFileSync(more));
    const want = expected(events);
    await page.waitForFunction(
      (n) => document.querySelector('[data-metric="events"]')?.dataset.value === String(n),
      want.events,
      { timeout: 60_000 },
    );
    assert.deepEqual(await metric(page, "sessions"), [String(want.sessions), formatted(want.sessions)]);
    const calls = await row(page, "methods", "mcp:tools/call");
    assert.equal(calls.p95[0], want.types.get("mcp:tools/call").p95);
    assert.equal(await page.$eval("#live", (el) => el.textContent), "live");
    await page.screenshot({ path: join(out, "live.png"), fullPage: true });
    assert.deepEqual(problems, []);
    await page.close();
  });
});
