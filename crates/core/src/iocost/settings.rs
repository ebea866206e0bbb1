//! iocost's settings as a run is given them: the `io.cost.model` and `io.cost.qos` keys
//! set by hand, each over the kernel's automatic parameters for the kind of device
//! (`autop` in `block/blk-iocost.c`, 5.4 to 6.x: a rotational disk gets `AUTOP_HDD`, a
//! non-rotational one of queue depth 1 `AUTOP_SSD_QD1`, any other `AUTOP_SSD_DFL`). The
//! kernel's switch to `AUTOP_SSD_FAST` after a long run of high vrate is not modelled, so
//! the kernel's `ctrl=auto|user` would change nothing here and is not a setting.

use super::model::LinearParams;
use super::qos::Qos;

/// The `io.cost.model` keys (`rbps`, `rseqiops`, `rrandiops`, `wbps`, `wseqiops`,
/// `wrandiops`) given, each `None` when the device kind's default holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ModelKeys {
    /// Read sequential bytes per second.
    pub rbps: Option<u64>,
    /// Read sequential 4 KiB IOPS.
    pub rseqiops: Option<u64>,
    /// Read random 4 KiB IOPS.
    pub rrandiops: Option<u64>,
    /// Write sequential bytes per second.
    pub wbps: Option<u64>,
    /// Write sequential 4 KiB IOPS.
    pub wseqiops: Option<u64>,
    /// Write random 4 KiB IOPS.
    pub wrandiops: Option<u64>,
}

/// The `io.cost.qos` keys given, in the kernel's internal units (ppm for the percentiles
/// and vrate bounds, microseconds for the targets); `None` where the default holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct QosKeys {
    /// `rpct`, ppm.
    pub rppm: Option<u64>,
    /// `rlat`, microseconds.
    pub rlat_us: Option<u64>,
    /// `wpct`, ppm.
    pub wppm: Option<u64>,
    /// `wlat`, microseconds.
    pub wlat_us: Option<u64>,
    /// `min`, ppm.
    pub min_ppm: Option<u64>,
    /// `max`, ppm.
    pub max_ppm: Option<u64>,
}

/// iocost as `--controller iocost[:key=value,...]` sets it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct IocostSettings {
    /// The cost model's keys given.
    pub model: ModelKeys,
    /// The QoS keys given.
    pub qos: QosKeys,
}

/// Which of the kernel's automatic parameter sets a device gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Autop {
    /// A rotational disk.
    Hdd,
    /// A non-rotational device with one command at a time.
    SsdQd1,
    /// Any other non-rotational device.
    SsdDfl,
}

impl Autop {
    /// The set for a device that is `rotational` or not and takes `queue_depth` commands.
    pub fn of(rotational: bool, queue_depth: usize) -> Autop {
        match (rotational, queue_depth) {
            (true, _) => Autop::Hdd,
            (false, 0 | 1) => Autop::SsdQd1,
            (false, _) => Autop::SsdDfl,
        }
    }

    /// The kernel's name for the set.
    pub fn name(self) -> &'static str {
        match self {
            Autop::Hdd => "hdd",
            Autop::SsdQd1 => "ssd_qd1",
            Autop::SsdDfl => "ssd_dfl",
        }
    }

    /// Its cost model parameters.
    pub fn model(self) -> LinearParams {
        match self {
            Autop::Hdd => LinearParams::HDD,
            Autop::SsdQd1 => LinearParams::SSD_QD1,
            Autop::SsdDfl => LinearParams::SSD,
        }
    }

    /// Its QoS parameters.
    pub fn qos(self) -> Qos {
        match self {
            Autop::Hdd => Qos::HDD,
            Autop::SsdQd1 | Autop::SsdDfl => Qos::SSD,
        }
    }
}

impl IocostSettings {
    /// The cost model parameters in force: the keys given over `autop`'s.
    pub fn model(&self, autop: Autop) -> LinearParams {
        let d = autop.model();
        let k = &self.model;
        LinearParams {
            rbps: k.rbps.unwrap_or(d.rbps),
            rseqiops: k.rseqiops.unwrap_or(d.rseqiops),
            rrandiops: k.rrandiops.unwrap_or(d.rrandiops),
            wbps: k.wbps.unwrap_or(d.wbps),
            wseqiops: k.wseqiops.unwrap_or(d.wseqiops),
            wrandiops: k.wrandiops.unwrap_or(d.wrandiops),
        }
    }

    /// The QoS parameters in force: the keys given over `autop`'s.
    pub fn qos(&self, autop: Autop) -> Qos {
        let d = autop.qos();
        let k = &self.qos;
        Qos {
            rppm: k.rppm.unwrap_or(d.rppm),
            rlat_us: k.rlat_us.unwrap_or(d.rlat_us),
            wppm: k.wppm.unwrap_or(d.wppm),
            wlat_us: k.wlat_us.unwrap_or(d.wlat_us),
            min_ppm: k.min_ppm.unwrap_or(d.min_ppm),
            max_ppm: k.max_ppm.unwrap_or(d.max_ppm),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_device_kind_picks_the_defaults_and_keys_override_them() {
        assert_eq!(Autop::of(true, 32), Autop::Hdd);
        assert_eq!(Autop::of(false, 1), Autop::SsdQd1);
        assert_eq!(Autop::of(false, 32), Autop::SsdDfl);
        let mut s = IocostSettings::default();
        assert_eq!(s.model(Autop::Hdd), LinearParams::HDD);
        assert_eq!(s.qos(Autop::SsdDfl), Qos::SSD);
        s.model.rrandiops = Some(1_000);
        s.qos.rppm = Some(950_000);
        s.qos.rlat_us = Some(5_000);
        assert_eq!(
            s.model(Autop::SsdDfl),
            LinearParams {
                rrandiops: 1_000,
                ..LinearParams::SSD
            }
        );
        let q = s.qos(Autop::Hdd);
        assert_eq!((q.rppm, q.rlat_us, q.wlat_us), (950_000, 5_000, 250_000));
    }
}
