// report_html_browser.js - load a page in a real headless Chromium and
// do what a person would, for spec/report_html_test.c and the bench.
//
//   node report_html_browser.js URL [STEP...]
//
// Chromium (Debian's `chromium`, or $VMHEAP_CHROMIUM) is driven through
// the DevTools protocol on --remote-debugging-pipe (file descriptors 3
// and 4, JSON messages ended by NUL): no library, no network port.  Once
// the page has loaded and its script has set <body data-rendered>, the
// steps run in order:
//
//   eval:EXPR         evaluate EXPR in the page; prints {"value": ...}
//   click:SELECTOR    scroll the element into view and click its middle
//                     with real mouse events; prints {"clicked": true}
//   type:SELECTOR=TEXT  click the element, then type TEXT as keyboard input
//   screenshot:PATH   a PNG of the whole page (PATH@HEIGHT: its top HEIGHT
//                     pixels)
//   overflow:         what passes the page's right edge or hides its own
//                     content sideways; prints {"value": {"scroll_width":
//                     N, "client_width": N, "offenders": [...]}}: the
//                     document's widths, and each element (tag#id.class
//                     and its figures) whose box passes the right edge of
//                     the page, or whose content is wider than its box
//                     without being cut with an ellipsis (a box that
//                     scrolls sideways or hides what passes it)
//
// The page is shown at 1400x900 CSS pixels (the window of issue 27's
// first screen), or at $VMHEAP_BROWSER_WINDOW (WIDTHxHEIGHT).
//
// Each step prints one JSON line.  Then one last line:
//   {"load_ms":N, "painted_ms":N, "viewport":[W,H], "console_errors":[...],
//    "exceptions":[...], "dialogs":[...]}
// load_ms: from Page.navigate to the load event (the page's script runs
// before it); painted_ms: to two animation frames after it.  Exit status 0,
// or 1 with a message on stderr (no Chromium, a timeout, a step failing).
"use strict";
const {spawn} = require("child_process");
const fs = require("fs");
const os = require("os");
const path = require("path");

const url = process.argv[2];
const steps = process.argv.slice(3);
const TIMEOUT_MS = Number(process.env.VMHEAP_BROWSER_TIMEOUT_MS || 120000);
const WINDOW = /^(\d+)x(\d+)$/.exec(process.env.VMHEAP_BROWSER_WINDOW || "1400x900");
if (!WINDOW) {
  process.stderr.write("report_html_browser: VMHEAP_BROWSER_WINDOW is not WIDTHxHEIGHT\n");
  process.exit(1);
}
const WIDTH = Number(WINDOW[1]), HEIGHT = Number(WINDOW[2]);
const profile = fs.mkdtempSync(path.join(os.tmpdir(), "vmheap-chromium-"));
const chrome = spawn(process.env.VMHEAP_CHROMIUM || "chromium", [
  "--headless", "--remote-debugging-pipe", "--no-sandbox", "--disable-gpu",
  "--no-first-run", "--no-default-browser-check", "--disable-extensions",
  "--disable-background-networking", "--disable-sync", "--mute-audio",
  "--user-data-dir=" + profile, "--window-size=" + WIDTH + "," + HEIGHT, "about:blank",
], {stdio: ["ignore", "ignore", "pipe", "pipe", "pipe"]});

let stderr = "";
chrome.stderr.on("data", d => { stderr += d; });
const toChrome = chrome.stdio[3], fromChrome = chrome.stdio[4];
let nextId = 1, buffered = "";
const pending = new Map(), waiters = [];
const errors = [], exceptions = [], dialogs = [];
let sessionId = null;

