#!/usr/bin/env node
// End-to-end test of the dsh web UI in headless Chromium (run by `cargo xtask e2e`).
//
// The harness starts `dsh web` against a scripted fake model and a DSH_HOME holding one
// stored dsh 0.1.1 session, then runs this script with:
//   DSH_WEB_URL             the URL dsh web printed (http://127.0.0.1:<port>/#token=<hex>)
//   DSH_E2E_ARTIFACTS       a directory for screenshots (NN-name.png)
//   DSH_E2E_STORED_SESSION  the stored session's id
//   CHROMIUM                the browser (default /usr/bin/chromium)
//   DSH_BIN                 the dsh binary steps 8 and 9 start servers of their own with (default
//                           target/debug/dsh, or $CARGO_TARGET_DIR/debug/dsh)
//
// Steps 1-4 share one new session (each builds on the previous turn count); steps 5 to 9
// are independent and run even when an earlier step failed. Step 7 writes its measurements
// to perf.json in the artifacts directory. Step 8 starts a server of its own that opens the
// "browser" (a recorder) with a one-time login code. Step 9 (file-cards.mjs) starts one over
// a stored session of file-tool calls and checks their cards. Exit 0 when every step passed.

import { chromium } from 'playwright-core';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { stepFileCards } from './file-cards.mjs';

/** Milliseconds each wait may take. */
const WAIT_MS = 15_000;
/** What the fake model streams for "count slowly". */
const ALL_TICKS = Array.from({ length: 200 }, (_, i) => `tick ${i + 1} `).join('');
/** What the fake model streams for "stream 5000 chunks" (one chunk, so one event, per word). */
const LONG_WORDS = 5000;
const ALL_WORDS = Array.from({ length: LONG_WORDS }, (_, i) => `w${i + 1} `).join('');
/** Step 7's limits: the live stream, replaying it after a reload, the longest main-thread
 * task during the replay, and a keystroke reaching the composer. Generous for 2 CI cores. */
