// The stored session step 9 of web.mjs opens: a dsh 0.1 JSONL log (raw, `compression: none`)
// of one turn whose steps call the file tools (read, edit, grep, glob, str_replace_editor
// create, write) with the `meta` their results carry, plus one failed write, a 2,000-line
// write and a 2,000-line edit. `CALLS` is what the step expects each card to show.

import { randomUUID } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/** The 2,000 lines of big.txt, and the same with every 100th line changed. */
const BIG = Array.from({ length: 2000 }, (_, i) => `line ${i + 1}`);
const BIG_EDITED = BIG.map((line, i) => (i % 100 === 50 ? `${line} (edited)` : line));

/** The calls of the session, in order: name, arguments, result text, meta, error. */
export const CALLS = [
  {
    id: 'call_read',
    name: 'read',
    arguments: { file_path: 'src/app.rs', offset: 2, limit: 3 },
    text: '<path>src/app.rs</path>\n<type>file</type>\n<content>\n2: fn main() {\n3:     println!("hi");\n4: }\n\n(Showing lines 2-4 of 10. Use offset=5 to continue.)\n</content>',
    meta: { path: 'src/app.rs', offset: 2, lines: [{ number: 2, text: 'fn main() {' }, { number: 3, text: '    println!("hi");' }, { number: 4, text: '}' }], totalLines: 10, lang: 'rs' },
  },
  {
    id: 'call_edit',
    name: 'edit',
    arguments: { file_path: 'config.txt', old_string: 'mode=DEBUG', new_string: 'mode=RELEASE' },
    text: 'The file config.txt has been updated successfully.',
    meta: { diffs: [{ path: 'config.txt', oldText: 'mode=DEBUG\nlevel=info', newText: 'mode=RELEASE\nlevel=info' }] },
  },
  {
    id: 'call_grep',
    name: 'grep',
    arguments: { pattern: 'TODO', path: 'src', include: '*.rs' },
    text: 'Found 3 matches\n\nsrc/a.rs\nLine 3: // TODO: one\nLine 9: // TODO: two\n\nsrc/b.rs\nLine 1: // TODO: three',
    meta: {
      shape: 'matches',
      files: [
        { path: 'src/a.rs', matches: [{ lineNumber: 3, line: '// TODO: one' }, { lineNumber: 9, line: '// TODO: two' }] },
        { path: 'src/b.rs', matches: [{ lineNumber: 1, line: '// TODO: three' }] },
      ],
      truncated: false,
      total: 3,
    },
  },
  {
    id: 'call_glob',
    name: 'glob',
    arguments: { pattern: '**/*.rs' },
    text: 'src/a.rs\nsrc/b.rs\nsrc/app.rs\n\n(Showing 3 of 250 paths. The complete result could not be saved; narrow pattern or path to see more.)',
    meta: { shape: 'paths', paths: ['src/a.rs', 'src/b.rs', 'src/app.rs'], truncated: true, total: 250 },
  },
  {
    id: 'call_create',
    name: 'str_replace_editor',
    arguments: { command: 'create', path: '/srv/notes.md', file_text: '# Notes\nfirst note\n' },
    text: 'New file created successfully at: /srv/notes.md',
  },
  {
    id: 'call_write_fail',
    name: 'write',
    arguments: { file_path: 'README.md', content: 'a new readme\n' },
    text: 'cannot overwrite existing "README.md" without reading it first \u2014 read the file, then retry',
    error: { name: 'FsError', code: 'FS_NOT_OBSERVED' },
  },
  {
    id: 'call_write_big',
    name: 'write',
    arguments: { file_path: 'big.txt', content: `${BIG.join('\n')}\n` },
    text: '<path>big.txt</path>\n<type>file</type>\n<content>\nCreated file\n</content>',
    meta: { diffs: [] },
  },
  {
    id: 'call_edit_big',
    name: 'edit',
    arguments: { file_path: 'big.txt', old_string: 'line 51', new_string: 'line 51 (edited)', replace_all: true },
    text: 'The file big.txt has been updated. All occurrences were successfully replaced.',
    meta: { diffs: [{ path: 'big.txt', oldText: BIG.join('\n'), newText: BIG_EDITED.join('\n') }] },
  },
];

