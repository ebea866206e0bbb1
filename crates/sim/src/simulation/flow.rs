//! fio's flow control between jobs (`flow_id`, `flow`, `flow_sleep`) in virtual time: the
//! run's [`FlowGroups`] say when a job is held back before an I/O; this module holds it and
//! wakes it. With `flow_sleep` the held job waits for its requests in flight, then sleeps that
//! long and asks again (fio's `io_u_quiesce` and `usleep`); without it fio spins, asking again
//! at once, which here means waking when another job of its group issues an I/O or leaves.
//! Runs whose jobs have no `flow` weight never reach past an empty map.

use std::collections::BTreeMap;

use ioslice_core::Nanos;
use ioslice_fio::flow::{FlowGroups, FlowMember};

use super::{Event, Simulation};

/// The run's flow groups and the place in them of each process that has one.
#[derive(Default)]
pub(super) struct Flows {
    groups: FlowGroups,
    /// By process index.
    members: BTreeMap<u32, Member>,
}

struct Member {
    place: FlowMember,
    /// `flow_sleep`.
    sleep: Nanos,
    hold: Hold,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Hold {
    /// Free to ask.
    Free,
    /// Held, waiting for its requests in flight before it sleeps.
    Quiesce,
    /// Held, asleep until then.
    Sleep(Nanos),
    /// Held, asking again when its group moves.
    Spin,
}

impl Simulation<'_> {
    /// A process starts: it joins its job's flow group, if its job has a `flow` weight.
    pub(super) fn flow_join(&mut self, index: u32) {
        let spec = &self.job_file.jobs[self.processes[index as usize].spec_index];
        if let Some(place) = self.flows.groups.join(spec.flow_id, spec.flow) {
            let member = Member {
                place,
                sleep: spec.flow_sleep,
                hold: Hold::Free,
            };
            self.flows.members.insert(index, member);
        }
    }

    /// Whether the process must not issue now (fio's `flow_threshold_exceeded`).
    pub(super) fn flow_holds(&mut self, index: u32) -> bool {
        if self.stopping || self.flows.members.is_empty() {
            return false;
        }
        let now = self.now;
        let in_flight = self.processes[index as usize]
            .clock
            .as_ref()
            .map_or(0, |clock| clock.in_flight());
        let Some(member) = self.flows.members.get_mut(&index) else {
            return false;
        };
        let asleep_until = loop {
            match member.hold {
                Hold::Sleep(until) if now < until => return true,
                Hold::Quiesce if in_flight > 0 => return true,
                Hold::Quiesce => {
                    let until = now + member.sleep;
                    member.hold = Hold::Sleep(until);
                    break until;
                }
                _ => member.hold = Hold::Free,
            }
            if !self.flows.groups.holds_back(&member.place) {
                return false;
            }
            member.hold = if member.sleep == 0 {
                Hold::Spin
            } else {
                Hold::Quiesce
            };
            if member.hold == Hold::Spin {
                return true;
            }
        };
        self.wake(index, asleep_until);
        true
    }

    /// The process issues an I/O: its group counts it, and the group's spinning jobs ask again.
    pub(super) fn flow_issued(&mut self, index: u32) {
        let Some(member) = self.flows.members.get_mut(&index) else {
            return;
        };
        self.flows.groups.issue(&mut member.place);
        let id = member.place.id;
        self.wake_spinners(id);
    }

    /// The process ends: it leaves its group, whose spinning jobs ask again.
    pub(super) fn flow_leave(&mut self, index: u32) {
        if let Some(member) = self.flows.members.remove(&index) {
            self.flows.groups.leave(&member.place);
            self.wake_spinners(member.place.id);
        }
    }

    fn wake_spinners(&mut self, id: u32) {
        let spinners: Vec<u32> = self
            .flows
            .members
            .iter_mut()
            .filter(|(_, m)| m.place.id == id && m.hold == Hold::Spin)
            .map(|(&index, m)| {
                m.hold = Hold::Free;
                index
            })
            .collect();
        let now = self.now;
        for index in spinners {
            self.wake(index, now);
        }
    }

    /// The process's next wake-up is `at` (an earlier one finds nothing to do).
    fn wake(&mut self, index: u32, at: Nanos) {
        self.processes[index as usize].wake_at = Some(at);
        self.push_event(at, Event::Wake(index));
    }
}
