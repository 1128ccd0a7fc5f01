// A line diff of two texts: the longest common subsequence of their lines (after the common
// head and tail are set aside), as a list of kept, removed and added lines. Pure: no DOM.

/**
 * Above this many cells (changed old lines × changed new lines) the LCS table is not built:
 * the changed middle is shown as all removed, then all added. 2000 × 2000 lines fit.
 */
const MAX_CELLS = 4_000_000;

/** A text's lines: split on `\n`, one trailing `\r` off each; a final newline adds no line. */
export function splitLines(text) {
  if (text === null || text === undefined || text === '') return [];
  const lines = String(text).split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return lines.map((line) => (line.endsWith('\r') ? line.slice(0, -1) : line));
}

/**
 * The line diff turning `oldText` into `newText` (either may be null: no text). Each entry is
 * `{kind: 'same' | 'del' | 'add', text}`, in reading order, removals before additions.
 */
export function lineDiff(oldText, newText) {
  const a = splitLines(oldText);
  const b = splitLines(newText);
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head++;
  let tail = 0;
  while (tail < a.length - head && tail < b.length - head && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail++;
  const out = [];
  for (let i = 0; i < head; i++) out.push({ kind: 'same', text: a[i] });
  middle(a.slice(head, a.length - tail), b.slice(head, b.length - tail), out);
  for (let i = a.length - tail; i < a.length; i++) out.push({ kind: 'same', text: a[i] });
  return removalsFirst(out);
}

/** Reorders each run of changed lines so its removals come before its additions. */
function removalsFirst(entries) {
  const out = [];
  let added = [];
  for (const entry of entries) {
    if (entry.kind === 'add') {
      added.push(entry);
      continue;
    }
    if (entry.kind === 'same' && added.length) {
      for (const add of added) out.push(add);
      added = [];
    }
    out.push(entry);
  }
  for (const add of added) out.push(add);
  return out;
}

/** Appends the diff of two line lists with no common head or tail to `out`. */
function middle(a, b, out) {
  const n = a.length;
  const m = b.length;
  if (n === 0 || m === 0 || n * m > MAX_CELLS) {
    for (const text of a) out.push({ kind: 'del', text });
    for (const text of b) out.push({ kind: 'add', text });
    return;
  }
  // lcs[i * (m + 1) + j]: the LCS length of a[i..] and b[j..].
  const width = m + 1;
  const lcs = n < 65535 && m < 65535 ? new Uint16Array((n + 1) * width) : new Uint32Array((n + 1) * width);
  for (let i = n - 1; i >= 0; i--) {
    const row = i * width;
    const below = row + width;
    for (let j = m - 1; j >= 0; j--) {
      lcs[row + j] = a[i] === b[j] ? lcs[below + j + 1] + 1 : Math.max(lcs[below + j], lcs[row + j + 1]);
    }
  }
  let i = 0;
  let j = 0;
  while (i < n && j < m) {
    if (a[i] === b[j]) {
      out.push({ kind: 'same', text: a[i] });
      i++;
      j++;
    } else if (lcs[(i + 1) * width + j] >= lcs[i * width + j + 1]) {
      out.push({ kind: 'del', text: a[i] });
      i++;
    } else {
      out.push({ kind: 'add', text: b[j] });
      j++;
    }
  }
  for (; i < n; i++) out.push({ kind: 'del', text: a[i] });
  for (; j < m; j++) out.push({ kind: 'add', text: b[j] });
}

/** How many lines a diff removes and adds. */
export function diffStats(entries) {
  let removed = 0;
  let added = 0;
  for (const entry of entries) {
    if (entry.kind === 'del') removed++;
    else if (entry.kind === 'add') added++;
  }
  return { removed, added };
}
