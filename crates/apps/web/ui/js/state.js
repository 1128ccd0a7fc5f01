// The page's shared state: the session list, the open session and the work in flight.

/** State shared by the sidebar, the open session, the composer and session selection. */
export const app = {
  /** The last list from the server, newest first (a session's title is patched in on session/title). */
  sessions: [],
  /** Whether a list has been loaded at least once. */
  sessionsLoaded: false,
  /** The open session (a SessionView), or null. */
  view: null,
  /** The session being opened ({ id, promise }), or null. */
  opening: null,
  /** A send or create is in flight. */
  sending: false,
};
