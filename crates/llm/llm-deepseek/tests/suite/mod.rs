mod common;
mod errors;
mod request;
mod retry;
mod sse_props;
mod streams;
mod timeouts;
