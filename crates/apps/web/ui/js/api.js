// The JSON API client: calls (with this launch's token) and their errors.

import { currentToken } from './token.js';
import { hideTokenBanner, showTokenBanner } from './token-banner.js';

/** An API failure: HTTP status (0 for a network error) and the server's message. */
export class ApiError extends Error {
  /** Creates the error from a status and a message. */
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

/**
 * Calls the JSON API. Same-origin fetch with the token in `x-dsh-token` (and, for POSTs,
 * the browser's Origin header). Throws ApiError; a 403 about the token also shows the banner.
 * Without a token nothing is sent: the banner already says why the page is not signed in.
 */
export async function api(method, path, body) {
  const init = { method, headers: { accept: 'application/json' } };
  const token = currentToken();
  if (!token) throw new ApiError(403, 'not signed in: open the URL dsh web printed');
  init.headers['x-dsh-token'] = token;
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
