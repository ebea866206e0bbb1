//! fio job-file parser (being written).
