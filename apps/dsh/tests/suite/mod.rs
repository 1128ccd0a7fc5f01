mod boot;
mod dump;
mod launcher;
mod support;
