// The per-launch token the API asks for. `dsh web` prints `http://…/#token=<hex>`: the
// fragment never reaches the server, so the page takes the token from it, keeps it in
// localStorage (scoped to scheme, host and port, so each server's page keeps its own) and
// removes it from the address bar. A page opened without one uses the stored token; a fresh
// one (from the fragment, or stored by another tab of this server) replaces it.

import { dropHashParam, hashParams } from './hash.js';

/** The localStorage key the token is kept under. */
const STORAGE_KEY = 'dsh-web-token';

/** The token in use, or null. */
let token = null;

/**
 * Start-up: takes the token from the fragment (else the stored one) and follows fresh ones
 * pasted into the fragment or stored by another tab, calling `onFresh()` for each. Returns
 * whether the page has a token.
 */
export function bindToken(onFresh) {
  token = readStored();
  adoptHashToken();
  window.addEventListener('hashchange', () => {
    if (adoptHashToken()) onFresh();
  });
  window.addEventListener('storage', (event) => {
    if (event.key !== STORAGE_KEY || !isToken(event.newValue) || event.newValue === token) return;
    token = event.newValue;
    onFresh();
  });
  return token !== null;
}

/** The token to send (the `x-dsh-token` header, or `token=` on an EventSource URL), or null. */
export function currentToken() {
  return token;
}

/**
 * Takes a `token=` out of the fragment (leaving `session=` and the rest), stores it and
 * uses it; returns whether it was a token other than the one in use.
 */
function adoptHashToken() {
  const fresh = hashParams().get('token');
  if (fresh === undefined) return false;
  dropHashParam('token');
  if (!isToken(fresh) || fresh === token) return false;
  token = fresh;
  try {
    localStorage.setItem(STORAGE_KEY, fresh);
  } catch (error) {
    console.warn('dsh: cannot store the token (it lasts until this page is closed):', error.message);
  }
  return true;
}

/** The stored token, or null (none, or storage unavailable). */
function readStored() {
  try {
    const stored = localStorage.getItem(STORAGE_KEY);
    return isToken(stored) ? stored : null;
  } catch {
    return null;
  }
}

/** Whether a value can be a token: visible ASCII only, so it fits an HTTP header. */
function isToken(value) {
  return typeof value === 'string' && /^[\x21-\x7e]{1,256}$/.test(value);
}
