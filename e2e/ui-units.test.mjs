// Unit tests of the web UI's pure modules (no DOM): the line diff and the file tools'
// presentations. Run with `npm run test:units` here (node --test); `cargo xtask e2e` runs
// them too, before the browser steps.

import assert from 'node:assert/strict';
import { test } from 'node:test';

import { isFileTool, presentCall, presentResult } from '../crates/apps/web/ui/js/file-present.js';
import { diffStats, lineDiff, splitLines } from '../crates/apps/web/ui/js/line-diff.js';

/** A diff as `-a`, `+b`, ` c` strings. */
function signed(entries) {
  return entries.map((entry) => `${{ same: ' ', del: '-', add: '+' }[entry.kind]}${entry.text}`);
}

test('lines split on newlines, one trailing CR off each, no line after a final newline', () => {
  assert.deepEqual(splitLines(''), []);
  assert.deepEqual(splitLines(null), []);
  assert.deepEqual(splitLines('a'), ['a']);
  assert.deepEqual(splitLines('a\r\nb\n'), ['a', 'b']);
  assert.deepEqual(splitLines('a\n\n'), ['a', '']);
});

test('a line diff keeps the common lines and puts removals before additions', () => {
  assert.deepEqual(signed(lineDiff('mode=DEBUG\nlevel=info', 'mode=RELEASE\nlevel=info')), ['-mode=DEBUG', '+mode=RELEASE', ' level=info']);
  assert.deepEqual(signed(lineDiff(null, 'a\nb\n')), ['+a', '+b']);
  assert.deepEqual(signed(lineDiff('a\nb', '')), ['-a', '-b']);
  assert.deepEqual(signed(lineDiff('a\nb\nc\nd', 'a\nx\nc\ny\nd')), [' a', '-b', '+x', ' c', '+y', ' d']);
  assert.deepEqual(signed(lineDiff('1\n2\n3', '3\n1\n2')), ['+3', ' 1', ' 2', '-3']);
});

test('a 2,000-line diff is exact and quick', () => {
  const old = Array.from({ length: 2000 }, (_, i) => `line ${i + 1}`);
  const changed = old.map((line, i) => (i % 7 === 3 ? `${line}!` : line));
  const started = performance.now();
  const diff = lineDiff(old.join('\n'), changed.join('\n'));
  const ms = performance.now() - started;
  const changes = old.filter((_, i) => i % 7 === 3).length;
  assert.deepEqual(diffStats(diff), { removed: changes, added: changes });
  assert.equal(diff.filter((entry) => entry.kind === 'same').length, 2000 - changes);
  assert.ok(ms < 2000, `the diff took ${ms} ms`);
  // Nothing in common: all removed, then all added.
  const other = Array.from({ length: 2000 }, (_, i) => `other ${i}`);
  assert.deepEqual(diffStats(lineDiff(old.join('\n'), other.join('\n'))), { removed: 2000, added: 2000 });
});

test('only the file tools have cards of their own', () => {
  for (const name of ['read', 'write', 'edit', 'read_image', 'glob', 'grep', 'str_replace_editor']) assert.ok(isFileTool(name), name);
  for (const name of ['bash', 'task', 'tool', '__proto__']) assert.ok(!isFileTool(name), name);
});

test('call titles follow dsh 0.1.1', () => {
  assert.equal(presentCall('read', { file_path: 'a.rs' }).title, 'Read a.rs');
  assert.equal(presentCall('read', { file_path: 'a.rs', offset: 5, limit: 4 }).title, 'Read a.rs (5 - 8)');
  assert.equal(presentCall('read', { file_path: 'a.rs', offset: 5 }).title, 'Read a.rs (from line 5)');
  assert.equal(presentCall('read_image', { file_path: 'p.png' }).title, 'Read image p.png');
  assert.equal(presentCall('glob', { pattern: '*.rs' }).title, 'Glob *.rs');
  assert.equal(presentCall('glob', { pattern: '*.rs', path: 'src' }).title, 'Glob *.rs in src');
  assert.equal(presentCall('grep', { pattern: 'x', path: 'src', include: '*.ts' }).title, 'Grep x in src (*.ts)');
  assert.equal(presentCall('grep', { pattern: 'x', include: '*.ts' }).title, 'Grep x (*.ts)');
  assert.deepEqual(presentCall('str_replace_editor', { command: 'view', path: '/a' }), { card: 'generic', title: 'view /a' });
  assert.deepEqual(presentCall('str_replace_editor', { command: 'insert', path: '/a', insert_line: 0, new_str: 'x' }), { card: 'generic', title: 'insert /a' });
  assert.deepEqual(presentCall('str_replace_editor', { command: 'create', path: '/a', file_text: 'x' }).diffs, [{ path: '/a', oldText: null, newText: 'x' }]);
  assert.deepEqual(presentCall('str_replace_editor', { command: 'str_replace', path: '/a', old_str: 'o', new_str: 'n' }).diffs, [{ path: '/a', oldText: 'o', newText: 'n' }]);
  assert.equal(presentCall('write', null).title, 'Write', 'unparsable arguments still give a card');
});

test('results use their meta, and fall back to the call when it is missing or malformed', () => {
  const write = { file_path: 'f', content: 'all\n' };
  assert.deepEqual(presentResult('write', write, { diffs: [] }).diffs, [{ path: 'f', oldText: null, newText: 'all\n' }]);
  const diffs = [{ path: 'f', oldText: 'a', newText: 'b' }];
  assert.deepEqual(presentResult('write', write, { diffs }).diffs, diffs);
  const edit = { file_path: 'f', old_string: 'o', new_string: 'n' };
  assert.deepEqual(presentResult('edit', edit, undefined).diffs, [{ path: 'f', oldText: 'o', newText: 'n' }]);
  assert.deepEqual(presentResult('edit', edit, { diffs: [{ oldText: 1 }] }).diffs, [{ path: 'f', oldText: 'o', newText: 'n' }]);

  const meta = { path: 'a', offset: 2, lines: [{ number: 2, text: 'x' }, { number: 3, text: 'y' }], totalLines: 3, lang: 'rs' };
  assert.equal(presentResult('read', { file_path: 'a' }, meta).card, 'read');
  assert.equal(presentResult('read', { file_path: 'a' }, { ...meta, lang: 'x"><b' }).lang, null, 'an odd language is dropped');
  assert.equal(presentResult('read', { file_path: 'a' }, { ...meta, lines: [{ number: 3, text: 'y' }, { number: 2, text: 'x' }] }).card, 'generic', 'unordered lines are refused');
  assert.equal(presentResult('read', { file_path: 'a' }, { ...meta, totalLines: 2 }).card, 'generic', 'a line past the end is refused');

  const paths = presentResult('glob', { pattern: '*' }, { shape: 'paths', paths: ['a', 7, 'b'], truncated: true, total: 9 });
  assert.deepEqual([paths.card, paths.paths, paths.truncated, paths.total], ['paths', ['a', 'b'], true, 9]);
  const matches = presentResult('grep', { pattern: 'x' }, { shape: 'matches', files: [{ path: 'a', matches: [{ lineNumber: 1, line: 'x' }] }], truncated: false, total: 1 });
  assert.deepEqual(matches.files, [{ path: 'a', matches: [{ lineNumber: 1, line: 'x' }] }]);
  assert.equal(presentResult('grep', { pattern: 'x' }, { shape: 'paths', paths: [] }).card, 'generic', 'a meta of the wrong shape is ignored');
});
