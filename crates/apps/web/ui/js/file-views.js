// The bodies of file-tool cards, from a presentation (js/file-present.js): a read's numbered
// lines, a diff's removed and added lines, glob's paths and grep's matches by file. Long
// bodies stop after MAX_LINES rows with a "… N more lines" note. Text only (textContent).

import { h } from './dom.js';
import { formatNumber } from './format.js';
import { diffStats, lineDiff } from './line-diff.js';

/** At most this many rows (lines, paths or matches) are rendered per card. */
const MAX_LINES = 400;
/** Unchanged lines kept around each change; longer unchanged runs fold into a gap row. */
const DIFF_CONTEXT = 3;

/** The body of a card for a presentation (an empty list for a generic card). */
export function presentationBody(presentation) {
  switch (presentation.card) {
    case 'read':
      return [readView(presentation)];
    case 'diff':
      return [diffView(presentation.diffs)];
    case 'paths':
      return [pathsView(presentation)];
    case 'matches':
      return [matchesView(presentation)];
    default:
      return [];
  }
}

/** A unit's plural ("line" → "lines", "match" → "matches"). */
function plural(unit, n) {
  if (n === 1) return unit;
  return /(s|x|ch|sh)$/.test(unit) ? `${unit}es` : `${unit}s`;
}

/** `n line(s)` with thousands separators. */
function lines(n, unit = 'line') {
  return `${formatNumber(n)} ${plural(unit, n)}`;
}

/** The "… N more lines" note under a capped body. */
function moreNote(hidden, unit = 'line') {
  return h('div', { class: 'code-more muted', 'data-testid': 'more-lines', text: `\u2026 ${formatNumber(hidden)} more ${plural(unit, hidden)}` });
}

/** One row of a code block: a gutter (line number or diff sign) and the line's text. */
function codeLine(gutter, text, attrs) {
  return h('div', attrs, h('span', { class: 'gutter', text: gutter }), h('span', { class: 'code', text }));
}

/** read: the path and range, then the numbered lines (capped). */
function readView(p) {
  const shown = p.lines;
  let range;
  if (shown.length) range = `lines ${shown[0].number}\u2013${shown[shown.length - 1].number} of ${formatNumber(p.totalLines)}`;
  else range = p.totalLines === 0 ? 'empty file' : `no lines shown of ${formatNumber(p.totalLines)}`;
  const block = h('div', { class: `code-block${p.lang ? ` lang-${p.lang}` : ''}`, 'data-testid': 'read-lines' });
  for (const line of shown.slice(0, MAX_LINES)) {
    block.append(codeLine(String(line.number), line.text, { class: 'code-line', 'data-testid': 'read-line', 'data-line': line.number }));
  }
  if (shown.length > MAX_LINES) block.append(moreNote(shown.length - MAX_LINES));
  return h(
    'div',
    { class: 'file-view read-view' },
    h('div', { class: 'file-view-head' }, h('span', { class: 'file-path', 'data-testid': 'read-path', text: p.path }), h('span', { class: 'file-meta muted', 'data-testid': 'read-range', text: range })),
    block,
  );
}

/** A diff of every hunk: `+added -removed`, then each hunk's lines (capped across hunks). */
function diffView(diffs) {
  const hunks = diffs.map((diff) => ({ path: diff.path, entries: lineDiff(diff.oldText, diff.newText) }));
  const totals = { removed: 0, added: 0 };
  for (const hunk of hunks) {
    const stats = diffStats(hunk.entries);
    totals.removed += stats.removed;
    totals.added += stats.added;
  }
  const view = h(
    'div',
    { class: 'file-view diff-view', 'data-testid': 'diff' },
    h('div', { class: 'file-view-head' }, h('span', { class: 'diff-stats', 'data-testid': 'diff-stats' }, h('span', { class: 'diff-added', text: `+${formatNumber(totals.added)}` }), ' ', h('span', { class: 'diff-removed', text: `-${formatNumber(totals.removed)}` }))),
  );
  const paths = new Set(hunks.map((hunk) => hunk.path));
  let budget = MAX_LINES;
  let hidden = 0;
  for (const hunk of hunks) {
    const rows = foldUnchanged(hunk.entries);
    const block = h('div', { class: 'code-block diff-block' });
    if (paths.size > 1 && hunk.path) block.append(h('div', { class: 'diff-path', 'data-testid': 'diff-path', text: hunk.path }));
    if (!rows.length) block.append(h('div', { class: 'code-more muted', text: 'no lines' }));
    for (const row of rows) {
      const size = row.kind === 'gap' ? 0 : 1;
      if (budget <= 0) {
        hidden += row.kind === 'gap' ? row.count : 1;
        continue;
      }
      budget -= size;
      if (row.kind === 'gap') block.append(h('div', { class: 'code-gap muted', text: `\u22ef ${lines(row.count)} unchanged` }));
      else block.append(codeLine(SIGNS[row.kind], row.text, { class: `code-line diff-${row.kind}`, 'data-testid': 'diff-line', 'data-kind': row.kind }));
    }
    if (block.childElementCount) view.append(block);
  }
  if (hidden) view.append(moreNote(hidden));
  return view;
}

