// Approval prompts: the question a tool asks, Allow once / Reject while it is pending, and
// the outcome once decided.

import { api } from './api.js';
import { h } from './dom.js';

/** An approval question: the reason, then buttons while pending, then the outcome. */
export class ApprovalPrompt {
  /**
   * Creates the prompt of an approval/asked event; choices are posted for `sessionId`, and
   * `onSettled()` runs once, when it stops being pending.
   */
  constructor(data, seq, sessionId, onSettled) {
    this.id = String(data.id);
    this.sessionId = sessionId;
    this.onSettled = onSettled;
    this.pending = true;
    this.allow = h('button', { type: 'button', class: 'primary', 'data-testid': 'approval-allow', text: 'Allow once', onclick: () => this.choose('allowed-once') });
    this.reject = h('button', { type: 'button', class: 'danger', 'data-testid': 'approval-reject', text: 'Reject', onclick: () => this.choose('rejected') });
    this.actions = h('div', { class: 'approval-actions' }, this.allow, this.reject);
    this.errorEl = h('div', { class: 'approval-error', hidden: true });
    this.tool = data.toolName ? `\u201c${data.toolName}\u201d` : 'A tool';
    this.titleEl = h('div', { class: 'approval-title', text: `${this.tool} needs your approval` });
    this.el = h(
      'div',
      { class: 'approval pending', 'data-testid': 'approval', 'data-approval-id': this.id, 'data-seq': seq, role: 'group', 'aria-label': 'Approval needed' },
      this.titleEl,
      data.reason ? h('div', { class: 'approval-reason', 'data-testid': 'approval-reason', text: String(data.reason) }) : null,
      this.actions,
      this.errorEl,
    );
  }

  /** Posts a choice; buttons stay disabled until the decided event (or an error). */
  async choose(outcome) {
    if (!this.pending) return;
    this.allow.disabled = true;
    this.reject.disabled = true;
    this.errorEl.hidden = true;
    try {
      await this.answer(outcome);
    } catch (error) {
      if (error.status === 404) {
        this.decide('expired');
        return;
      }
      this.errorEl.textContent = `Could not answer: ${error.message}`;
      this.errorEl.hidden = false;
      this.allow.disabled = false;
      this.reject.disabled = false;
    }
  }

  /** Posts the answer; the prompt shows the outcome the server settled on. */
  async answer(outcome) {
    const path = `/api/agents/${encodeURIComponent(this.sessionId)}/approvals/${encodeURIComponent(this.id)}`;
    const data = await api('POST', path, { outcome });
    this.decide(data?.outcome ?? outcome);
  }

  /** Replaces the buttons with the outcome. */
  decide(outcome) {
    if (!this.pending && this.outcome === outcome) return;
    if (this.pending) {
      this.pending = false;
      this.onSettled();
    }
    this.outcome = outcome;
    this.el.classList.remove('pending');
    this.el.dataset.outcome = outcome;
    this.titleEl.textContent = `${this.tool} asked for approval`;
    this.actions.replaceWith(h('div', { class: `approval-outcome ${outcome}`, 'data-testid': 'approval-outcome', text: outcomeText(outcome) }));
    this.actions = this.el.querySelector('.approval-outcome');
    this.errorEl.hidden = true;
  }
}

/** Readable text for an approval outcome. */
function outcomeText(outcome) {
  switch (outcome) {
    case 'allowed-once':
      return 'Allowed once';
    case 'rejected':
      return 'Rejected';
    case 'cancelled':
      return 'Cancelled';
    case 'unavailable':
      return 'No one could answer';
    case 'expired':
      return 'No longer pending';
    default:
      return String(outcome);
  }
}
