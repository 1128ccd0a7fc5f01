mod api;
mod server;
