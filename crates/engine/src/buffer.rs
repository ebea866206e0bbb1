//! Buffers aligned for O_DIRECT: the start address and the length are multiples of the
//! device's logical block size. Built on a plain `Vec<u8>` over-allocated by one alignment and
//! used from the first aligned byte, so no unsafe code is needed.

/// An owned, aligned byte buffer.
#[derive(Debug)]
pub struct AlignedBuffer {
    storage: Vec<u8>,
    offset: usize,
    len: usize,
}

impl AlignedBuffer {
    /// A zeroed buffer of `len` bytes whose first byte is aligned to `align` (a power of two).
    ///
    /// # Panics
    /// If `align` is not a power of two.
    pub fn new(len: usize, align: usize) -> Self {
        assert!(
            align.is_power_of_two(),
            "alignment {align} is not a power of two"
        );
        let storage = vec![0u8; len + align];
        let offset = storage.as_ptr().align_offset(align);
        Self {
            storage,
            offset,
            len,
        }
    }

    /// A buffer of no bytes, without an allocation (a placeholder for one that moved out).
    pub fn empty() -> Self {
        Self {
            storage: Vec::new(),
            offset: 0,
            len: 0,
        }
    }

    /// The buffer's bytes.
    pub fn as_slice(&self) -> &[u8] {
        &self.storage[self.offset..self.offset + self.len]
    }

    /// The buffer's bytes, to fill.
    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        &mut self.storage[self.offset..self.offset + self.len]
    }

    /// Its length in bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether it holds no bytes.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aligned_start_and_exact_length() {
        for align in [512, 4096] {
            let mut buffer = AlignedBuffer::new(8192, align);
            assert_eq!(buffer.as_slice().as_ptr() as usize % align, 0);
            assert_eq!(buffer.len(), 8192);
            buffer.as_mut_slice()[8191] = 7;
            assert_eq!(buffer.as_slice()[8191], 7);
        }
    }

    #[test]
    fn an_empty_buffer_has_no_bytes() {
        let buffer = AlignedBuffer::empty();
        assert!(buffer.is_empty());
        assert_eq!(buffer.as_slice(), &[] as &[u8]);
    }
}
