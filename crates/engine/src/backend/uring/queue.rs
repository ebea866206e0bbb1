//! A ring's submissions and completions: operations queued in order until the ring has room,
//! each put in the submission queue as a read, write or vectored operation whose buffers and
//! iovecs stay in a slot until its completion arrives; the entries handed to the kernel; the
//! completions taken back, the wake-up poll re-armed; and a ring dropped only once the kernel
//! is done with every buffer.
//!
//! Touched under the engine's lock by whichever thread runs a turn (and by the thread that
//! drops the backend).

use std::fs::File;
use std::io::{self, Read};

use io_uring::{opcode, squeue};
use ioslice_core::Direction;

use super::ring::{cq, enter, is_transient, sq, InFlight, IoVecs, Ring, WAKE};
use crate::backend::{IoDone, IoOp};

impl Ring {
    /// Hand queued operations to the submission queue, up to the in-kernel cap. Operations
    /// the kernel must not see finish at once, into `ready` under `lane`.
    pub(super) fn fill_sq(&mut self, file: &File, lane: usize, ready: &mut Vec<(usize, IoDone)>) {
        while self.submitted < self.cap {
            let Some(op) = self.pending.pop_front() else {
                break;
            };
            if op.buffers.is_empty() {
                let done = IoDone {
                    token: op.token,
                    result: Ok(0),
                    buffers: op.buffers,
                };
                ready.push((lane, done));
                continue;
            }
            // The kernel reads an offset of -1 as "the file position": refuse what is not a
            // valid file offset instead.
            if op.offset > i64::MAX as u64 || op.buffers.len() > u32::MAX as usize {
                let done = IoDone {
                    token: op.token,
                    result: Err(io::Error::from_raw_os_error(libc::EINVAL)),
                    buffers: op.buffers,
                };
                ready.push((lane, done));
                continue;
            }
            if op.direction == Direction::Discard {
                // Done here, synchronously, as fio does trims under io_uring.
                let len = op.buffers.iter().map(|b| b.len()).sum();
                let done = IoDone {
                    token: op.token,
                    result: super::super::discard::discard(file, op.offset, len),
                    buffers: op.buffers,
                };
                ready.push((lane, done));
                continue;
            }
            if !self.put_in_sq(file, op) {
                break;
            }
        }
    }

