// Step 9 of web.mjs: the file tools' cards. A `dsh web` of its own serves a DSH_HOME holding
// one stored session (written by file-cards-log.mjs) whose turn calls read, edit, grep, glob,
// str_replace_editor create and write (once failing); the page resumes it and each card must
// show what its call and result's `meta` hold: the path, range and numbered lines of the
// read, the -/+ lines of the diffs, the matches by file, the paths, and the error text.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

import { ANSWER, CALLS, PROMPT, writeFileToolSession } from './file-cards-log.mjs';

/** Starts `dsh web --no-open --port 0` for `home`, in `workspace`; resolves to its URL and a stop. */
async function startServer(h, home, workspace) {
  assert.ok(existsSync(h.config.dsh), `no dsh binary at ${h.config.dsh} (cargo xtask e2e builds it; or set DSH_BIN)`);
  const env = { ...process.env, DSH_HOME: home, DEEPSEEK_API_KEY: 'sk-e2e-cards', DEEPSEEK_BASE_URL: 'http://127.0.0.1:9' };
  const child = spawn(h.config.dsh, ['web', '--no-open', '--port', '0'], { cwd: workspace, env, stdio: ['ignore', 'pipe', 'pipe'] });
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
    const url = await h.until('the file-cards server to print its URL', () => {
      if (child.exitCode !== null) throw new Error(`dsh web exited (${child.exitCode}): ${stderr.trim()}`);
      return /^dsh web: (http:\/\/127\.0\.0\.1:\d+\/#token=[0-9a-f]{64})$/m.exec(stdout)?.[1] ?? false;
    }, 60_000);
    return { url, stop, stderr: () => stderr };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** What one card shows, read in the page: title, exit, error, and each view's rows. */
function readCard(page, callId) {
  return page.evaluate((id) => {
    const card = document.querySelector(`[data-testid="transcript"] [data-testid="tool-card"][data-call-id="${id}"]`);
    if (!card) return null;
    const text = (el) => el?.textContent ?? null;
    const all = (selector) => [...card.querySelectorAll(selector)];
    const row = (el) => ({ gutter: text(el.querySelector('.gutter')), code: text(el.querySelector('.code')) });
    return {
      card: card.dataset.card ?? null,
      failed: card.classList.contains('failed'),
      name: text(card.querySelector('[data-testid="tool-name"]')),
      title: text(card.querySelector('[data-testid="tool-title"]')),
      exit: text(card.querySelector('[data-testid="tool-exit"]'))?.trim() ?? null,
      error: text(card.querySelector('[data-testid="tool-error"]')),
      readPath: text(card.querySelector('[data-testid="read-path"]')),
      readRange: text(card.querySelector('[data-testid="read-range"]')),
      readClass: card.querySelector('[data-testid="read-lines"]')?.className ?? null,
      readLines: all('[data-testid="read-line"]').map(row),
      diffStats: text(card.querySelector('[data-testid="diff-stats"]')),
      diffLines: all('[data-testid="diff-line"]').map((el) => ({ kind: el.dataset.kind, ...row(el) })),
      diffCount: card.querySelectorAll('[data-testid="diff"]').length,
      more: text(card.querySelector('[data-testid="more-lines"]')),
      summary: text(card.querySelector('[data-testid="search-summary"]')),
      globPaths: all('[data-testid="glob-path"]').map(text),
      grepFiles: all('[data-testid="grep-file"]').map((file) => ({
        path: text(file.querySelector('[data-testid="grep-path"]')),
        matches: [...file.querySelectorAll('[data-testid="grep-match"]')].map(row),
      })),
      output: text(card.querySelector('[data-testid="tool-output"]')),
    };
  }, callId);
}

/** The diff rows as `-text`, `+text`, ` text` strings. */
function signed(lines) {
  return lines.map((line) => `${line.gutter}${line.code}`);
}

/** Checks every card of the session against what its call and result hold. */
async function checkCards(page, h) {
  const cards = {};
  for (const call of CALLS) {
    cards[call.id] = await h.until(`the card of ${call.name} (${call.id}) with its result`, async () => {
      const card = await readCard(page, call.id);
      return card && card.exit !== 'running\u2026' ? card : false;
    });
    assert.equal(cards[call.id].name, call.name, `${call.id}: the tool name`);
  }

  const read = cards.call_read;
  assert.equal(read.card, 'read', 'the read card is a read view');
  assert.equal(read.title, 'Read src/app.rs (2 - 4)', 'the read card title');
  assert.equal(read.exit, 'ok', 'the read card exit');
  assert.equal(read.readPath, 'src/app.rs', 'the read card path');
  assert.equal(read.readRange, 'lines 2\u20134 of 10', 'the read card range');
  assert.deepEqual(read.readLines, [
    { gutter: '2', code: 'fn main() {' },
    { gutter: '3', code: '    println!("hi");' },
    { gutter: '4', code: '}' },
  ], 'the read card lines and their numbers');
  assert.ok(read.readClass.split(' ').includes('lang-rs'), `the read lines carry the language class, got ${read.readClass}`);

  const edit = cards.call_edit;
  assert.equal(edit.card, 'diff', 'the edit card is a diff');
  assert.equal(edit.title, 'Edit config.txt', 'the edit card title');
  assert.deepEqual(signed(edit.diffLines), ['-mode=DEBUG', '+mode=RELEASE', ' level=info'], 'the edit diff from meta');
  assert.deepEqual(edit.diffLines.map((line) => line.kind), ['del', 'add', 'same'], 'the edit diff line kinds');
  assert.equal(edit.diffStats, '+1 -1', 'the edit diff stats');

  const grep = cards.call_grep;
  assert.equal(grep.card, 'matches', 'the grep card lists matches');
  assert.equal(grep.title, 'Grep TODO in src (*.rs)', 'the grep card title');
  assert.equal(grep.summary, '3 matches', 'the grep summary');
  assert.deepEqual(grep.grepFiles, [
    { path: 'src/a.rs', matches: [{ gutter: '3:', code: '// TODO: one' }, { gutter: '9:', code: '// TODO: two' }] },
    { path: 'src/b.rs', matches: [{ gutter: '1:', code: '// TODO: three' }] },
  ], 'the grep matches grouped by file');

  const glob = cards.call_glob;
  assert.equal(glob.card, 'paths', 'the glob card lists paths');
  assert.equal(glob.title, 'Glob **/*.rs', 'the glob card title');
  assert.deepEqual(glob.globPaths, ['src/a.rs', 'src/b.rs', 'src/app.rs'], 'the glob paths');
  assert.equal(glob.summary, '3 of 250 paths', 'the truncated glob says how many of the total');

  const create = cards.call_create;
  assert.equal(create.card, 'diff', 'the str_replace_editor create card is a diff');
  assert.equal(create.title, 'create /srv/notes.md', 'the create card title');
  assert.deepEqual(signed(create.diffLines), ['+# Notes', '+first note'], 'the create card adds the file text');
  assert.equal(create.exit, 'ok', 'the create card exit');

  const failed = cards.call_write_fail;
  assert.equal(failed.title, 'Write README.md', 'the failed write keeps its title');
  assert.equal(failed.error, CALLS.find((call) => call.id === 'call_write_fail').text, 'the failed write shows the error text');
  assert.equal(failed.exit, 'error (FS_NOT_OBSERVED)', 'the failed write exit');
  assert.ok(failed.failed, 'the failed write card is marked failed');
  assert.equal(failed.diffCount, 0, 'the failed write shows no diff');

  const big = cards.call_write_big;
  assert.equal(big.title, 'Write big.txt', 'the big write title');
  assert.equal(big.diffStats, '+2,000 -0', 'an empty meta diff list falls back to the whole content, all added');
  assert.equal(big.diffLines.length, 400, 'the big write renders 400 lines');
  assert.ok(big.diffLines.every((line) => line.kind === 'add'), 'the big write lines are all added');
  assert.deepEqual(signed(big.diffLines.slice(0, 2)), ['+line 1', '+line 2'], 'the big write starts at line 1');
  assert.equal(big.more, '\u2026 1,600 more lines', 'the big write says how many lines it left out');

  const bigEdit = cards.call_edit_big;
  assert.equal(bigEdit.diffStats, '+20 -20', 'the 2,000-line edit changes 20 lines');
  const changed = bigEdit.diffLines.filter((line) => line.kind !== 'same');
  assert.deepEqual(signed(changed.slice(0, 2)), ['-line 51', '+line 51 (edited)'], 'the 2,000-line edit diff pairs the changed line');
  assert.equal(changed.length, 40, 'every changed line of the 2,000-line edit is shown');
}

/** 9: a stored session of file-tool calls shows read, diff, search and error cards. */
export async function stepFileCards(browser, problems, h) {
  const dir = realpathSync(mkdtempSync(path.join(tmpdir(), 'dsh-e2e-cards-')));
  const home = path.join(dir, 'home');
  const workspace = path.join(dir, 'workspace');
  mkdirSync(workspace, { recursive: true });
  const id = writeFileToolSession(home, workspace);
  const server = await startServer(h, home, workspace);
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  context.setDefaultTimeout(h.WAIT_MS);
  try {
    const page = await context.newPage();
    h.watch(page, 'file-cards page', problems);
    await page.goto(server.url);
    const item = page.locator(`[data-testid="session-item"][data-session-id="${id}"]`);
    await h.until('the stored file-tool session in the list', () => item.count());
    await item.locator('button').first().click();
    const resume = h.byTestId(page, 'resume');
    await resume.waitFor({ state: 'visible', timeout: h.WAIT_MS });
    await resume.click();
    await h.until('the file-tool session\'s user message', async () =>
      (await page.locator('[data-testid="user-message"]', { hasText: PROMPT }).count()) > 0,
    );
    await checkCards(page, h);
    await h.until('the closing answer', async () =>
      (await page.locator('[data-testid="assistant-text"]', { hasText: ANSWER }).count()) > 0,
    );
    await page.locator('[data-call-id="call_read"]').scrollIntoViewIfNeeded();
    await h.screenshot(page, 'file-cards');
    await page.locator('[data-call-id="call_write_fail"]').scrollIntoViewIfNeeded();
    await h.screenshot(page, 'file-cards-error');
    await page.locator('[data-call-id="call_edit_big"]').scrollIntoViewIfNeeded();
    await h.screenshot(page, 'file-cards-large');
  } catch (error) {
    const log = server.stderr().trim().split('\n').slice(-5).join('\n    ');
    if (log) error.message += `\n    the server's last log lines:\n    ${log}`;
    throw error;
  } finally {
    await context.close();
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
