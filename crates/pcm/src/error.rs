//! The PCM layer's one error enum. Every message names the offending key, argument or address.

use thiserror::Error;

/// Everything that can go wrong in `nandlab-pcm`: bad configuration, bad arguments, an
/// exhausted bound.
#[derive(Debug, Error, Clone, PartialEq)]
#[non_exhaustive]
pub enum PcmError {
    /// A configuration value is missing, out of range or inconsistent with another.
    #[error("invalid config key `{key}`: {message}")]
    Config {
        /// The TOML key, dotted (`timing.read_line_ns`).
        key: String,
        /// What is wrong with it.
        message: String,
    },

    /// A preset name that is not built in.
    #[error("unknown PCM preset `{name}` (known: {known})")]
    UnknownPreset {
        /// The name asked for.
        name: String,
        /// The built-in names, comma-separated.
        known: String,
    },

    /// TOML that does not parse into a PCM config.
    #[error("cannot parse PCM config `{origin}`: {message}")]
    Parse {
        /// The preset name or file the text came from.
        origin: String,
        /// The parser's message with the line.
        message: String,
    },

    /// An argument of an API call is invalid (an access beyond the device, an empty page, …).
    #[error("invalid argument `{argument}`: {message}")]
    Argument {
        /// The argument's name.
        argument: &'static str,
        /// What is wrong with it.
        message: String,
    },

    /// A request submitted at a time before the device's current time.
    #[error("request submitted at {submitted} but the PCM device is already at {now}")]
    TimeWentBack {
        /// The submission time given (display form).
        submitted: String,
        /// The device's time (display form).
        now: String,
    },

    /// A bounded table or queue is full.
    #[error("capacity exceeded: {what} (limit {limit})")]
    Capacity {
        /// What filled up.
        what: &'static str,
        /// Its bound.
        limit: u64,
    },
}

/// Result with a [`PcmError`].
pub type PcmResult<T> = Result<T, PcmError>;

pub(crate) fn config_error(key: impl Into<String>, message: impl Into<String>) -> PcmError {
    PcmError::Config {
        key: key.into(),
        message: message.into(),
    }
}

pub(crate) fn argument_error(argument: &'static str, message: impl Into<String>) -> PcmError {
    PcmError::Argument {
        argument,
        message: message.into(),
    }
}
