// The one-time login code (`#login=<code>`): what `dsh web` hands the browser it opens, in
// place of the token, since any local process can read an opener's command line. It is
// good once, for a minute; the page trades it at POST /api/login for the token.

/** Trades a login code for the token: resolves to `{ token }`, or `{ error }` saying why not. */
export async function tradeLoginCode(code) {
  let response;
  try {
    response = await fetch('/api/login', {
      method: 'POST',
      headers: { accept: 'application/json', 'content-type': 'application/json' },
      body: JSON.stringify({ code }),
    });
  } catch (error) {
    return { error: `cannot reach dsh web to sign in (${error.message})` };
  }
  let data = null;
  try {
    data = await response.json();
  } catch {
    data = null;
  }
  if (response.ok && typeof data?.token === 'string') return { token: data.token };
  const reason = typeof data?.error === 'string' && data.error;
  return { error: reason || `signing in failed: ${response.status} ${response.statusText}` };
}
