mod bash;
mod jobs;
mod pipeline;
mod support;
