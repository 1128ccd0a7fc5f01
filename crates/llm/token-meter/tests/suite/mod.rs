mod batches;
mod plugin;
mod realistic;