function fail(msg) {
  process.stderr.write("report_html_browser: " + msg + "\n");
  if (stderr) process.stderr.write("chromium said: " + stderr.slice(-2000) + "\n");
  try { chrome.kill("SIGKILL"); } catch (e) { /* gone */ }
  fs.rmSync(profile, {recursive: true, force: true});
  process.exit(1);
}
const timer = setTimeout(() => fail("timed out after " + TIMEOUT_MS + " ms"), TIMEOUT_MS);
chrome.on("error", e => fail("cannot start chromium: " + e.message));
chrome.on("exit", (code, sig) => { if (!closing) fail("chromium exited (" + (sig || code) + ")"); });
let closing = false;

fromChrome.on("data", chunk => {
  buffered += chunk.toString("utf8");
  let end;
  while ((end = buffered.indexOf("\0")) >= 0) {
    const msg = JSON.parse(buffered.slice(0, end));
    buffered = buffered.slice(end + 1);
    if (msg.id !== undefined && pending.has(msg.id)) {
      const p = pending.get(msg.id);
      pending.delete(msg.id);
      if (msg.error) p.reject(new Error(p.method + ": " + JSON.stringify(msg.error)));
      else p.resolve(msg.result);
    } else if (msg.method) {
      event(msg);
    }
  }
});

function send(method, params, session) {
  const id = nextId++;
  const msg = {id, method, params: params || {}};
  if (session) msg.sessionId = session;
  toChrome.write(JSON.stringify(msg) + "\0");
  return new Promise((resolve, reject) => pending.set(id, {resolve, reject, method}));
}
const page = (method, params) => send(method, params, sessionId);

function event(msg) {
  const p = msg.params || {};
  if (msg.method === "Runtime.consoleAPICalled" && (p.type === "error" || p.type === "assert"))
    errors.push((p.args || []).map(a => a.value !== undefined ? String(a.value) : a.description).join(" "));
  else if (msg.method === "Runtime.exceptionThrown")
    exceptions.push(p.exceptionDetails.exception ? p.exceptionDetails.exception.description : p.exceptionDetails.text);
  else if (msg.method === "Log.entryAdded" && p.entry.level === "error")
    errors.push(p.entry.source + ": " + p.entry.text);
  else if (msg.method === "Page.javascriptDialogOpening") {
    dialogs.push(p.type + ": " + p.message);
    page("Page.handleJavaScriptDialog", {accept: false}).catch(() => {});
  }
  for (let i = waiters.length - 1; i >= 0; i--)
    if (waiters[i].method === msg.method) { waiters[i].resolve(p); waiters.splice(i, 1); }
}
const waitEvent = method => new Promise(resolve => waiters.push({method, resolve}));

async function evaluate(expr) {
  const r = await page("Runtime.evaluate", {expression: expr, returnByValue: true, awaitPromise: true});
  if (r.exceptionDetails) throw new Error("evaluating " + expr + ": " + r.exceptionDetails.text +
    " " + (r.exceptionDetails.exception ? r.exceptionDetails.exception.description : ""));
  return r.result.value;
}

// The overflow step, run in the page.  An element offends when its box
// passes the right edge of the page (the document's client width), or
// when its content is wider than its box and is not cut with an ellipsis
// (overflow other than visible without text-overflow: ellipsis: a box
// that scrolls sideways, or hides what passes it).
const OVERFLOW = `(() => {
  const W = document.documentElement.clientWidth, out = [];
  const name = e => {
    const c = (e.getAttribute("class") || "").trim(), up = e.parentElement && e.parentElement.closest("[id]");
    return e.tagName.toLowerCase() + (e.id ? "#" + e.id : "") + (c ? "." + c.split(/\\s+/).join(".") : "") +
      (up ? " in #" + up.id : "");
  };
  for (const e of document.body.querySelectorAll("*")) {
    const r = e.getBoundingClientRect();
    if (!r.width && !r.height) continue;
    const st = getComputedStyle(e);
    if (r.right > W + 0.5)
      out.push(name(e) + " right " + Math.round(r.right) + " > " + W);
    else if (st.overflowX !== "visible" && e.scrollWidth > e.clientWidth + 1 &&
             st.textOverflow !== "ellipsis")
      out.push(name(e) + " content " + e.scrollWidth + " in " + e.clientWidth + " (" + st.overflowX + ")");
  }
  return {scroll_width: document.documentElement.scrollWidth, client_width: W, offenders: out.slice(0, 20),
    count: out.length};
})()`;

