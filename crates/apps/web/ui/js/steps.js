// The assistant's steps in the transcript: each step's streamed text and reasoning blocks
// and its tool cards (keyed by turn, step and call id), built from chunks, final messages,
// tool calls and tool results.

import { h } from './dom.js';
import { messageText } from './format.js';
import { TextBlock } from './text-block.js';
import { ToolCard } from './tool-cards.js';

/** The steps of one transcript, with their blocks and cards. */
export class AssistantSteps {
  /**
   * `addItem(el, seq, turn)` appends a new step (or a standalone card) to the transcript;
   * `onGrow()` notes content added inside an existing item.
   */
  constructor(addItem, onGrow) {
    this.addItem = addItem;
    this.onGrow = onGrow;
    this.steps = new Map();
    this.cards = new Map();
    this.latestCards = new Map();
    this.dirtyBlocks = new Set();
    this.openBlocks = new Set();
    this.openCards = new Set();
  }

  /** assistant/chunk (except usage): streams text and reasoning, tracks tool-call blocks. */
  onChunk(event, data) {
    const chunk = data.chunk ?? {};
    switch (chunk.type) {
      case 'block-start': {
        const step = this.stepView(data.turn, data.step, event.seq);
        if (chunk.blockType === 'text' || chunk.blockType === 'reasoning') {
          step.byIndex.set(chunk.index, this.addBlock(step, chunk.blockType));
        }
        return;
      }
      case 'text-delta':
      case 'reasoning-delta': {
        const step = this.stepView(data.turn, data.step, event.seq);
        let block = step.byIndex.get(chunk.index);
        if (!block) {
          block = this.addBlock(step, chunk.type === 'text-delta' ? 'text' : 'reasoning');
          step.byIndex.set(chunk.index, block);
        }
        block.append(String(chunk.text ?? ''));
        this.dirtyBlocks.add(block);
        return;
      }
      case 'tool-call-delta': {
        const step = this.stepView(data.turn, data.step, event.seq);
        const callId = chunk.id ?? step.toolIndex.get(chunk.index);
        if (!callId) return;
        step.toolIndex.set(chunk.index, callId);
        this.toolCard(String(callId), chunk.name, event.seq, data.turn, data.step);
        return;
      }
      case 'block-end': {
        const step = this.stepView(data.turn, data.step, event.seq);
        const block = chunk.block ?? {};
        const streamed = step.byIndex.get(chunk.index);
        if (streamed && typeof block.text === 'string') {
          streamed.setText(block.text);
          this.finishBlock(streamed);
        } else if (block.type === 'tool-call' && block.id) {
          this.toolCard(String(block.id), block.name, event.seq, data.turn, data.step).setArguments(block.arguments);
        }
        return;
      }
      default:
        return;
    }
  }

  /** assistant/message: the step's final content replaces what was streamed. */
  onAssistantMessage(event, data) {
    const content = Array.isArray(data.message?.content) ? data.message.content : [];
    const finals = content.filter((block) => block?.type === 'text' || block?.type === 'reasoning');
    const tools = content.filter((block) => block?.type === 'tool-call');
    if (!finals.length && !tools.length && !this.steps.has(`${data.turn}:${data.step}`)) return;
    const step = this.stepView(data.turn, data.step, event.seq);
    const streamed = step.blocks;
    const same = streamed.length === finals.length && streamed.every((block, i) => block.type === finals[i].type);
    if (same) {
      streamed.forEach((block, i) => block.setText(String(finals[i].text ?? '')));
    } else {
      for (const block of streamed) {
        this.finishBlock(block);
        block.el.remove();
      }
      step.blocks = [];
      step.byIndex.clear();
      for (const final of finals) this.addBlock(step, final.type).setText(String(final.text ?? ''));
    }
    for (const block of step.blocks) this.finishBlock(block);
    for (const call of tools) {
      if (call.id) this.toolCard(String(call.id), call.name, event.seq, data.turn, data.step).setArguments(call.arguments);
    }
    if (data.interrupted) step.el.classList.add('interrupted');
  }