/** The gutter of a diff row. */
const SIGNS = { same: ' ', del: '-', add: '+' };

/** A diff's rows with each unchanged run longer than twice the context folded into a gap. */
function foldUnchanged(entries) {
  const rows = [];
  let i = 0;
  while (i < entries.length) {
    if (entries[i].kind !== 'same') {
      rows.push(entries[i++]);
      continue;
    }
    let end = i;
    while (end < entries.length && entries[end].kind === 'same') end++;
    const keepHead = i === 0 ? 0 : DIFF_CONTEXT;
    const keepTail = end === entries.length ? 0 : DIFF_CONTEXT;
    if (end - i > keepHead + keepTail + 1) {
      for (let k = i; k < i + keepHead; k++) rows.push(entries[k]);
      rows.push({ kind: 'gap', count: end - i - keepHead - keepTail });
      for (let k = end - keepTail; k < end; k++) rows.push(entries[k]);
    } else {
      for (let k = i; k < end; k++) rows.push(entries[k]);
    }
    i = end;
  }
  return rows;
}

/** The "N of total" (or "N") summary of a search card. */
function searchSummary(shown, total, truncated, unit) {
  const text = truncated || total > shown ? `${formatNumber(shown)} of ${lines(total, unit)}` : lines(total, unit);
  return h('div', { class: 'file-view-head' }, h('span', { class: 'file-meta muted', 'data-testid': 'search-summary', text }));
}

/** glob: the paths found (capped), with "N of total" when the list was cut. */
function pathsView(p) {
  const view = h('div', { class: 'file-view search-view' }, searchSummary(p.paths.length, p.total, p.truncated, 'path'));
  if (!p.paths.length) {
    view.append(h('div', { class: 'code-more muted', text: 'No files found' }));
    return view;
  }
  const list = h('ul', { class: 'code-block path-list', 'data-testid': 'glob-paths' });
  for (const path of p.paths.slice(0, MAX_LINES)) list.append(h('li', { class: 'file-path', 'data-testid': 'glob-path', text: path }));
  view.append(list);
  if (p.paths.length > MAX_LINES) view.append(moreNote(p.paths.length - MAX_LINES, 'path'));
  return view;
}

/** grep: the matches grouped by file, `line: text` (capped), with "N of total" when cut. */
function matchesView(p) {
  const shown = p.files.reduce((sum, file) => sum + file.matches.length, 0);
  const view = h('div', { class: 'file-view search-view' }, searchSummary(shown, p.total, p.truncated, 'match'));
  if (!shown) {
    view.append(h('div', { class: 'code-more muted', text: 'No matches found' }));
    return view;
  }
  let budget = MAX_LINES;
  for (const file of p.files) {
    if (budget <= 0) break;
    const group = h('div', { class: 'code-block grep-file', 'data-testid': 'grep-file', 'data-path': file.path }, h('div', { class: 'diff-path file-path', 'data-testid': 'grep-path', text: file.path }));
    for (const match of file.matches.slice(0, budget)) {
      const number = match.lineNumber === null ? '' : String(match.lineNumber);
      group.append(codeLine(number && `${number}:`, match.line, { class: 'code-line', 'data-testid': 'grep-match', 'data-line': number }));
    }
    budget -= file.matches.length;
    view.append(group);
  }
  if (shown > MAX_LINES) view.append(moreNote(shown - MAX_LINES, 'match'));
  return view;
}
