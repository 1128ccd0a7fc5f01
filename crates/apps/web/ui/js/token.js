// The per-launch token the API asks for. `dsh web` prints `http://…/#token=<hex>`: the
// fragment never reaches the server, so the page takes the token from it, keeps it in
// localStorage (scoped to scheme, host and port, so each server's page keeps its own) and
// removes it from the address bar. The browser `dsh web` opens gets `#login=<code>`
// instead: a one-time code, taken out of the address bar at once and traded for the token
// (js/login.js). A page opened without either uses the stored token; a fresh one (from the
// fragment, a login code, or stored by another tab of this server) replaces it.

import { dropHashParam, hashParams } from './hash.js';
import { tradeLoginCode } from './login.js';
import { showTokenBanner } from './token-banner.js';

/** The localStorage key the token is kept under. */
const STORAGE_KEY = 'dsh-web-token';

/** The token in use, or null. */
let token = null;

/**
 * Start-up: takes the token from the fragment or trades a login code for it (else uses the
 * stored one), and follows fresh ones pasted into the fragment or stored by another tab,
 * calling `onFresh()` for each. Resolves to null when the page has a token, else to why not
 * (for the banner).
 */
export async function bindToken(onFresh) {
  token = readStored();
  adoptHashToken();
  const refused = await adoptLoginCode();
  window.addEventListener('hashchange', async () => {
    const fresh = adoptHashToken();
    const login = await adoptLoginCode();
    if (fresh || login === true) onFresh();
    else if (typeof login === 'string') showTokenBanner(login);
  });
  window.addEventListener('storage', (event) => {
    if (event.key !== STORAGE_KEY || !isToken(event.newValue) || event.newValue === token) return;
    token = event.newValue;
    onFresh();
  });
  if (typeof refused === 'string' && token === null) return refused;
  return token === null ? 'no token: this page was opened without the URL dsh web printed' : null;
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
  return adopt(fresh);
}

/**
 * Takes a `login=` out of the fragment and trades it for the token. Resolves to true when
 * that gave a token other than the one in use, to the server's reason when the code was
 * refused, and to false when there was no code.
 */
async function adoptLoginCode() {
  const code = hashParams().get('login');
  if (code === undefined) return false;
  // Out of the address bar (and so of history) before anything else happens.
  dropHashParam('login');
  const traded = await tradeLoginCode(code);
  if (traded.error !== undefined) return traded.error;
  return adopt(traded.token);
}

/** Stores and uses `fresh`; returns whether it was a token other than the one in use. */
function adopt(fresh) {
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
