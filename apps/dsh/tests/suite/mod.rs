mod boot;
mod dump;
pub mod headless;
mod launcher;
mod sessions;
mod sessions_sqlite;
mod support;
mod tools;
mod web;
