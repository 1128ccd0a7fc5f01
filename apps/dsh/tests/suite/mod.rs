mod boot;
mod dump;
mod launcher;
mod sessions;
mod sessions_sqlite;
mod support;
mod tools;
