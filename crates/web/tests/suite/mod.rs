mod api;
mod runtime;
mod server;
