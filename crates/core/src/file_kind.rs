//! What a kind of file is called in error messages (`directory`, `character device`, …),
//! shared by the job-file reader and the engine's device checks.

use std::os::unix::fs::FileTypeExt;

/// The name of `file_type`, without an article.
pub fn kind_name(file_type: &std::fs::FileType) -> &'static str {
    if file_type.is_file() {
        "regular file"
    } else if file_type.is_block_device() {
        "block device"
    } else if file_type.is_dir() {
        "directory"
    } else if file_type.is_char_device() {
        "character device"
    } else if file_type.is_fifo() {
        "FIFO"
    } else if file_type.is_socket() {
        "socket"
    } else {
        "special file"
    }
}
