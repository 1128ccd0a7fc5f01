// The page's shared state: the session list, the titles seen, the open session and the
// work in flight.

/** State shared by the sidebar, the open session, the composer and session selection. */
export const app = {
  /** The last list from the server, newest first. */
  sessions: [],
  /** Whether a list has been loaded at least once. */
  sessionsLoaded: false,
  /** Session id → title seen in its events (newer than the list's). */
  titles: new Map(),
  /** The open session (a SessionView), or null. */
  view: null,
  /** The session being opened ({ id, promise }), or null. */
  opening: null,
  /** A send or create is in flight. */
  sending: false,
};

/** The title the last list gave session `id` (live sessions only), or null. */
export function listedTitle(id) {
  return app.sessions.find((session) => session.id === id)?.title ?? null;
}
