// What the card of a file tool shows: dsh 0.1.1's presentations of `read`, `write`, `edit`,
// `read_image`, `glob`, `grep` and `str_replace_editor`, built from the call's arguments
// (presentCall) and from the result's `meta` (presentResult). Pure: no DOM. Everything is
// checked before use (the log is untrusted); a meta of the wrong shape falls back to what the
// arguments give. A presentation is one of
//   {card: 'generic', title}                                    the title, then the result text
//   {card: 'read', title, path, offset, lines, totalLines, lang}  numbered lines of a file
//   {card: 'diff', title, diffs: [{path, oldText, newText}]}     removed and added lines
//   {card: 'paths', title, paths, truncated, total}             glob's file list
//   {card: 'matches', title, files, truncated, total}           grep's matches by file

/** The tools whose cards this module presents; any other tool keeps the plain card. */
const FILE_TOOLS = new Set(['read', 'write', 'edit', 'read_image', 'glob', 'grep', 'str_replace_editor']);

/** Whether `name` is a file tool with a card of its own. */
export function isFileTool(name) {
  return FILE_TOOLS.has(name);
}

/** A string argument, or '' when it is missing or not a string. */
function str(value) {
  return typeof value === 'string' ? value : '';
}

/** A whole number, or null. */
function int(value) {
  return Number.isInteger(value) ? value : null;
}

/** `verb path`, without a trailing space when the path is missing. */
function titled(verb, path) {
  return path ? `${verb} ${path}` : verb;
}

/** The presentation of a call from its arguments (an object, or null when they do not parse). */
export function presentCall(name, args) {
  const a = args && typeof args === 'object' ? args : {};
  switch (name) {
    case 'read': {
      const offset = int(a.offset);
      const limit = int(a.limit);
      const from = offset ?? 1;
      let range = '';
      if (limit !== null && limit > 0) range = ` (${from} - ${from + limit - 1})`;
      else if (offset !== null) range = ` (from line ${offset})`;
      return { card: 'generic', title: titled('Read', str(a.file_path)) + range };
    }
    case 'write':
      return { card: 'diff', title: titled('Write', str(a.file_path)), diffs: [{ path: str(a.file_path), oldText: null, newText: str(a.content) }] };
    case 'edit':
      return {
        card: 'diff',
        title: titled('Edit', str(a.file_path)),
        diffs: [{ path: str(a.file_path), oldText: str(a.old_string) || null, newText: str(a.new_string) }],
      };
    case 'read_image':
      return { card: 'generic', title: titled('Read image', str(a.file_path)) };
    case 'glob':
      return { card: 'generic', title: searchTitle('Glob', a) };
    case 'grep':
      return { card: 'generic', title: searchTitle('Grep', a) };
    case 'str_replace_editor':
      return editorCall(a);
    default:
      return { card: 'generic', title: name };
  }
}

/** `Glob <pattern>[ in <path>]`, `Grep <pattern>[ in <path>][ (<include>)]`. */
function searchTitle(verb, a) {
  let title = titled(verb, str(a.pattern));
  if (str(a.path)) title += ` in ${a.path}`;
  if (verb === 'Grep' && str(a.include)) title += ` (${a.include})`;
  return title;
}

/** str_replace_editor's presentation, by command (it has no meta). */
function editorCall(a) {
  const path = str(a.path);
  switch (a.command) {
    case 'view':
      return { card: 'generic', title: titled('view', path) };
    case 'create':
      return { card: 'diff', title: titled('create', path), diffs: [{ path, oldText: null, newText: str(a.file_text) }] };
    case 'str_replace':
      return { card: 'diff', title: titled('str_replace', path), diffs: [{ path, oldText: str(a.old_str) || null, newText: str(a.new_str) }] };
    case 'insert':
      return { card: 'generic', title: titled('insert', path) };
    default:
      return { card: 'generic', title: titled('str_replace_editor', str(a.command)) };
  }
}

/**
 * The presentation of a successful result: from its `meta` where the tool has one of the
 * right shape, else from the call (a generic card shows the result text).
 */
export function presentResult(name, args, meta) {
  const call = presentCall(name, args);
  const m = meta && typeof meta === 'object' && !Array.isArray(meta) ? meta : null;
  switch (name) {
    case 'read':
      return readMeta(call.title, m) ?? call;
    case 'write':
    case 'edit': {
      const diffs = metaDiffs(m);
      return diffs.length ? { ...call, diffs } : call;
    }
    case 'glob':
      return pathsMeta(call.title, m) ?? call;
    case 'grep':
      return matchesMeta(call.title, m) ?? call;
    default:
      return call;
  }
}

/** read's meta `{path, offset, lines: [{number, text}], totalLines, lang?}`, checked; or null. */
function readMeta(title, m) {
  if (!m || !Array.isArray(m.lines)) return null;
  const offset = int(m.offset);
  const totalLines = int(m.totalLines);
  if (offset === null || offset < 1 || totalLines === null || totalLines < 0) return null;
  let previous = offset - 1;
  for (const line of m.lines) {
    const number = int(line?.number);
    if (number === null || number <= previous || number > totalLines || typeof line.text !== 'string') return null;
    previous = number;
  }
  const lang = typeof m.lang === 'string' && /^[a-z0-9]{1,16}$/.test(m.lang) ? m.lang : null;
  return { card: 'read', title, path: str(m.path), offset, lines: m.lines, totalLines, lang };
}

/** write's and edit's meta diffs `[{path, oldText: string | null, newText}]`, the valid ones. */
function metaDiffs(m) {
  if (!m || !Array.isArray(m.diffs)) return [];
  return m.diffs
    .filter((diff) => diff && typeof diff.newText === 'string' && (diff.oldText === null || typeof diff.oldText === 'string'))
    .map((diff) => ({ path: str(diff.path), oldText: diff.oldText, newText: diff.newText }));
}

/** A count from meta: a whole number ≥ 0, else `fallback`. */
function count(value, fallback) {
  return Number.isInteger(value) && value >= 0 ? value : fallback;
}

/** glob's meta `{shape: 'paths', paths, truncated, total}`, checked; or null. */
function pathsMeta(title, m) {
  if (!m || m.shape !== 'paths' || !Array.isArray(m.paths)) return null;
  const paths = m.paths.filter((path) => typeof path === 'string');
  return { card: 'paths', title, paths, truncated: m.truncated === true, total: count(m.total, paths.length) };
}

/** grep's meta `{shape: 'matches', files: [{path, matches: [{lineNumber, line}]}], …}`; or null. */
function matchesMeta(title, m) {
  if (!m || m.shape !== 'matches' || !Array.isArray(m.files)) return null;
  const files = m.files
    .filter((file) => file && typeof file.path === 'string' && Array.isArray(file.matches))
    .map((file) => ({
      path: file.path,
      matches: file.matches
        .filter((match) => match && typeof match.line === 'string')
        .map((match) => ({ lineNumber: int(match.lineNumber), line: match.line })),
    }));
  const shown = files.reduce((sum, file) => sum + file.matches.length, 0);
  return { card: 'matches', title, files, truncated: m.truncated === true, total: count(m.total, shown) };
}
