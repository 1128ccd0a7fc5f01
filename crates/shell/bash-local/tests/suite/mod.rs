mod executor;
mod plugin;
mod support;
