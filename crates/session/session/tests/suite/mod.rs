mod event;
mod header;
mod invariant;
mod repair;
mod seed;
mod session;
mod store;
mod vocab;
