mod boot;
mod dump;
mod launcher;
mod sessions;
mod support;
