// Small DOM helpers: find an element by id, build elements (text only, never parsed as
// HTML), and set text only when it changed.

/** The element with this id. */
export function $(id) {
  return document.getElementById(id);
}

/**
 * Builds an element. `attrs` keys: `class`, `text` (textContent), `on<event>` (listener),
 * anything else becomes an attribute (true → empty attribute, false/null/undefined → none).
 * Children may be nodes or strings (added as text nodes, never parsed as HTML).
 */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === false || value === null || value === undefined) continue;
    if (key === 'class') el.className = value;
    else if (key === 'text') el.textContent = value;
    else if (key.startsWith('on') && typeof value === 'function') {
      el.addEventListener(key.slice(2), value);
    } else el.setAttribute(key, value === true ? '' : String(value));
  }
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    el.append(typeof child === 'string' ? document.createTextNode(child) : child);
  }
  return el;
}

/** Sets an element's text only when it changed (avoids needless style/layout work). */
export function setText(el, text) {
  if (el.textContent !== text) el.textContent = text;
}
