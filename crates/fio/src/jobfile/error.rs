//! What can go wrong reading a job file. Every message is one line that names the file
//! (and the line, when there is one) and says what was expected.

use crate::job::Origin;

/// A job file that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum JobFileError {
    /// The file (or an included file) could not be read.
    #[error("{file}: cannot read: {reason}")]
    Read {
        /// The path as given.
        file: String,
        /// The operating system's reason.
        reason: String,
    },
    /// A line that is neither a section header, an option, a comment nor an include.
    #[error("{}:{}: expected '[section]' or 'option=value', found '{found}'", .origin.file, .origin.line)]
    Syntax {
        /// Where.
        origin: Origin,
        /// The offending line, trimmed.
        found: String,
    },
    /// An option outside any section.
    #[error("{}:{}: option '{option}' is outside any section: expected a '[job]' or '[global]' line before it", .origin.file, .origin.line)]
    OutsideSection {
        /// Where.
        origin: Origin,
        /// The option's name.
        option: String,
    },
    /// An option value that does not parse.
    #[error("{}:{}: invalid value '{value}' for {option}: expected {expected}", .origin.file, .origin.line)]
    InvalidValue {
        /// Where.
        origin: Origin,
        /// The option's name as written.
        option: String,
        /// The value as written (after variable expansion).
        value: String,
        /// What would have been accepted.
        expected: String,
    },
    /// A name fio itself does not know (a misspelling, as fio calls it a bad option).
    #[error("{}:{}: bad option <{written}>: expected an option fio knows{suggestion}", .origin.file, .origin.line)]
    BadOption {
        /// Where.
        origin: Origin,
        /// The entry as written, `name=value` or a bare name.
        written: String,
        /// `; did you mean NAME?`, or empty.
        suggestion: String,
    },
    /// An option ioslice does not know, in strict mode.
    #[error("{}:{}: option '{option}' is not supported by ioslice: expected a supported fio option (see the option table)", .origin.file, .origin.line)]
    UnknownOption {
        /// Where.
        origin: Origin,
        /// The option's name.
        option: String,
    },
    /// `${NAME}` with NAME not in the environment given to the parser.
    #[error("{}:{}: environment variable '{name}' is not defined: expected it to be set for '${{{name}}}'", .origin.file, .origin.line)]
    UndefinedVariable {
        /// Where.
        origin: Origin,
        /// The variable's name.
        name: String,
    },
    /// An included file could not be read.
    #[error("{}:{}: cannot read included file '{file}': {reason}", .origin.file, .origin.line)]
    Include {
        /// Where the include line is.
        origin: Origin,
        /// The included path, resolved against the including file's directory.
        file: String,
        /// The operating system's reason.
        reason: String,
    },
    /// Includes nested too deeply (most likely a cycle).
    #[error("{}:{}: include of '{file}' nested more than {limit} deep: expected no include cycle", .origin.file, .origin.line)]
    IncludeDepth {
        /// Where the include that went too deep is.
        origin: Origin,
        /// The file it named.
        file: String,
        /// The depth limit.
        limit: usize,
    },
    /// The file defines no job.
    #[error("{file}: no jobs defined: expected at least one '[name]' section other than [global]")]
    NoJobs {
        /// The path as given.
        file: String,
    },
    /// Options that each parse but cannot be used together (as fio refuses them).
    #[error("{}:{}: {what}", .origin.file, .origin.line)]
    Conflict {
        /// Where the option that cannot stand is.
        origin: Origin,
        /// What conflicts and what is expected instead.
        what: String,
    },
    /// The job parses but ioslice cannot run it ([`super::check_supported`]).
    #[error("{}:{}: {what}", .origin.file, .origin.line)]
    Unsupported {
        /// Where the offending option (or job) is.
        origin: Origin,
        /// What is unsupported and what is expected instead.
        what: String,
    },
}

impl JobFileError {
    /// Where the problem is, when it has a line.
    pub fn origin(&self) -> Option<&Origin> {
        match self {
            Self::Syntax { origin, .. }
            | Self::OutsideSection { origin, .. }
            | Self::InvalidValue { origin, .. }
            | Self::UnknownOption { origin, .. }
            | Self::BadOption { origin, .. }
            | Self::UndefinedVariable { origin, .. }
            | Self::IncludeDepth { origin, .. }
            | Self::Include { origin, .. }
            | Self::Conflict { origin, .. }
            | Self::Unsupported { origin, .. } => Some(origin),
            Self::Read { .. } | Self::NoJobs { .. } => None,
        }
    }
}