/** The assistant's closing words. */
export const ANSWER = 'Those were the file tools.';
/** The user's message. */
export const PROMPT = 'Show me the file tools';

/**
 * The project directory name of a working directory (dsh 0.1's rule): each run of `/`, `\`
 * or `:` is one `-`, `[A-Za-z0-9._-]` stays, anything else is `~XXXX`; leading dashes go.
 */
function projectKey(cwd) {
  let readable = '';
  let separators = false;
  for (let i = 0; i < cwd.length; i++) {
    const unit = cwd.charCodeAt(i);
    const char = cwd[i];
    if (char === '/' || char === '\\' || char === ':') {
      if (!separators) readable += '-';
      separators = true;
      continue;
    }
    readable += /[A-Za-z0-9._-]/.test(char) ? char : `~${unit.toString(16).toUpperCase().padStart(4, '0')}`;
    separators = false;
  }
  const slug = readable.replace(/^-+/, '') || 'root';
  return `--${slug.slice(0, 251)}--`;
}

/** Writes the session under `<home>/sessions/` for working directory `cwd`; returns its id. */
export function writeFileToolSession(home, cwd) {
  const id = `session-${randomUUID()}`;
  const started = Date.now() - 60_000;
  const lines = [{ type: 'session', version: 0, id, createdAt: started, cwd, delegationDepth: 0 }];
  const push = (type, data, extra = {}) => {
    const seq = lines.length - 1;
    lines.push({ type, seq, time: started + seq, data, ...extra });
    return seq;
  };
  const source = { kind: 'model', provider: 'deepseek-official', model: 'deepseek-v4-flash' };
  const usage = { inputTokens: 1000, outputTokens: 20, cacheReadTokens: 0 };
  push('turn/start', { turn: 1 });
  push('step/start', { turn: 1, step: 1 });
  push('user/message', { content: [{ type: 'text', text: PROMPT }], source: { kind: 'user' }, role: 'user', id: randomUUID() }, { surfaceOp: 'append' });
  let step = 1;
  for (const call of CALLS) {
    if (step > 1) push('step/start', { turn: 1, step });
    const args = JSON.stringify(call.arguments);
    const content = [{ type: 'tool-call', id: call.id, name: call.name, arguments: args }];
    push('assistant/message', { turn: 1, step, message: { role: 'assistant', content, source, id: randomUUID() }, usage }, { surfaceOp: 'append' });
    const callSeq = push('tool/call', { turn: 1, step, callId: call.id, name: call.name, arguments: args });
    const isError = Boolean(call.error);
    const message = {
      source: { kind: 'tool', callId: call.id },
      content: [{ type: 'tool-result', toolCallId: call.id, content: [{ type: 'text', text: call.text }], isError }],
      role: 'user',
      id: randomUUID(),
    };
    const data = { turn: 1, step, message };
    if (call.error) data.error = call.error;
    if (call.meta) data.meta = call.meta;
    push('tool/result', data, { sourceEventSeqs: [callSeq], surfaceOp: 'append' });
    push('step/end', { turn: 1, step });
    step += 1;
  }
  push('step/start', { turn: 1, step });
  push('assistant/message', { turn: 1, step, message: { role: 'assistant', content: [{ type: 'text', text: ANSWER }], source, id: randomUUID() }, usage }, { surfaceOp: 'append' });
  push('step/end', { turn: 1, step });
  push('turn/end', { turn: 1, reason: { kind: 'completed' } });

  const dir = path.join(home, 'sessions', projectKey(cwd), id);
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, 'session.jsonl'), `${lines.map((line) => JSON.stringify(line)).join('\n')}\n`);
  return id;
}
