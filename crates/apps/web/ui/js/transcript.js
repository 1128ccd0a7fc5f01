// The transcript of one session: applies its events in order, rendering user messages and
// notes, approval prompts, retries and turn ends itself and handing assistant steps (text,
// reasoning, tool cards) to AssistantSteps; it keeps the turn state and the token usage.
// Everything the model or a tool wrote reaches the page only as text.

import { ApprovalPrompt } from './approvals.js';
import { h } from './dom.js';
import { messageText } from './format.js';
import { AssistantSteps } from './steps.js';

/** The plugin whose user/messages are runtime-context snapshots (dsh's system-prompt plugin). */
const RUNTIME_CONTEXT_PLUGIN = '@deepseek-ai/dsh-system-prompt';

/** The rendered transcript of one session and the state its events build up. */
export class Transcript {
  /**
   * Renders into `list`; approval answers go to `sessionId`. Hooks: `onGrow()` runs when
   * content is added, `onTitle(title)` when the session gets a title.
   */
  constructor(list, sessionId, hooks) {
    this.list = list;
    this.sessionId = sessionId;
    this.hooks = hooks;
    this.running = false;
    this.turn = null;
    this.step = null;
    /** Approval id → its prompt, for every question asked. */
    this.approvals = new Map();
    /** The prompts still waiting for an answer. */
    this.pendingApprovals = new Set();
    this.usage = { input: 0, output: 0, cached: 0 };
    this.steps = new AssistantSteps((el, seq, turn) => this.addItem(el, seq, turn), () => hooks.onGrow());
  }

  /** Dispatches one event to its renderer. */
  apply(event) {
    const data = event.data ?? {};
    switch (event.type) {
      case 'turn/start':
        return this.onTurnStart(data);
      case 'step/start':
        this.step = data.step ?? null;
        if (data.turn !== undefined) this.turn = data.turn;
        return;
      case 'step/end':
        return this.steps.finishStep(data.turn, data.step);
      case 'user/message':
        return this.onUserMessage(event, data);
      case 'assistant/chunk':
        return this.onChunk(event, data);
      case 'assistant/message':
        return this.steps.onAssistantMessage(event, data);
      case 'tool/call':
        return this.steps.onToolCall(event, data);
      case 'tool/result':
        return this.steps.onToolResult(event, data);
      case 'approval/asked':
        return this.onApprovalAsked(event, data);
      case 'approval/decided':
        return this.approvals.get(String(data.id))?.decide(data.outcome);
      case 'turn/end':
        return this.onTurnEnd(event, data);
      case 'llm/retry':
        return this.onRetry(event, data);
      case 'session/title':
        return this.onTitle(data);
      default:
        return undefined;
    }
  }

  /** Writes the text streamed since the last call (once per frame). */
  flushText() {
    this.steps.flushText();
  }

  /** Whether an approval question is waiting for an answer. */
  hasPendingApproval() {
    return this.pendingApprovals.size > 0;
  }

  /** Whether nothing has been rendered yet. */
  isEmpty() {
    return this.list.childElementCount === 0;
  }

  /** Appends a transcript item tagged with its first event's seq (and turn when known). */
  addItem(el, seq, turn = this.turn) {
    el.classList.add('item');
    el.dataset.seq = String(seq);
    if (turn !== null && turn !== undefined) el.dataset.turn = String(turn);
    this.list.append(el);
    this.hooks.onGrow();
    return el;
  }

  /** turn/start: the turn is running (Stop enabled, Send steers). */
  onTurnStart(data) {
    this.running = true;
    this.turn = data.turn ?? null;
    this.step = null;
  }

  /** user/message: the user's words as a bubble; plugin notes collapsed; snapshots hidden. */
  onUserMessage(event, data) {
    const source = data.source ?? {};
    // Runtime-context snapshots (and the message clearing them) are for the model only.
    if (source.kind === 'plugin' && source.plugin === RUNTIME_CONTEXT_PLUGIN) return;
    const text = messageText(data.content);
    if (source.kind === 'user') {
      this.addItem(h('div', { class: 'user-message', 'data-testid': 'user-message' }, h('div', { class: 'bubble', text })), event.seq);
      return;
    }
    const who = source.plugin ? String(source.plugin) : String(source.kind ?? 'note');
    const summary = typeof source.summary === 'string' ? source.summary : `Note from ${who}`;
    this.addItem(
      h('details', { class: 'note', 'data-testid': 'note' }, h('summary', { text: summary }), h('pre', { class: 'note-text', text })),
      event.seq,
    );
  }