    /// Put one operation in a slot and its entry in the submission queue; `false` if it had
    /// to be queued again (the submission queue is full).
    pub(super) fn put_in_sq(&mut self, file: &File, op: IoOp) -> bool {
        let index = match self.free.pop() {
            Some(index) => index,
            None => {
                self.slots.push(None);
                self.slots.len() - 1
            }
        };
        let (fd, fd_flags) = self.file_target(file);
        let IoOp {
            token,
            direction,
            offset,
            mut buffers,
            lane,
        } = op;
        let mut iovecs = Vec::new();
        let entry: squeue::Entry = match (buffers.as_mut_slice(), direction) {
            ([one], Direction::Read) if one.len() <= u32::MAX as usize => {
                let len = one.len() as u32;
                opcode::Read::new(fd, one.as_mut_slice().as_mut_ptr(), len)
                    .offset(offset)
                    .build()
            }
            ([one], Direction::Write) if one.len() <= u32::MAX as usize => {
                let len = one.len() as u32;
                opcode::Write::new(fd, one.as_slice().as_ptr(), len)
                    .offset(offset)
                    .build()
            }
            (many, direction) => {
                iovecs = many
                    .iter_mut()
                    .map(|buffer| libc::iovec {
                        iov_base: buffer.as_mut_slice().as_mut_ptr().cast(),
                        iov_len: buffer.len(),
                    })
                    .collect();
                // Checked by the caller: fits in u32.
                let count = iovecs.len() as u32;
                match direction {
                    Direction::Read => opcode::Readv::new(fd, iovecs.as_ptr(), count)
                        .offset(offset)
                        .build(),
                    Direction::Write => opcode::Writev::new(fd, iovecs.as_ptr(), count)
                        .offset(offset)
                        .build(),
                    // `fill_sq` does discards itself and never brings one here.
                    Direction::Discard => opcode::Nop::new().build(),
                }
            }
        }
        .flags(fd_flags)
        .user_data(index as u64);
        // Moving `buffers` and `iovecs` into the slot moves only the `Vec` headers; the
        // heap memory the entry points at stays where it is.
        self.slots[index] = Some(InFlight {
            token,
            buffers,
            _iovecs: IoVecs { _storage: iovecs },
        });
        self.submitted += 1;
        // SAFETY: every address in `entry` (the buffer, or the iovec array and the buffers
        // it names) points into heap memory owned by `self.slots[index]`, which is neither
        // dropped nor modified until this entry's CQE is reaped (`reap_cq`), or until `Drop`
        // has waited for it. The file descriptor is kept open by the backend's `file`, and
        // the backend drops its rings (which wait for their operations) before the file.
        if unsafe { sq(&self.ring).push(&entry) }.is_ok() {
            self.unsubmitted += 1;
            return true;
        }
        // Cannot happen (see `cap`), but never drop an operation: submit and retry.
        let retried = self.ring.submit().is_ok()
            // SAFETY: as above, the same entry and the same owned memory.
            && unsafe { sq(&self.ring).push(&entry) }.is_ok();
        if retried {
            self.unsubmitted = 1;
            return true;
        }
        // Take the operation back and try again at the next submission.
        if let Some(inflight) = self.slots[index].take() {
            self.submitted -= 1;
            self.free.push(index);
            self.pending.push_front(IoOp {
                token: inflight.token,
                direction,
                offset,
                buffers: inflight.buffers,
                lane,
            });
        }
        false
    }

    /// Hand the kernel every entry queued since the last submission (one system call).
    pub(super) fn submit(&mut self) -> io::Result<()> {
        self.arm_wake();
        if self.unsubmitted == 0 {
            return Ok(());
        }
        enter(&self.ring)?;
        self.unsubmitted = 0;
        Ok(())
    }

    /// Move completions from the completion queue to `done`; returns whether the wake-up
    /// poll fired (in which case the eventfd has been drained and the poll must be re-armed).
    pub(super) fn reap_cq(&mut self, done: &mut Vec<IoDone>) -> bool {
        let mut woke = false;
        for cqe in cq(&self.ring) {
            let user_data = cqe.user_data();
            if user_data == WAKE {
                woke = true;
                self.wake_armed = false;
                continue;
            }
            let Some(inflight) = self
                .slots
                .get_mut(user_data as usize)
                .and_then(Option::take)
            else {
                continue; // the start-up no-op, or nothing we know: ignore
            };
            self.submitted -= 1;
            self.free.push(user_data as usize);
            let res = cqe.result();
            done.push(IoDone {
                token: inflight.token,
                result: if res >= 0 {
                    Ok(res as usize)
                } else {
                    Err(io::Error::from_raw_os_error(-res))
                },
                buffers: inflight.buffers,
            });
        }
        if woke {
            let mut counter = [0u8; 8];
            // Resets the counter; `WouldBlock` just means it was already drained.
            let _ = (&*self.eventfd).read(&mut counter);
        }
        woke
    }
}

impl Drop for Ring {
    /// Waits for every operation in the kernel before the buffers are freed: the kernel may
    /// still be writing into them (closing the ring does not wait for block I/O). If the ring
    /// fails while draining, the remaining buffers are leaked rather than freed under the
    /// kernel's feet.
    fn drop(&mut self) {
        self.pending.clear();
        let mut scratch = Vec::new();
        while self.submitted > 0 {
            match self.ring.submit_and_wait(1) {
                Ok(_) => {}
                Err(e) if is_transient(&e) => {}
                Err(_) => {
                    for slot in self.slots.drain(..) {
                        std::mem::forget(slot);
                    }
                    return;
                }
            }
            self.reap_cq(&mut scratch);
            scratch.clear();
        }
    }
}
