// Readable text for values: numbers, relative times, session ids and message content.

const numberFormat = new Intl.NumberFormat('en-US');
const relativeFormat = new Intl.RelativeTimeFormat('en', { numeric: 'auto' });

/** A count with thousands separators ("12,345"). */
export function formatNumber(value) {
  return numberFormat.format(value);
}

/** A session id without its `session-` prefix, cut to 8 characters. */
export function shortId(id) {
  return String(id).replace(/^session-/, '').slice(0, 8);
}

/** "5 minutes ago" style time for a millisecond timestamp. */
export function relativeTime(ms) {
  if (typeof ms !== 'number' || !Number.isFinite(ms)) return '';
  const seconds = Math.round((ms - Date.now()) / 1000);
  const units = [['year', 31536000], ['month', 2592000], ['day', 86400], ['hour', 3600], ['minute', 60]];
  for (const [unit, size] of units) {
    if (Math.abs(seconds) >= size) return relativeFormat.format(Math.round(seconds / size), unit);
  }
  return relativeFormat.format(seconds, 'second');
}

/** The text blocks of a message's content, joined; other blocks become a short tag. */
export function messageText(content) {
  if (!Array.isArray(content)) return typeof content === 'string' ? content : '';
  return content
    .map((block) => {
      if (!block || typeof block !== 'object') return '';
      if (block.type === 'text') return String(block.text ?? '');
      if (block.type === 'image') return '[image]';
      return '';
    })
    .filter((text) => text !== '')
    .join('\n');
}
