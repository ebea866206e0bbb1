//! fio's engines whose I/O is a filesystem operation rather than a transfer of data:
//! the namespace engines, each I/O a create, stat or delete of a file or directory
//! (`namespace`, run by threads of their own, with no I/O engine), and `ftruncate` and
//! `falloc`, each request a system call on its file's range, made in the job's thread
//! (`range`). What each engine does is named in [`ioslice_fio::file_ops`].

pub(crate) mod namespace;
pub(crate) mod range;
