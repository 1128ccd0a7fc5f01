mod concurrency;
mod mutations;
mod resolution;
