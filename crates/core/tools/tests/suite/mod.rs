mod batch;
mod dispatch;
mod policy;
mod post;
mod registry;
mod result_event;
mod support;
mod user_approval;
