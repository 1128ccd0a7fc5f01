mod replay;
mod retried;
mod stored;
