//! fio output formats (being written).
