// A tool's output text as a block: shown as it is, or collapsed behind a summary when long.

import { h } from './dom.js';
import { formatNumber } from './format.js';

/** Tool output longer than this (lines or characters) starts collapsed. */
const LONG_OUTPUT_LINES = 24;
const LONG_OUTPUT_CHARS = 4000;

/**
 * The output block (`data-testid="tool-output"`). `collapsed` folds it behind a summary
 * whatever its length (for cards that show the result in another form already).
 */
export function outputBlock(text, collapsed = false) {
  const output = h('pre', { class: 'tool-output', 'data-testid': 'tool-output', text });
  const lines = text.split('\n').length;
  if (collapsed || lines > LONG_OUTPUT_LINES || text.length > LONG_OUTPUT_CHARS) {
    const label = collapsed ? 'Tool output' : 'Output';
    return h('details', { class: 'tool-long' }, h('summary', { text: `${label} (${formatNumber(lines)} ${lines === 1 ? 'line' : 'lines'})` }), output);
  }
  return output;
}
