mod replay;
mod retried;
