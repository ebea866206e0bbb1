//! NCQ detection (the kernel's `hw_tag`): whether the device takes several commands at once.
//!
//! At each completion CFQ notes the deepest the device queue has been. It takes a sample only
//! when there is enough work to tell — more than 5 requests queued or at the device, and not
//! while the active queue idles with too few requests to fill the device — and after 50 samples
//! decides: queueing if the depth ever reached 5. Until it has decided it assumes queueing, as
//! the kernel's initial `-1` does; once it has seen queueing it stops looking.

/// The depth that shows command queueing (`CFQ_HW_QUEUE_MIN`).
pub(super) const HW_QUEUE_MIN: usize = 5;
/// Samples taken before deciding.
const SAMPLES_NEEDED: u32 = 50;

/// What CFQ has learnt about the device's command queueing.
#[derive(Debug, Clone, Default)]
pub(super) struct HwTag {
    /// `None` until decided.
    detected: Option<bool>,
    /// Deepest device queue seen.
    estimated_depth: usize,
    /// Samples taken.
    samples: u32,
}

impl HwTag {
    /// Whether the device is taken to queue commands (yes until shown otherwise).
    pub(super) fn present(&self) -> bool {
        self.detected != Some(false)
    }

    /// A completion with `in_driver` requests at the device (this one included) and `queued`
    /// waiting. `active_too_shallow`: the active queue idles with fewer than 5 requests of its
    /// own and the device holds fewer than 5, so the depth says nothing about the device.
    pub(super) fn sample(&mut self, in_driver: usize, queued: usize, active_too_shallow: bool) {
        self.estimated_depth = self.estimated_depth.max(in_driver);
        if self.detected == Some(true) {
            return;
        }
        if queued <= HW_QUEUE_MIN && in_driver <= HW_QUEUE_MIN {
            return;
        }
        if active_too_shallow {
            return;
        }
        let taken = self.samples;
        self.samples = self.samples.saturating_add(1);
        if taken < SAMPLES_NEEDED {
            return;
        }
        self.detected = Some(self.estimated_depth >= HW_QUEUE_MIN);
    }
}

impl super::Cfq {
    /// Sample the device queue depth at a completion (before it is counted out).
    pub(super) fn sample_hw_tag(&mut self) {
        let in_driver = self.device.in_driver;
        let active_too_shallow = self.active.is_some_and(|active| {
            let q = &self.queues[active];
            q.idle_window && q.dispatched + q.queued() < HW_QUEUE_MIN && in_driver < HW_QUEUE_MIN
        });
        self.hw_tag
            .sample(in_driver, self.slab.len(), active_too_shallow);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deep_device_detected_after_fifty_samples() {
        let mut tag = HwTag::default();
        assert!(tag.present(), "assumed until decided");
        for _ in 0..50 {
            tag.sample(8, 20, false);
        }
        assert_eq!(tag.detected, None, "the 51st sample decides");
        tag.sample(8, 20, false);
        assert_eq!(tag.detected, Some(true));
    }

    #[test]
    fn shallow_device_detected_and_uninformative_samples_skipped() {
        let mut tag = HwTag::default();
        for _ in 0..100 {
            tag.sample(1, 3, false);
            tag.sample(1, 9, true);
        }
        assert_eq!(
            tag.detected, None,
            "too little work, or the active queue too shallow"
        );
        for _ in 0..51 {
            tag.sample(1, 9, false);
        }
        assert!(!tag.present());
    }
}
