// Tool call cards: the tool's name and arguments (bash: `$ command` and its description;
// the file tools: a title and a read, diff or search view, see js/file-present.js and
// js/file-views.js), its output (collapsed when long) and its exit status.

import { h, setText } from './dom.js';
import { isFileTool, presentCall, presentResult } from './file-present.js';
import { presentationBody } from './file-views.js';
import { outputBlock } from './tool-output.js';

/** A tool call's card: name, arguments (bash: command and description; file tools: a view), output, exit. */
export class ToolCard {
  /** Creates an empty card for a call id. */
  constructor(callId, name, seq) {
    this.name = name || 'tool';
    this.hasResult = false;
    this.nameEl = h('span', { class: 'tool-name', 'data-testid': 'tool-name', text: this.name });
    this.titleEl = h('span', { class: 'tool-title', 'data-testid': 'tool-title', hidden: true });
    this.descEl = h('span', { class: 'tool-desc', 'data-testid': 'tool-description' });
    this.exitEl = h('span', { class: 'tool-exit pending', 'data-testid': 'tool-exit', text: 'running\u2026' });
    this.argsEl = h('div', { class: 'tool-args' });
    this.resultEl = h('div', { class: 'tool-result' });
    this.approvalsEl = h('div', { class: 'tool-approvals' });
    this.el = h(
      'div',
      { class: 'tool-card', 'data-testid': 'tool-card', 'data-call-id': callId, 'data-seq': seq },
      h('div', { class: 'tool-head' }, this.nameEl, this.titleEl, this.descEl, this.exitEl),
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
    this.titleEl.hidden = true;
    this.descEl.hidden = false;
    delete this.el.dataset.card;
    // Arguments or a result that came first are shown again the way this tool shows them.
    if (this.rawArguments !== undefined) {
      const raw = this.rawArguments;
      this.rawArguments = undefined;
      this.setArguments(raw);
    }
    if (this.result) this.setResult(this.result.text, this.result.isError, this.result.error, this.result.meta);
  }

  /**
   * Shows the call's arguments: bash gets `$ command` and its description, a file tool its
   * card (a title, and a diff for write and edit), the others JSON.
   */
  setArguments(raw) {
    if (raw === this.rawArguments) return;
    this.rawArguments = raw;
    const args = parseArguments(raw);
    this.args = args;
    if (isFileTool(this.name)) {
      // Before the result: what the call asks for (a write's or an edit's diff already).
      if (!this.result) this.showFile(presentCall(this.name, args));
      else this.setResult(this.result.text, this.result.isError, this.result.error, this.result.meta);
      return;
    }
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
      this.argsEl.replaceChildren(this.argumentsBlock());
    }
  }

  /** The call's arguments as pretty JSON, collapsed. */
  argumentsBlock() {
    const args = this.args;
    const pretty = args ? JSON.stringify(args, null, 2) : String(this.rawArguments ?? '');
    return h('details', { class: 'tool-json' }, h('summary', { text: 'Arguments' }), h('pre', { 'data-testid': 'tool-arguments', text: pretty }));
  }

  /**
   * A file tool's title and body: the view of `presentation`, and the arguments (collapsed)
   * unless the view is a diff, which shows them already.
   */
  showFile(presentation, before = []) {
    this.el.dataset.card = presentation.card;
    this.titleEl.hidden = false;
    setText(this.titleEl, presentation.title);
    this.titleEl.title = presentation.title;
    this.descEl.hidden = true;
    const parts = [...before, ...presentationBody(presentation)];
    if (presentation.card !== 'diff') parts.push(this.argumentsBlock());
    this.argsEl.replaceChildren(...parts);
  }

  /**
   * Shows the result: output (collapsed when long) and the exit status. A file tool's card
   * shows its result view instead (from `meta`), or the error text.
   */
  setResult(text, isError, error, meta) {
    this.hasResult = true;
    this.result = { text, isError, error, meta };
    const status = this.name === 'bash' ? exitStatus(text, isError) : { label: isError ? 'error' : 'ok', ok: !isError };
    if (error && typeof error.code === 'string') status.label += ` (${error.code})`;
    setText(this.exitEl, status.label);
    this.exitEl.className = `tool-exit ${status.ok ? 'ok' : 'failed'}`;
    this.el.classList.toggle('failed', !status.ok);
    if (!isFileTool(this.name)) {
      this.resultEl.replaceChildren(outputBlock(text));
      return;
    }
    if (isError) {
      const call = presentCall(this.name, this.args);
      this.showFile({ card: 'error', title: call.title }, [h('pre', { class: 'tool-error', 'data-testid': 'tool-error', role: 'alert', text })]);
      this.resultEl.replaceChildren();
      return;
    }
    const presentation = presentResult(this.name, this.args, meta);
    this.showFile(presentation);
    // A generic card shows the result text; the others show it another way, so it folds.
    this.resultEl.replaceChildren(outputBlock(text, presentation.card !== 'generic'));
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
