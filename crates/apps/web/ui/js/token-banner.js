// The banner shown when the page has no token for this `dsh web` launch, or the server
// refused the one it has: it points to the URL `dsh web` printed.

import { $, h } from './dom.js';

/** Shows the banner telling the user to open the URL `dsh web` printed; `detail` says why. */
export function showTokenBanner(detail) {
  const banner = $('banner');
  banner.replaceChildren(
    h('strong', { text: 'This page is not signed in to this dsh web launch. ' }),
    'Open the URL that ',
    h('code', { text: 'dsh web' }),
    ' printed in your terminal (it ends in ',
    h('code', { text: '#token=\u2026' }),
    '). Each launch prints a new token, so a URL from an earlier launch no longer works. ',
    h('span', { class: 'banner-detail', text: `(${detail})` }),
  );
  banner.hidden = false;
}

/** Hides the banner (a call went through). */
export function hideTokenBanner() {
  $('banner').hidden = true;
}
