//! API errors: a status and `{"error": "<what failed and what to do>"}`.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};

/// A failed API call.
#[derive(Debug)]
pub(crate) struct ApiError {
    status: StatusCode,
    message: String,
}

impl ApiError {
    pub(crate) fn new(status: StatusCode, message: impl Into<String>) -> Self {
        Self {
            status,
            message: message.into(),
        }
    }

    pub(crate) fn not_found(message: impl Into<String>) -> Self {
        Self::new(StatusCode::NOT_FOUND, message)
    }

    pub(crate) fn bad_request(message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, message)
    }

    pub(crate) fn internal(message: impl Into<String>) -> Self {
        Self::new(StatusCode::INTERNAL_SERVER_ERROR, message)
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        crate::server::json_error(self.status, &self.message)
    }
}

/// A JSON body that failed to parse gives 400 (or 413) with the parser's reason.
pub(crate) fn rejection(rejection: &axum::extract::rejection::JsonRejection) -> ApiError {
    ApiError::new(rejection.status(), rejection.body_text())
}

/// An API path that names no route: `404` in JSON.
pub(crate) async fn no_route(uri: axum::http::Uri) -> ApiError {
    ApiError::not_found(format!("no API route {} (see docs/web-api.md)", uri.path()))
}

/// A route asked with the wrong method: `405` in JSON.
pub(crate) async fn wrong_method(method: axum::http::Method, uri: axum::http::Uri) -> ApiError {
    ApiError::new(
        StatusCode::METHOD_NOT_ALLOWED,
        format!(
            "{} does not take {method} (see docs/web-api.md)",
            uri.path()
        ),
    )
}