const LONG_STREAM_MS = 60_000;
const REPLAY_MS = 5_000;
const LONG_TASK_MS = 500;
const INPUT_MS = 200;
const CHROME_ARGS = [
  '--headless=new',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

// ---------------------------------------------------------------------------------------
// Configuration and small helpers
// ---------------------------------------------------------------------------------------

/** A required environment variable, or exit with a usage message. */
function required(name) {
  const value = process.env[name];
  if (!value) {
    console.error(`web.mjs: ${name} is not set (cargo xtask e2e sets it)`);
    process.exit(2);
  }
  return value;
}

/** The repository's root (this file is in e2e/). */
const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

const config = {
  url: required('DSH_WEB_URL'),
  stored: required('DSH_E2E_STORED_SESSION'),
  artifacts: process.env.DSH_E2E_ARTIFACTS || path.join(tmpdir(), 'dsh-web-e2e'),
  chromium: process.env.CHROMIUM || '/usr/bin/chromium',
  dsh: process.env.DSH_BIN || path.join(process.env.CARGO_TARGET_DIR || path.join(REPO, 'target'), 'debug', 'dsh'),
};
mkdirSync(config.artifacts, { recursive: true });

let shotNumber = 0;

/** Saves a full-page screenshot as NN-name.png in the artifacts directory. */
async function screenshot(page, name) {
  shotNumber += 1;
  const file = path.join(config.artifacts, `${String(shotNumber).padStart(2, '0')}-${name}.png`);
  await page.screenshot({ path: file, fullPage: false });
  console.log(`    screenshot ${file}`);
  return file;
}

/** Polls `probe` until it returns a truthy value; fails naming `what` and the last value seen. */
async function until(what, probe, timeout = WAIT_MS) {
  const deadline = Date.now() + timeout;
  let last;
  for (;;) {
    try {
      last = await probe();
      if (last) return last;
    } catch (error) {
      last = `error: ${error.message.split('\n')[0]}`;
    }
    if (Date.now() > deadline) {
      const seen = typeof last === 'string' ? last : JSON.stringify(last);
      throw new Error(`timed out after ${timeout / 1000} s waiting for ${what} (last seen: ${seen})`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** A locator for a data-testid. */
function byTestId(scope, id) {
  return scope.locator(`[data-testid="${id}"]`);
}

/** The transcript's turn-end markers: count and the last one's turn, reason and text. */
function turnEnds(page) {
  return page.evaluate(() => {
    const ends = [...document.querySelectorAll('[data-testid="transcript"] [data-testid="turn-end"]')];
    const last = ends[ends.length - 1];
    return {
      count: ends.length,
      turn: last?.dataset.turn ?? null,
      reason: last?.dataset.reason ?? null,
      seq: last ? Number(last.dataset.seq) : null,
      text: last?.textContent ?? null,
    };
  });
}

/** Waits until there are `count` turn ends and the last has `reason`; returns it. */
async function waitTurnEnd(page, count, reason, timeout = WAIT_MS) {
  return until(`turn end #${count} with reason "${reason}"`, async () => {
    const ends = await turnEnds(page);
    if (ends.count > count) throw new Error(`more turn ends than expected: ${JSON.stringify(ends)}`);
    return ends.count === count && ends.reason === reason ? ends : false;
  }, timeout);
}

/** The turn number of the newest user message with exactly this text. */
async function turnOfUserMessage(page, text) {
  return until(`the user message "${text}" in the transcript`, () =>
    page.evaluate((wanted) => {
      const bubbles = [...document.querySelectorAll('[data-testid="user-message"]')];
      const match = bubbles.reverse().find((el) => el.textContent.trim() === wanted);
      return match?.dataset.turn ?? false;
    }, text),
  );
}

/** All assistant text of one turn, in order. */
function turnText(page, turn) {
  return page.evaluate((wanted) => {
    const items = document.querySelectorAll(`[data-testid="transcript"] [data-turn="${wanted}"] [data-testid="assistant-text"]`);
    return [...items].map((el) => el.textContent).join('');
  }, String(turn));
}

/** Types into the composer and sends it: by the Send button or the Enter key. */
async function send(page, text, how = 'button') {
  const input = byTestId(page, 'composer-input');
  await until('an enabled composer', () => input.isEnabled());
  await input.fill(text);
  if (how === 'enter') await input.press('Enter');
  else await byTestId(page, 'composer-send').click();
  await until(`the composer to clear after sending "${text}"`, async () => (await input.inputValue()) === '');
}

/** The tool card whose command is exactly `command` (in turn `turn` when given). */
function cardWithCommand(page, command, turn) {
  const cards = turn === undefined
    ? byTestId(page, 'tool-card')
    : page.locator(`[data-testid="transcript"] [data-turn="${turn}"] [data-testid="tool-card"]`);
  return cards.filter({
    has: page.locator('[data-testid="tool-command"]', { hasText: new RegExp(`^${escapeRegExp(command)}$`) }),
  });
}

/** A string as a literal regular expression. */
function escapeRegExp(text) {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** Text content of the first match of a locator ('' when absent). */
async function textOf(locator) {
  return (await locator.count()) ? ((await locator.first().textContent()) ?? '') : '';
}

/** Waits for a card's output to contain `output` and its exit label to be exactly `exit`. */
async function expectToolResult(card, output, exit) {
  let seen = '';
  await until(`tool output containing "${output}"`, async () => {
    seen = await textOf(byTestId(card, 'tool-output'));
    return seen.includes(output);
  }).catch((error) => {
    throw new Error(`${error.message}; the card's output was ${JSON.stringify(seen)}`);
  });
  await until(`tool exit "${exit}"`, async () => {
    seen = (await textOf(byTestId(card, 'tool-exit'))).trim();
    return seen === exit;
  }).catch((error) => {
    throw new Error(`${error.message}; the card's exit label was ${JSON.stringify(seen)}`);
  });
}

/** The session id in the page's hash. */
function hashSession(page) {
  return page.evaluate(() => /^#session=(.+)$/.exec(location.hash)?.[1] ?? null);
}

/** The applied-seq log the page keeps for tests. */
function applied(page) {
  return page.evaluate(() => window.__dsh?.applied ?? null);
}

/** Asserts the applied seqs are exactly 0, 1, 2, … (contiguous, increasing, no doubles). */
function assertContiguous(seqs, what) {
  assert.ok(Array.isArray(seqs) && seqs.length > 0, `${what}: window.__dsh.applied is empty`);
  for (let i = 1; i < seqs.length; i++) {
    assert.ok(seqs[i] > seqs[i - 1], `${what}: applied seqs not strictly increasing at index ${i}: ${seqs[i - 1]} then ${seqs[i]}`);
  }
  const gaps = [];
  for (let i = 0; i < seqs.length && gaps.length < 5; i++) if (seqs[i] !== i) gaps.push(`index ${i} holds ${seqs[i]}`);
  assert.deepEqual(gaps, [], `${what}: applied seqs are not every seq from 0 to ${seqs[seqs.length - 1]}`);
}

/** Watches a page for uncaught errors and CSP violations (collected into `problems`). */
function watch(page, label, problems) {
  page.on('pageerror', (error) => problems.push(`${label}: uncaught ${error.message}`));
  page.on('console', (message) => {
    const text = message.text();
    if (/Content Security Policy/i.test(text)) problems.push(`${label}: CSP violation: ${text}`);
    if (message.type() === 'error' && process.env.DSH_E2E_VERBOSE) console.log(`    [${label} console] ${text}`);
  });
}

// ---------------------------------------------------------------------------------------
// The steps
// ---------------------------------------------------------------------------------------

/** Shared between steps 1-4. */
const shared = { sessionId: null, turnEnds: 0 };

/** Fails when the page's address still holds a token (`when` names the moment). */
function assertNoTokenInUrl(page, when) {
  assert.ok(!page.url().includes('token='), `${when}, the token should have left the address bar, got ${page.url()}`);
}

/** 1: the token URL signs in (and a reload keeps it); a new session runs one bash command. */
async function stepBashTurn(page) {
  await page.goto(config.url);
  const storedItem = page.locator(`[data-testid="session-item"][data-session-id="${config.stored}"]`);
  await until('the stored session in the session list', () => storedItem.count());
  assertNoTokenInUrl(page, 'after opening the printed URL');
  assert.equal(new URL(page.url()).pathname, '/', `expected the page at /, got ${page.url()}`);
  assert.ok(await byTestId(page, 'banner').isHidden(), 'the token banner should be hidden after signing in');
  // A reload has no token in its URL: the page signs in with the one it stored. The hash is
  // malformed (`%` does not decode): the page must start anyway, with no session open.
  await page.goto(`${new URL(config.url).origin}/#session=%`);
  await page.reload();
  await until('the stored session in the session list after a reload', () => storedItem.count());
  assertNoTokenInUrl(page, 'after a reload');
  assert.ok(await byTestId(page, 'banner').isHidden(), 'the token banner should stay hidden after a reload');
  assert.equal((await textOf(byTestId(page, 'session-title'))).trim(), 'No session open', 'a malformed hash opens no session');
  // Back to a page without a hash, so the next hash seen is the new session's.
  await page.goto(`${new URL(config.url).origin}/`);
  await until('the stored session in the session list at /', () => storedItem.count());

  await byTestId(page, 'new-session').click();
  shared.sessionId = await until('#session=<id> in the address bar', () => hashSession(page));
  await until('the new session in the list', () =>
    page.locator(`[data-testid="session-item"][data-session-id="${shared.sessionId}"]`).count(),
  );
  await until('connection "connected"', async () => (await textOf(byTestId(page, 'connection'))) === 'connected');
  await screenshot(page, 'new-session');

  await send(page, 'please run one bash command');
  shared.bashTurn = await turnOfUserMessage(page, 'please run one bash command');
  const card = cardWithCommand(page, 'echo e2e-ok', shared.bashTurn);
  await until('a tool card for `echo e2e-ok`', () => card.count());
  await expectToolResult(card, 'e2e-ok', 'exit 0');
  assert.equal((await textOf(byTestId(card, 'tool-name'))).trim(), 'bash');
  const ends = await waitTurnEnd(page, 1, 'completed');
  shared.turnEnds = 1;
  assert.equal(String(ends.turn), String(shared.bashTurn), 'the turn end belongs to the bash turn');
  const text = await turnText(page, ends.turn);
  assert.equal(text.trim(), 'The command printed e2e-ok.', 'assistant text of the bash turn');
  const reasoning = await textOf(byTestId(page, 'reasoning'));
  assert.ok(reasoning.includes('I will run the command.'), `reasoning should be shown, got ${JSON.stringify(reasoning)}`);
  assert.equal(await byTestId(page, 'reasoning').first().evaluate((el) => el.open), false, 'finished reasoning is collapsed');
  const usage = await textOf(byTestId(page, 'usage'));
  const numbers = /in ([\d,]+) · out ([\d,]+) · cached ([\d,]+)/.exec(usage);
  assert.ok(numbers, `usage should read "in N · out N · cached N", got ${JSON.stringify(usage)}`);
  assert.ok(Number(numbers[1].replace(/,/g, '')) > 0 && Number(numbers[2].replace(/,/g, '')) > 0, `usage should be non-zero, got ${usage}`);
  assert.ok(await byTestId(page, 'composer-stop').isDisabled(), 'Stop is disabled once the turn ended');
  await screenshot(page, 'bash-turn');
}

/** 2: Stop ends a streaming turn as aborted before it finishes. */
async function stepStop(page) {
  await send(page, 'count slowly', 'enter');
  const turn = await turnOfUserMessage(page, 'count slowly');
  await until('Stop to be enabled while the turn runs', () => byTestId(page, 'composer-stop').isEnabled());
  await until('a few ticks streamed', async () => (await turnText(page, turn)).includes('tick 3 '));
  await byTestId(page, 'composer-stop').click();
  const ends = await waitTurnEnd(page, shared.turnEnds + 1, 'aborted');
  shared.turnEnds += 1;
  assert.equal(ends.text.trim(), 'Stopped by you', 'turn end text of a user stop');
  const text = await turnText(page, turn);
  assert.ok(!text.includes('tick 200 '), `the stopped turn should not reach tick 200 (got ${text.length} characters)`);
  assert.ok(await byTestId(page, 'composer-stop').isDisabled(), 'Stop is disabled once the turn ended');
  await screenshot(page, 'stopped');
}

/** 3: a reload mid-stream replays the session and follows the turn to its end, exactly once. */
async function stepReload(page) {
  const before = (await page.locator('[data-testid="user-message"]', { hasText: 'count slowly' }).count());
  await send(page, 'count slowly');
  await until('the second "count slowly" message', async () =>
    (await page.locator('[data-testid="user-message"]', { hasText: 'count slowly' }).count()) > before,
  );
  const turn = await turnOfUserMessage(page, 'count slowly');
  await until('a few ticks streamed before the reload', async () => (await turnText(page, turn)).includes('tick 5 '));
  await page.reload();
  assert.equal(await hashSession(page), shared.sessionId, 'the reload reopens the same session');
  await until('connection "connected" after the reload', async () => (await textOf(byTestId(page, 'connection'))) === 'connected');
  const ends = await waitTurnEnd(page, shared.turnEnds + 1, 'completed');
  shared.turnEnds += 1;
  assert.equal(String(ends.turn), String(turn), 'the completed turn is the one that was streaming');
  const text = await turnText(page, turn);
  if (text !== ALL_TICKS) {
    const ticks = text.match(/tick \d+/g) ?? [];
    assert.fail(`the reloaded turn's text should be tick 1 … tick 200 once each; got ${ticks.length} ticks, starting ${JSON.stringify(text.slice(0, 60))}, ending ${JSON.stringify(text.slice(-60))}`);
  }
  const seqs = await applied(page);
  assertContiguous(seqs, 'after the reload');
  assert.ok(seqs.includes(ends.seq), `the turn end (seq ${ends.seq}) is among the applied seqs`);
  await screenshot(page, 'reloaded');
}

/** 4: an approval question is answered from the page and the command runs. */
async function stepApproval(page) {
  await send(page, 'this needs approval');
  const turn = await turnOfUserMessage(page, 'this needs approval');
  const prompt = byTestId(page, 'approval').last();
  await prompt.waitFor({ state: 'visible', timeout: WAIT_MS });
  const card = cardWithCommand(page, 'echo approved-run', turn);
  await until(`the approval prompt inside the card of \`echo approved-run\` in turn ${turn}`, () => byTestId(card, 'approval').count());
  assert.equal(await byTestId(page, 'approval').count(), 1, 'exactly one approval prompt');
  await until('the transcript to follow the new prompt into view', () =>
    prompt.evaluate((el) => {
      const box = el.getBoundingClientRect();
      const view = document.querySelector('[data-testid="transcript"]').getBoundingClientRect();
      return box.bottom > view.top && box.top < view.bottom;
    }),
  );
  assert.ok(await byTestId(prompt, 'approval-allow').isEnabled(), 'Allow once is enabled');
  await until('the session status to show the question', async () => (await textOf(byTestId(page, 'session-status'))).includes('approval'));
  await screenshot(page, 'approval');
  await byTestId(prompt, 'approval-allow').click();
  await until('the outcome "Allowed once"', async () => (await textOf(byTestId(card, 'approval-outcome'))).trim() === 'Allowed once');
  assert.equal(await byTestId(card, 'approval-allow').count(), 0, 'the buttons are gone once decided');
  await expectToolResult(card, 'approved-run', 'exit 0');
  const ends = await waitTurnEnd(page, shared.turnEnds + 1, 'completed');
  shared.turnEnds += 1;
  assert.equal(String(ends.turn), String(turn), 'the turn end belongs to the approval turn');
  await until('the text "Approved and done."', async () => (await turnText(page, ends.turn)).trim() === 'Approved and done.');
  // Call ids may repeat across turns: the first turn's card must be untouched.
  await expectToolResult(cardWithCommand(page, 'echo e2e-ok', shared.bashTurn), 'e2e-ok', 'exit 0');
  await screenshot(page, 'approved');
}

/** 5: a stored dsh 0.1.1 session is resumed, shows its transcript and takes a message. */
async function stepResume(page) {
  if (!page.url().startsWith(new URL(config.url).origin)) await page.goto(config.url);
  const item = page.locator(`[data-testid="session-item"][data-session-id="${config.stored}"]`);
  await until('the stored session in the list', () => item.count());
  assert.equal((await textOf(byTestId(item, 'session-item-status'))).trim(), 'stored', 'the list marks it stored');
  await item.locator('button').first().click();
  await until('#session=<stored id>', async () => (await hashSession(page)) === config.stored);
  const resume = byTestId(page, 'resume');
  await resume.waitFor({ state: 'visible', timeout: WAIT_MS });
  assert.equal((await textOf(byTestId(page, 'session-status'))).trim(), 'stored', 'the header says stored');
  assert.ok(await byTestId(page, 'composer-input').isDisabled(), 'the composer waits for Resume');
  await screenshot(page, 'stored-session');

  await resume.click();
  await until('the 0.1.1 user message', async () =>
    (await page.locator('[data-testid="user-message"]', { hasText: 'Run a shell command that greets me' }).count()) > 0,
  );
  const card = cardWithCommand(page, 'echo hello-from-dsh && uname -s');
  await until('the 0.1.1 tool card', () => card.count());
  await expectToolResult(card, 'hello-from-dsh', 'exit 0');
  await until('the 0.1.1 answer', async () =>
    (await page.locator('[data-testid="assistant-text"]', { hasText: 'Done. The last command printed' }).count()) > 0,
  );
  const ends = await waitTurnEnd(page, 1, 'completed');
  assert.ok(await resume.isHidden(), 'Resume is gone once live');
  await until('connection "connected"', async () => (await textOf(byTestId(page, 'connection'))) === 'connected');
  await send(page, 'say ok');
  const next = await waitTurnEnd(page, ends.count + 1, 'completed');
  await until('the reply "OK."', async () => (await turnText(page, next.turn)).trim() === 'OK.');
  assertContiguous(await applied(page), 'the resumed session');
  await screenshot(page, 'resumed');

  // The same page on a phone-sized window: the sidebar folds into a drawer.
  await page.setViewportSize({ width: 600, height: 800 });
  assert.ok(await byTestId(page, 'composer-input').isVisible(), 'the composer stays on a narrow window');
  await until('the sidebar to fold away on a narrow window', async () =>
    (await page.locator('#sidebar').evaluate((el) => el.getBoundingClientRect().right)) <= 1,
  );
  await screenshot(page, 'narrow');
  await page.setViewportSize({ width: 1280, height: 800 });
}

/**
 * Opens `url` in a fresh browser context (no stored token) and waits for the banner pointing
 * to the URL dsh web printed; returns the banner's text.
 */
async function bannerFor(browser, problems, url, name) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  try {
    const page = await context.newPage();
    watch(page, `${name} page`, problems);
    await page.goto(url);
    const banner = byTestId(page, 'banner');
    await banner.waitFor({ state: 'visible', timeout: WAIT_MS });
    const text = await textOf(banner);
    assert.ok(text.includes('dsh web'), `${name}: the banner should point to the URL dsh web printed, got ${JSON.stringify(text)}`);
    assert.ok(/new token/i.test(text), `${name}: the banner should say each launch has a new token, got ${JSON.stringify(text)}`);
    assertNoTokenInUrl(page, name);
    assert.ok(!page.url().includes('login='), `${name}: a login code should have left the address bar, got ${page.url()}`);
    assert.equal(await page.locator('[data-testid="session-item"]').count(), 0, `${name}: no session should be listed`);
    await screenshot(page, name);
    return text;
  } finally {
    await context.close();
  }
}

/** 6: a page opened without the token, or with a wrong one, shows the banner. */
async function stepNoToken(browser, problems) {
  const printed = new URL(config.url);
  const token = new URLSearchParams(printed.hash.slice(1)).get('token');
  assert.match(token ?? '', /^[0-9a-f]{64}$/, `the printed URL should end in #token=<64 hex>, got ${config.url}`);
  await bannerFor(browser, problems, `${printed.origin}/`, 'no-token');
  let wrong;
  do wrong = randomBytes(32).toString('hex');
  while (wrong === token);
  const text = await bannerFor(browser, problems, `${printed.origin}/#token=${wrong}`, 'wrong-token');
  assert.ok(text.includes('wrong token'), `the banner should give the server's reason, got ${JSON.stringify(text)}`);
}

/** The files named `dsh-web-*.html` (the old launch pages) in the temp and runtime dirs. */
function launchPages() {
  const dirs = [tmpdir(), process.env.XDG_RUNTIME_DIR].filter((dir) => dir && existsSync(dir));
  return dirs.flatMap((dir) => readdirSync(dir).filter((name) => /^dsh-web-.*\.html$/.test(name)).map((name) => path.join(dir, name)));
}

/**
 * Starts `dsh web --port 0` with the opener enabled and `$BROWSER` a recorder script;
 * resolves to the printed URL, what the opener was handed, and a stop function.
 */
async function startOpeningServer(dir) {
  assert.ok(existsSync(config.dsh), `no dsh binary at ${config.dsh} (cargo xtask e2e builds it; or set DSH_BIN)`);
  const opened = path.join(dir, 'opened');
  const recorder = path.join(dir, 'browser.sh');
  writeFileSync(recorder, `#!/bin/sh\nprintf '%s\\n' "$1" >> '${opened}'\n`);
  chmodSync(recorder, 0o755);
  const home = path.join(dir, 'home');
  const workspace = path.join(dir, 'workspace');
  mkdirSync(workspace, { recursive: true });
  const env = { ...process.env, DSH_HOME: home, BROWSER: recorder, DEEPSEEK_API_KEY: 'sk-e2e-login', DEEPSEEK_BASE_URL: 'http://127.0.0.1:9' };
  delete env.SSH_CONNECTION;
  delete env.SSH_TTY;
  const child = spawn(config.dsh, ['web', '--port', '0'], { cwd: workspace, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => { stdout += chunk; });
  child.stderr.on('data', (chunk) => { stderr += chunk; });
  const stop = () => new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once('exit', resolve);
    child.kill('SIGTERM');
  });
  try {
    const printed = await until('the second server to print its URL', () => {
      if (child.exitCode !== null) throw new Error(`dsh web exited (${child.exitCode}): ${stderr.trim()}`);
      return /^dsh web: (http:\/\/127\.0\.0\.1:\d+\/#token=[0-9a-f]{64})$/m.exec(stdout)?.[1] ?? false;
    }, 60_000);
    const handed = await until('the opener to be run', () => (existsSync(opened) ? readFileSync(opened, 'utf8').trim() : false));
    return { printed, handed, stop, stdout: () => stdout };
  } catch (error) {
    await stop();
    throw error;
  }
}

/**
 * 8: the browser dsh web opens gets a one-time login code, not the token; opening
 * `/#login=<code>` signs in, and the same code a second time does not.
 */
async function stepLoginCode(browser, problems) {
  const dir = mkdtempSync(path.join(tmpdir(), 'dsh-e2e-login-'));
  const pagesBefore = new Set(launchPages());
  const server = await startOpeningServer(dir);
  try {
    const printed = new URL(server.printed);
    const token = new URLSearchParams(printed.hash.slice(1)).get('token');
    assert.match(server.handed, new RegExp(`^${escapeRegExp(printed.origin)}/#login=[0-9a-f]{64}$`), `the opener should get ${printed.origin}/#login=<64 hex>`);
    assert.ok(!server.handed.includes(token), 'the opener must not be handed the token');
    assert.ok(server.stdout().includes('dsh web: opening the default browser'), 'the server says it opens the browser');
    const written = launchPages().filter((file) => !pagesBefore.has(file));
    assert.deepEqual(written, [], 'no launch page is written for the browser');

    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    try {
      const page = await context.newPage();
      watch(page, 'login page', problems);
      await page.goto(server.handed);
      await until('the empty session list of the new server', async () => !(await byTestId(page, 'banner').isVisible())
        && (await page.locator('#session-list-empty').isVisible()));
      assert.ok(!page.url().includes('login='), `the code should have left the address bar, got ${page.url()}`);
      assertNoTokenInUrl(page, 'after signing in with a login code');
      const stored = await page.evaluate(() => localStorage.getItem('dsh-web-token'));
      assert.equal(stored, token, 'the page keeps the token the code was traded for');
      await screenshot(page, 'login-code');
      // A reload needs no code: the page signs in with the token it stored.
      await page.reload();
      await until('the session list after a reload', () => page.locator('#session-list-empty').isVisible());
      assert.ok(await byTestId(page, 'banner').isHidden(), 'still signed in after a reload');
    } finally {
      await context.close();
    }

    const text = await bannerFor(browser, problems, server.handed, 'login-code-reused');
    assert.ok(text.includes('login code refused'), `a second use of the code should be refused, got ${JSON.stringify(text)}`);
  } finally {
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Runs in the page before its own scripts (addInitScript): installs the test hook the page
 * fills only when it exists, `window.__dsh.applied` (every event seq applied, in order, since
 * the open session was selected).
 */
function installTestHook() {
  window.__dsh = { applied: [] };
}

/**
 * Runs in the page before its own scripts (addInitScript): records long main-thread tasks
 * in `window.__longTasks`, and in `window.__firstEventAt` the frame by which the page had
 * applied its first event.
 */
function instrumentPage() {
  const firstEvent = () => {
    if ((window.__dsh?.applied?.length ?? 0) > 0) window.__firstEventAt = performance.now();
    else requestAnimationFrame(firstEvent);
  };
  requestAnimationFrame(firstEvent);
  window.__longTasks = [];
  window.__longTasksSupported = Boolean(PerformanceObserver.supportedEntryTypes?.includes('longtask'));
  if (!window.__longTasksSupported) return;
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) window.__longTasks.push({ atMs: Math.round(entry.startTime), ms: Math.round(entry.duration) });
  }).observe({ type: 'longtask' });
}

/**
 * The long tasks recorded since the page (re)loaded: how many, the longest, their sum, and
 * the first few (start and length, in ms of the page's clock).
 */
function longTasks(page) {
  return page.evaluate(() => {
    const tasks = window.__longTasks ?? [];
    return {
      count: tasks.length,
      longestMs: Math.max(0, ...tasks.map((task) => task.ms)),
      totalMs: tasks.reduce((sum, task) => sum + task.ms, 0),
      first: tasks.slice(0, 10),
    };
  });
}

/**
 * Waits (polling every frame in the page) for a `completed` turn end inside the transcript's
 * viewport; returns the page's clock then (ms since the document's navigation started).
 */
async function turnEndInView(page, timeout) {
  const handle = await page.waitForFunction(() => {
    const end = document.querySelector('[data-testid="transcript"] [data-testid="turn-end"][data-reason="completed"]');
    if (!end) return false;
    const box = end.getBoundingClientRect();
    const view = document.querySelector('[data-testid="transcript"]').getBoundingClientRect();
    return box.height > 0 && box.bottom > view.top && box.top < view.bottom ? performance.now() : false;
  }, null, { polling: 'raf', timeout });
  return handle.jsonValue();
}

/**
 * Presses `key` in the focused composer and measures how long it takes to show: in the
 * page, from the keydown's timestamp to the frame after the input event; from here, from
 * the press to reading the new value back.
 */
async function keystrokeLatency(page, key) {
  await page.evaluate(() => {
    const input = document.querySelector('[data-testid="composer-input"]');
    input.focus();
    window.__keystroke = new Promise((resolve) => {
      let down = null;
      setTimeout(() => resolve({ value: input.value, ms: null }), 5000);
      input.addEventListener('keydown', (event) => { down = event.timeStamp; }, { once: true });
      input.addEventListener('input', () => requestAnimationFrame(() => resolve({
        value: input.value,
        ms: down === null ? null : performance.now() - down,
      })), { once: true });
    });
  });
  const started = performance.now();
  await page.keyboard.press(key);
  const shown = await page.evaluate(() => window.__keystroke);
  const roundTripMs = performance.now() - started;
  return { ...shown, roundTripMs };
}

/** Explains how a turn's text differs from w1 … w5000 (each once, in order). */
function describeWords(text) {
  const words = text.trim().split(/\s+/);
  const wrong = words.findIndex((word, i) => word !== `w${i + 1}`);
  const where = wrong < 0 ? 'none out of place' : `the first out of place at index ${wrong} (${JSON.stringify(words.slice(Math.max(0, wrong - 2), wrong + 3))})`;
  return `${words.length} words, ${where}; ends ${JSON.stringify(text.slice(-40))}`;
}

/** Rounds a measurement to a tenth of a millisecond. */
function ms(value) {
  return Math.round(value * 10) / 10;
}

/**
 * 7: a session of 5,000+ events streams in, then replays after a reload, with no long main-
 * thread task either time, and the composer takes keystrokes at once. Figures go to
 * perf.json (times in ms; long tasks from the page's load on).
 */
async function stepLongSession(page) {
  const perf = {};
  await page.goto(config.url);
  assert.ok(await page.evaluate(() => window.__longTasksSupported), 'this Chromium reports no longtask entries');
  await byTestId(page, 'new-session').click();
  const sessionId = await until('#session=<id> in the address bar', () => hashSession(page));
  await until('connection "connected"', async () => (await textOf(byTestId(page, 'connection'))) === 'connected');

  // The live stream: 5,000 chunks as fast as the fake model's socket takes them.
  const streamStarted = performance.now();
  await send(page, 'please stream 5000 chunks');
  const turn = await turnOfUserMessage(page, 'please stream 5000 chunks');
  const ends = await waitTurnEnd(page, 1, 'completed', LONG_STREAM_MS);
  perf.liveStreamMs = Math.round(performance.now() - streamStarted);
  assert.equal(String(ends.turn), String(turn), 'the turn end belongs to the streaming turn');
  const liveText = await turnText(page, turn);
  if (liveText !== ALL_WORDS) assert.fail(`the streamed text should be w1 … w${LONG_WORDS} once each, in order; got ${describeWords(liveText)}`);
  const liveSeqs = await applied(page);
  assertContiguous(liveSeqs, 'the long session, live');
  assert.ok(liveSeqs.length > LONG_WORDS, `the session should hold more than ${LONG_WORDS} events, got ${liveSeqs.length}`);
  perf.events = liveSeqs.length;
  perf.liveLongTasks = await longTasks(page);

  // The reload: the page reopens the session from its hash and replays the whole backlog.
  const reloadStarted = performance.now();
  await page.reload();
  assert.equal(await hashSession(page), sessionId, 'the reload reopens the same session');
  const shownAt = await turnEndInView(page, REPLAY_MS + 5_000);
  perf.replayReloadToTurnEndMs = Math.round(performance.now() - reloadStarted);
  perf.replayNavigationToTurnEndMs = Math.round(shownAt);
  const firstEventAt = await page.evaluate(() => window.__firstEventAt ?? null);
  perf.replayFirstEventToTurnEndMs = firstEventAt === null ? null : Math.round(shownAt - firstEventAt);
  await page.waitForTimeout(500); // long-task entries are reported asynchronously
  perf.replayLongTasks = await longTasks(page);
  const replayed = await turnEnds(page);
  assert.equal(replayed.count, 1, 'one turn end after the replay');
  const replayedText = await turnText(page, turn);
  if (replayedText !== ALL_WORDS) assert.fail(`the replayed text should be w1 … w${LONG_WORDS} once each, in order; got ${describeWords(replayedText)}`);
  const seqs = await applied(page);
  assertContiguous(seqs, 'the long session, replayed');
  assert.equal(seqs.length, perf.events, 'the replay applies every event of the session');

  // Typing after the replay: a fill, and a single keystroke timed in the page.
  const input = byTestId(page, 'composer-input');
  await until('an enabled composer', () => input.isEnabled());
  const fillStarted = performance.now();
  await input.fill('ok');
  await until('the composer to read "ok"', async () => (await input.inputValue()) === 'ok');
  perf.inputFillMs = ms(performance.now() - fillStarted);
  const key = await keystrokeLatency(page, 'k');
  assert.equal(key.value, 'okk', 'the keystroke reached the composer');
  perf.inputKeyToFrameMs = key.ms === null ? null : ms(key.ms);
  perf.inputKeyRoundTripMs = ms(key.roundTripMs);
  await screenshot(page, 'long-session');
  await input.fill('');

  writeFileSync(path.join(config.artifacts, 'perf.json'), `${JSON.stringify(perf, null, 2)}\n`);
  console.log(`    perf.json: ${JSON.stringify(perf)}`);
  assert.ok(perf.replayReloadToTurnEndMs < REPLAY_MS, `the replayed turn end should show within ${REPLAY_MS} ms of the reload, took ${perf.replayReloadToTurnEndMs} ms`);
  assert.ok(perf.liveLongTasks.longestMs < LONG_TASK_MS, `the longest task while streaming should stay under ${LONG_TASK_MS} ms, was ${perf.liveLongTasks.longestMs} ms`);
  assert.ok(perf.replayLongTasks.longestMs < LONG_TASK_MS, `the longest task during the replay should stay under ${LONG_TASK_MS} ms, was ${perf.replayLongTasks.longestMs} ms`);
  assert.ok(perf.inputFillMs < INPUT_MS, `typing "ok" should show within ${INPUT_MS} ms, took ${perf.inputFillMs} ms`);
  assert.ok(key.ms !== null && key.ms < INPUT_MS, `a keystroke should reach the screen within ${INPUT_MS} ms, took ${perf.inputKeyToFrameMs} ms`);
}

// ---------------------------------------------------------------------------------------
// Runner
// ---------------------------------------------------------------------------------------

/** 0: the unit tests of the UI's pure modules (ui-units.test.mjs, under node --test). */
function stepUnitTests() {
  const run = spawnSync(process.execPath, ['--test', path.join(REPO, 'e2e', 'ui-units.test.mjs')], { encoding: 'utf8' });
  const summary = /^# pass (\d+)\n# fail (\d+)/m.exec(run.stdout ?? '');
  if (run.status !== 0) {
    const failures = (run.stdout ?? '').split('\n').filter((line) => /^not ok|^\s+(error|expected|actual):/.test(line));
    throw new Error(`node --test ui-units.test.mjs failed (${run.status ?? run.signal}):\n    ${failures.join('\n    ') || run.stderr}`);
  }
  console.log(`    ${summary ? `${summary[1]} unit tests passed` : 'unit tests passed'}`);
}

/** Runs the steps, prints a summary, and exits 0 only when all passed. */
async function main() {
  console.log(`web.mjs: ${config.chromium}, artifacts in ${config.artifacts}`);
  const browser = await chromium.launch({ executablePath: config.chromium, args: CHROME_ARGS, timeout: 60_000 });
  const problems = [];
  const results = [];
  try {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    context.setDefaultTimeout(WAIT_MS);
    await context.addInitScript(installTestHook);
    const page = await context.newPage();
    watch(page, 'main page', problems);

    /** Runs one step; a failure is recorded with a screenshot (of `shotPage`), and `false` returned. */
    const run = async (name, fn, shotPage = page) => {
      const started = Date.now();
      console.log(`- ${name}`);
      try {
        await fn();
        results.push({ name, ok: true });
        console.log(`  ok (${((Date.now() - started) / 1000).toFixed(1)} s)`);
        return true;
      } catch (error) {
        results.push({ name, ok: false, error });
        console.log(`  FAILED: ${error.message}`);
        await screenshot(shotPage, `failed-${name.replace(/[^a-z0-9]+/gi, '-').toLowerCase()}`).catch(() => {});
        return false;
      }
    };

    await run('0 UI unit tests', stepUnitTests);

    const chain = [
      ['1 bash turn', () => stepBashTurn(page)],
      ['2 stop', () => stepStop(page)],
      ['3 reload mid-stream', () => stepReload(page)],
      ['4 approval', () => stepApproval(page)],
    ];
    let chainOk = true;
    for (const [name, fn] of chain) {
      if (!chainOk) {
        results.push({ name, ok: false, error: new Error('skipped: an earlier step failed') });
        console.log(`- ${name}\n  skipped: an earlier step failed`);
        continue;
      }
      chainOk = await run(name, fn);
    }
    await run('5 resume stored session', () => stepResume(page));
    await run('6 no token', () => stepNoToken(browser, problems));
    await context.close();

    // Step 7 times the page: its own context, with no other page streaming beside it.
    const longContext = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    longContext.setDefaultTimeout(WAIT_MS);
    await longContext.addInitScript(installTestHook);
    await longContext.addInitScript(instrumentPage);
    const longPage = await longContext.newPage();
    watch(longPage, 'long-session page', problems);
    await run('7 long session', () => stepLongSession(longPage), longPage);
    await longContext.close();

    // Step 8 runs a server of its own, started with the browser opener on.
    await run('8 login code', () => stepLoginCode(browser, problems));
    // Step 9 runs a server of its own too, over a DSH_HOME holding a session of file tools.
    const helpers = { config, until, byTestId, screenshot, watch, WAIT_MS };
    await run('9 file-tool cards', () => stepFileCards(browser, problems, helpers));
  } finally {
    await browser.close();
  }

  if (problems.length) results.push({ name: 'page errors', ok: false, error: new Error(problems.join('\n    ')) });
  const failed = results.filter((result) => !result.ok);
  console.log('');
  for (const result of results) console.log(`${result.ok ? 'PASS' : 'FAIL'} ${result.name}${result.ok ? '' : `: ${result.error.message}`}`);
  if (failed.length) {
    console.error(`\nweb.mjs: ${failed.length} of ${results.length} checks failed (first: ${failed[0].name}); screenshots in ${config.artifacts}`);
    process.exit(1);
  }
  console.log(`\nweb.mjs: all ${results.length} steps passed; screenshots in ${config.artifacts}`);
}

main().catch((error) => {
  console.error(`web.mjs: ${error.stack || error.message}`);
  process.exit(1);
});
