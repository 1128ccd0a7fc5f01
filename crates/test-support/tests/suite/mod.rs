mod client;
mod fake_deepseek;
