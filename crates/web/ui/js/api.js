// The JSON API client: calls, their errors, and the banner shown when the page lacks this
// launch's token.

import { $, h } from './dom.js';

/** An API failure: HTTP status (0 for a network error) and the server's message. */
export class ApiError extends Error {
  /** Creates the error from a status and a message. */
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

/**
 * Calls the JSON API. Same-origin fetch: the token cookie and (for POSTs) the Origin header
 * ride along. Throws ApiError; a 403 about the token also shows the banner.
 */
export async function api(method, path, body) {
  const init = { method, headers: { accept: 'application/json' } };
  if (body !== undefined) {
    init.headers['content-type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  let response;
  try {
    response = await fetch(path, init);
  } catch (error) {
    throw new ApiError(0, `cannot reach dsh web (${error.message})`);
  }
  const raw = await response.text();
  let data = null;
  try {
    data = raw ? JSON.parse(raw) : null;
  } catch {
    data = null;
  }
  if (!response.ok) {
    const message = (data && typeof data.error === 'string' && data.error) || `${response.status} ${response.statusText}`;
    if (response.status === 403 && /token/i.test(message)) showTokenBanner(message);
    throw new ApiError(response.status, message);
  }
  hideTokenBanner();
  return data;
}

/** Shows the banner telling the user to open the URL `dsh web` printed. */
function showTokenBanner(detail) {
  const banner = $('banner');
  banner.replaceChildren(
    h('strong', { text: 'This page is not signed in to this dsh web launch. ' }),
    'Open the URL that ',
    h('code', { text: 'dsh web' }),
    ' printed in your terminal: it carries this launch\u2019s token. ',
    h('span', { class: 'banner-detail', text: `(${detail})` }),
  );
  banner.hidden = false;
}

/** Hides the token banner once a call succeeds. */
function hideTokenBanner() {
  $('banner').hidden = true;
}