  /** tool/call: the card gets its name and full arguments. */
  onToolCall(event, data) {
    if (!data.callId) return;
    this.toolCard(String(data.callId), data.name, event.seq, data.turn, data.step).setArguments(data.arguments);
  }

  /** tool/result: output and exit status (and the file tools' `meta`) on the matching card. */
  onToolResult(event, data) {
    const message = data.message ?? {};
    const results = Array.isArray(message.content) ? message.content.filter((block) => block?.type === 'tool-result') : [];
    for (const result of results) {
      const callId = String(result.toolCallId ?? message.source?.callId ?? '');
      if (!callId) continue;
      const card = this.toolCard(callId, undefined, event.seq, data.turn, data.step);
      card.setResult(messageText(result.content), Boolean(result.isError), data.error, data.meta);
      this.openCards.delete(card);
    }
  }

  /** Collapses a step's reasoning and writes out its queued text (step/end). */
  finishStep(turn, stepNumber) {
    const step = this.steps.get(`${turn}:${stepNumber}`);
    if (!step) return;
    for (const block of step.blocks) this.finishBlock(block);
  }

  /** At a turn's end: completes its open blocks and marks calls that got no result. */
  finishTurn() {
    for (const block of this.openBlocks) this.finishBlock(block);
    for (const card of this.openCards) card.markUnfinished();
    this.openCards.clear();
  }

  /** Writes the text streamed since the last call (once per frame). */
  flushText() {
    for (const block of this.dirtyBlocks) block.flushText();
    this.dirtyBlocks.clear();
  }

  /**
   * The card an approval question (which has no step) belongs to: the call in the running
   * step, else the latest call with that id, else a new card.
   */
  approvalCard(callId, toolName, seq, turn, stepNumber) {
    return this.cards.get(`${turn}:${stepNumber}:${callId}`) ?? this.latestCards.get(callId) ?? this.toolCard(callId, toolName, seq, turn, stepNumber);
  }

  /** The container of one assistant step, created on its first content. */
  stepView(turn, step, seq) {
    const key = `${turn}:${step}`;
    let view = this.steps.get(key);
    if (!view) {
      const blocksEl = h('div', { class: 'step-blocks' });
      const toolsEl = h('div', { class: 'step-tools' });
      const el = h('div', { class: 'step', 'data-testid': 'assistant-step', 'data-step': step ?? '' }, blocksEl, toolsEl);
      this.addItem(el, seq, turn);
      view = { el, blocksEl, toolsEl, blocks: [], byIndex: new Map(), toolIndex: new Map() };
      this.steps.set(key, view);
    }
    return view;
  }

  /** Adds a text or reasoning block to a step. */
  addBlock(step, type) {
    const block = new TextBlock(type);
    step.blocks.push(block);
    step.blocksEl.append(block.el);
    this.openBlocks.add(block);
    return block;
  }

  /** Writes out a block's queued text and marks it complete. */
  finishBlock(block) {
    block.flushText();
    block.finish();
    this.dirtyBlocks.delete(block);
    this.openBlocks.delete(block);
  }

  /**
   * The card of a call in a step, created (in its step, or standalone) when first seen. Cards
   * are keyed by turn, step and call id: providers (and test fakes) may reuse call ids.
   */
  toolCard(callId, name, seq, turn, stepNumber) {
    const key = `${turn}:${stepNumber}:${callId}`;
    let card = this.cards.get(key);
    if (card) {
      card.setName(name);
      return card;
    }
    card = new ToolCard(callId, name, seq);
    this.cards.set(key, card);
    this.latestCards.set(callId, card);
    this.openCards.add(card);
    if (turn !== undefined && turn !== null && stepNumber !== undefined && stepNumber !== null) {
      this.stepView(turn, stepNumber, seq).toolsEl.append(card.el);
      this.onGrow();
    } else {
      this.addItem(card.el, seq);
      card.el.classList.add('standalone');
    }
    return card;
  }
}