  /** assistant/chunk: usage is summed here; everything else belongs to the step. */
  onChunk(event, data) {
    const chunk = data.chunk ?? {};
    if (chunk.type !== 'usage') {
      this.steps.onChunk(event, data);
      return;
    }
    const usage = chunk.usage ?? {};
    this.usage.input += Number(usage.inputTokens) || 0;
    this.usage.output += Number(usage.outputTokens) || 0;
    this.usage.cached += Number(usage.cacheReadTokens) || 0;
  }

  /** approval/asked: a prompt on the call's card (or standalone) with Allow / Reject. */
  onApprovalAsked(event, data) {
    if (data.id === undefined || data.id === null) return;
    const id = String(data.id);
    if (this.approvals.has(id)) return;
    const prompt = new ApprovalPrompt(data, event.seq, this.sessionId, () => this.pendingApprovals.delete(prompt));
    this.approvals.set(id, prompt);
    this.pendingApprovals.add(prompt);
    if (data.callId) {
      const card = this.steps.approvalCard(String(data.callId), data.toolName, event.seq, this.turn, this.step);
      card.approvalsEl.append(prompt.el);
      this.hooks.onGrow();
    } else {
      this.addItem(prompt.el, event.seq);
    }
  }

  /** turn/end: the marker with its reason; the turn's open questions and blocks close. */
  onTurnEnd(event, data) {
    const { reason } = data;
    const { kind } = reason;
    // Deciding removes the prompt from the set, which a Set's iteration allows.
    for (const prompt of this.pendingApprovals) prompt.decide('expired');
    this.steps.finishTurn();
    const marker = h(
      'div',
      { class: `turn-end ${kind}`, 'data-testid': 'turn-end', 'data-reason': kind, role: 'status' },
      h('span', { class: 'turn-end-text', text: turnEndText(reason) }),
    );
    this.addItem(marker, event.seq, data.turn ?? this.turn);
    this.running = false;
    this.step = null;
  }

  /** llm/retry: a small notice that the model call is retried. */
  onRetry(event, data) {
    const delay = Number(data.delayMs);
    const wait = Number.isFinite(delay) ? ` in ${(delay / 1000).toFixed(delay < 10000 ? 1 : 0)} s` : '';
    const count = data.maxRetries ? `${data.retry} of ${data.maxRetries}` : String(data.retry ?? '');
    const why = data.failure?.message ? `: ${data.failure.code ? `${data.failure.code} ` : ''}${data.failure.message}` : '';
    this.addItem(h('div', { class: 'notice', 'data-testid': 'retry', text: `Retrying the model call (${count})${wait}${why}` }), event.seq);
  }

  /** session/title: passed on to the header and the sidebar. */
  onTitle(data) {
    if (typeof data.title !== 'string' || !data.title.trim()) return;
    this.hooks.onTitle(data.title);
  }
}

/**
 * Readable text for a turn/end reason: `{kind}`, with `reason: {kind, reason?}` when aborted
 * and `error: {code, message}` on an error (stored logs are upgraded to these shapes on load).
 */
function turnEndText(reason) {
  switch (reason.kind) {
    case 'completed':
      return 'Turn complete';
    case 'aborted': {
      const cause = reason.reason;
      if (cause.kind === 'user') return 'Stopped by you';
      if (cause.kind === 'parent') return 'Stopped by the parent agent';
      if (cause.kind === 'disposed') return 'Stopped: the agent was closed';
      if (cause.kind === 'hook') return `Stopped by a hook${cause.reason ? `: ${cause.reason}` : ''}`;
      // `legacy`: an old log that did not record who stopped the turn.
      return 'Stopped';
    }
    case 'error':
      return `Error ${reason.error.code}: ${reason.error.message}`;
    case 'max-tokens':
      return 'Stopped: the reply hit the token limit';
    case 'blocked':
      return 'Blocked by a policy';
    case 'interrupted':
      return 'Interrupted: dsh stopped during this turn';
    default:
      return `Turn ended (${reason.kind})`;
  }
}
