// Tool call cards: the tool's name and arguments (bash: `$ command` and its description),
// its output (collapsed when long) and its exit status.

import { h, setText } from './dom.js';
import { formatNumber } from './format.js';

/** Tool output longer than this (lines or characters) starts collapsed. */
const LONG_OUTPUT_LINES = 24;
const LONG_OUTPUT_CHARS = 4000;

/** A tool call's card: name, arguments (bash: command and description), output, exit. */
export class ToolCard {
  /** Creates an empty card for a call id. */
  constructor(callId, name, seq) {
    this.name = name || 'tool';
    this.hasResult = false;
    this.nameEl = h('span', { class: 'tool-name', 'data-testid': 'tool-name', text: this.name });
    this.descEl = h('span', { class: 'tool-desc', 'data-testid': 'tool-description' });
    this.exitEl = h('span', { class: 'tool-exit pending', 'data-testid': 'tool-exit', text: 'running\u2026' });
    this.argsEl = h('div', { class: 'tool-args' });
    this.resultEl = h('div', { class: 'tool-result' });
    this.approvalsEl = h('div', { class: 'tool-approvals' });
    this.el = h(
      'div',
      { class: 'tool-card', 'data-testid': 'tool-card', 'data-call-id': callId, 'data-seq': seq },
      h('div', { class: 'tool-head' }, this.nameEl, this.descEl, this.exitEl),
      this.argsEl,
      this.approvalsEl,
      this.resultEl,
    );
  }

  /** Sets the tool name (known from the first stream fragment or the tool/call event). */
  setName(name) {
    if (!name || name === this.name) return;
    this.name = name;
    setText(this.nameEl, name);
  }

  /** Shows the call's arguments: bash gets `$ command` and its description; others JSON. */
  setArguments(raw) {
    if (raw === this.rawArguments) return;
    this.rawArguments = raw;
    const args = parseArguments(raw);
    if (this.name === 'bash' && args && typeof args.command === 'string') {
      setText(this.descEl, typeof args.description === 'string' ? args.description : '');
      const extras = [];
      if (args.workdir) extras.push(`in ${args.workdir}`);
      if (args.run_in_background) extras.push('in the background');
      if (args.sandbox_permissions) extras.push(`asks for ${args.sandbox_permissions}`);
      const parts = [
        h('pre', { class: 'tool-command' }, h('span', { class: 'prompt', text: '$ ' }), h('code', { 'data-testid': 'tool-command', text: args.command })),
      ];
      if (extras.length) parts.push(h('div', { class: 'tool-extras muted', text: extras.join(' · ') }));
      if (typeof args.justification === 'string') parts.push(h('div', { class: 'tool-extras muted', text: `Why: ${args.justification}` }));
      this.argsEl.replaceChildren(...parts);
    } else {
      setText(this.descEl, typeof args?.description === 'string' ? args.description : '');
      const pretty = args ? JSON.stringify(args, null, 2) : String(raw ?? '');
      this.argsEl.replaceChildren(
        h('details', { class: 'tool-json' }, h('summary', { text: 'Arguments' }), h('pre', { 'data-testid': 'tool-arguments', text: pretty })),
      );
    }
  }

  /** Shows the result: output (collapsed when long) and the exit status. */
  setResult(text, isError, error) {
    this.hasResult = true;
    const status = this.name === 'bash' ? exitStatus(text, isError) : { label: isError ? 'error' : 'ok', ok: !isError };
    if (error && typeof error.code === 'string') status.label += ` (${error.code})`;
    setText(this.exitEl, status.label);
    this.exitEl.className = `tool-exit ${status.ok ? 'ok' : 'failed'}`;
    this.el.classList.toggle('failed', !status.ok);
    const output = h('pre', { class: 'tool-output', 'data-testid': 'tool-output', text: text });
    const lines = text.split('\n').length;
    if (lines > LONG_OUTPUT_LINES || text.length > LONG_OUTPUT_CHARS) {
      this.resultEl.replaceChildren(h('details', { class: 'tool-long' }, h('summary', { text: `Output (${formatNumber(lines)} lines)` }), output));
    } else {
      this.resultEl.replaceChildren(output);
    }
  }

  /** Marks a call that never got a result before its turn ended. */
  markUnfinished() {
    if (this.hasResult) return;
    setText(this.exitEl, 'no result');
    this.exitEl.className = 'tool-exit failed';
  }
}

/** Parses a tool call's JSON arguments; null when they are not a JSON object. */
function parseArguments(raw) {
  if (raw && typeof raw === 'object') return raw;
  try {
    const value = JSON.parse(String(raw ?? ''));
    return value && typeof value === 'object' ? value : null;
  } catch {
    return null;
  }
}

/**
 * The exit status a bash result ends with: its final marker lines (`[exit code: N]`,
 * `[timed out after Nms]`, `[killed by signal: X]`); no marker and no error is exit 0.
 */
function exitStatus(text, isError) {
  const lines = String(text).replace(/\n+$/, '').split('\n');
  const markers = [];
  for (let i = lines.length - 1; i >= 0 && /^\[[^\]\n]*\]$/.test(lines[i]); i--) markers.unshift(lines[i]);
  const timedOut = markers.find((line) => /^\[timed out after \d+ms\]$/.test(line));
  if (timedOut) return { label: timedOut.slice(1, -1), ok: false };
  const signal = markers.find((line) => line.startsWith('[killed by signal: '));
  if (signal) return { label: signal.slice(1, -1), ok: false };
  const code = markers.map((line) => /^\[exit code: (-?\d+|null)\]$/.exec(line)).find(Boolean);
  if (code) return { label: code[1] === 'null' ? 'no exit code' : `exit ${code[1]}`, ok: false };
  if (isError) return { label: 'error', ok: false };
  return { label: 'exit 0', ok: true };
}
