mod api;
mod connections;
mod raw;
mod runtime;
mod server;
