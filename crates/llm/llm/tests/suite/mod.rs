mod assembler;
mod registry;
mod retry;
mod stream;
mod support;
