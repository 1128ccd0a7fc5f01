mod audit;
mod dispatch;
mod effects;
mod lifecycle;
mod support;
