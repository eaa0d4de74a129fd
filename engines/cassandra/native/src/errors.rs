//! Error classes: short, stable names derived from the driver's errors (documented in
//! docs/agent-protocol.md, "Error classes of the Rust core").

use scylla::errors::{DbError, ExecutionError, RequestAttemptError};

/// An op whose node had no free in-flight slot until its intended start + request timeout.
pub const NODE_BUSY: &str = "NodeBusy";

/// A workload file's read with `expect = "rows"` that found none (file_ops.NoRows).
pub const NO_ROWS: &str = "NoRows";

pub fn db_class(db: &DbError) -> &'static str {
    match db {
        DbError::ReadTimeout { .. } => "ReadTimeout",
        DbError::WriteTimeout { .. } => "WriteTimeout",
        DbError::ReadFailure { .. } => "ReadFailure",
        DbError::WriteFailure { .. } => "WriteFailure",
        DbError::Unavailable { .. } => "Unavailable",
        DbError::Overloaded => "Overloaded",
        DbError::IsBootstrapping => "IsBootstrapping",
        DbError::RateLimitReached { .. } => "RateLimitReached",
        DbError::Unprepared { .. } => "Unprepared",
        DbError::ServerError => "ServerError",
        DbError::ProtocolError => "ProtocolError",
        DbError::SyntaxError => "SyntaxError",
        DbError::Invalid => "Invalid",
        DbError::Unauthorized => "Unauthorized",
        DbError::AuthenticationError => "AuthenticationError",
        DbError::TruncateError => "TruncateError",
        DbError::FunctionFailure { .. } => "FunctionFailure",
        _ => "DbError",
    }
}

pub fn attempt_class(e: &RequestAttemptError) -> &'static str {
    match e {
        RequestAttemptError::DbError(db, _) => db_class(db),
        RequestAttemptError::BrokenConnectionError(_) => "ConnectionError",
        RequestAttemptError::UnableToAllocStreamId => "NoStreamId",
        RequestAttemptError::SerializationError(_)
        | RequestAttemptError::CqlRequestSerialization(_) => "SerializationError",
        _ => "ProtocolError",
    }
}

pub fn class(e: &ExecutionError) -> &'static str {
    match e {
        ExecutionError::RequestTimeout(_) => "RequestTimeout",
        ExecutionError::LastAttemptError(a) => attempt_class(a),
        ExecutionError::ConnectionPoolError(_) => "ConnectionError",
        ExecutionError::EmptyPlan => "NoHostAvailable",
        ExecutionError::BadQuery(_) => "BadQuery",
        ExecutionError::PrepareError(_) => "PrepareError",
        _ => "DriverError",
    }
}
