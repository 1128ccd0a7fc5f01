// The URL fragment as `name=value&name=value` parameters (`#session=<id>`, `#token=<hex>`):
// read without ever throwing (a malformed part is skipped), and one parameter dropped from
// the address bar without a navigation or a history entry.

/** The fragment's parameters as a Map (name → first value); malformed parts are skipped. */
export function hashParams() {
  const params = new Map();
  for (const part of location.hash.replace(/^#/, '').split('&')) {
    const at = part.indexOf('=');
    if (at <= 0) continue;
    const name = safeDecode(part.slice(0, at));
    const value = safeDecode(part.slice(at + 1));
    if (name === null || value === null || params.has(name)) continue;
    params.set(name, value);
  }
  return params;
}

/** Removes every `name=…` part from the fragment in place (history.replaceState, no hashchange). */
export function dropHashParam(name) {
  const parts = location.hash.replace(/^#/, '').split('&');
  const named = (part) => {
    const at = part.indexOf('=');
    return safeDecode(at < 0 ? part : part.slice(0, at)) === name;
  };
  if (!parts.some(named)) return;
  const kept = parts.filter((part) => part !== '' && !named(part));
  const hash = kept.length ? `#${kept.join('&')}` : '';
  history.replaceState(history.state, '', `${location.pathname}${location.search}${hash}`);
}

/** decodeURIComponent, or null for a malformed escape (`%`, `%zz`, a lone surrogate). */
function safeDecode(text) {
  try {
    return decodeURIComponent(text);
  } catch {
    return null;
  }
}