async function click(selector) {
  const box = await evaluate("(() => { const e = document.querySelector(" + JSON.stringify(selector) +
    "); if (!e) return null; e.scrollIntoView({block: 'center'}); const r = e.getBoundingClientRect();" +
    " return {x: r.left + r.width / 2, y: r.top + r.height / 2}; })()");
  if (!box) throw new Error("no element matches " + selector);
  for (const type of ["mouseMoved", "mousePressed", "mouseReleased"])
    await page("Input.dispatchMouseEvent", {type, x: box.x, y: box.y, button: "left", clickCount: 1});
}

async function main() {
  const {targetId} = await send("Target.createTarget", {url: "about:blank"});
  ({sessionId} = await send("Target.attachToTarget", {targetId, flatten: true}));
  await page("Page.enable");
  await page("Runtime.enable");
  await page("Log.enable");
  await page("Emulation.setDeviceMetricsOverride", {width: WIDTH, height: HEIGHT, deviceScaleFactor: 1, mobile: false});
  const loaded = waitEvent("Page.loadEventFired");
  const t0 = Date.now();
  await page("Page.navigate", {url});
  await loaded;
  const loadMs = Date.now() - t0;
  await evaluate("new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))");
  const paintedMs = Date.now() - t0;
  const rendered = await evaluate("document.body.getAttribute('data-rendered')");
  if (rendered !== "1") process.stderr.write("report_html_browser: the page did not finish rendering\n");
  for (const s of steps) {
    const colon = s.indexOf(":");
    const kind = s.slice(0, colon), arg = s.slice(colon + 1);
    if (kind === "eval") {
      console.log(JSON.stringify({value: await evaluate(arg)}));
    } else if (kind === "click") {
      await click(arg);
      console.log(JSON.stringify({clicked: true}));
    } else if (kind === "type") {
      const eq = arg.indexOf("=");
      await click(arg.slice(0, eq));
      await page("Input.insertText", {text: arg.slice(eq + 1)});
      console.log(JSON.stringify({typed: true}));
    } else if (kind === "overflow") {
      console.log(JSON.stringify({value: await evaluate(OVERFLOW)}));
    } else if (kind === "screenshot") {
      const m = await page("Page.getLayoutMetrics");
      const at = /^(.*)@(\d+)$/.exec(arg);
      const file = at ? at[1] : arg;
      const h = Math.min(at ? Number(at[2]) : Infinity,
        Math.ceil(m.cssContentSize ? m.cssContentSize.height : m.contentSize.height));
      const shot = await page("Page.captureScreenshot", {format: "png", captureBeyondViewport: true,
        clip: {x: 0, y: 0, width: WIDTH, height: Math.min(h, 6000), scale: 1}});
      fs.writeFileSync(file, Buffer.from(shot.data, "base64"));
      console.log(JSON.stringify({screenshot: file}));
    } else {
      throw new Error("unknown step " + s);
    }
  }
  const viewport = await evaluate("[window.innerWidth, window.innerHeight]");
  console.log(JSON.stringify({load_ms: loadMs, painted_ms: paintedMs, rendered: rendered === "1", viewport,
    console_errors: errors, exceptions, dialogs}));
  closing = true;
  await send("Browser.close").catch(() => {});
}

main().then(() => {
  clearTimeout(timer);
  const done = () => { fs.rmSync(profile, {recursive: true, force: true}); process.exit(0); };
  if (chrome.exitCode !== null) done();
  chrome.on("exit", done);
  setTimeout(() => { chrome.kill("SIGKILL"); }, 10000);
}, e => fail(e.message));
