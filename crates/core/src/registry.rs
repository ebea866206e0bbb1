//! Every policy by name: what `--sched NAME[:tunable=value,...]` can select, and how to build it.

use crate::elvfq::ElvFq;
use crate::group::GroupTree;
use crate::ioband::{Controller, IobandLayer};
use crate::iocost::IocostLayer;
use crate::policy::anticipatory::Anticipatory;
use crate::policy::bfq::Bfq;
use crate::policy::cfq::Cfq;
use crate::policy::deadline::Deadline;
use crate::policy::kyber::Kyber;
use crate::policy::mq_deadline::MqDeadline;
use crate::policy::noop::Noop;
use crate::scheduler::{Scheduler, SchedulerContext};
use crate::tunable::{SchedSpec, TunableDef, TunableError, Tunables};

/// How a policy is built from its resolved tunables and the run's context.
type BuildFn = fn(&Tunables, &SchedulerContext) -> Result<Box<dyn Scheduler>, TunableError>;

/// A policy as the registry lists it.
#[derive(Debug, Clone, Copy)]
pub struct SchedulerInfo {
    /// Canonical name.
    pub name: &'static str,
    /// Other names it answers to.
    pub aliases: &'static [&'static str],
    /// One line on what it does.
    pub summary: &'static str,
    /// Its tunables with the kernel's names, units and defaults.
    pub tunables: &'static [TunableDef],
    /// Written for blk-mq (Linux 3.13 and later), not for the 2.6 single request queue: a
    /// driver runs it where each submission dispatches at once and a completion runs the
    /// queue later, from a worker.
    pub blk_mq: bool,
    build: BuildFn,
}

/// Every policy, in the order they are listed.
pub const SCHEDULERS: &[SchedulerInfo] = &[
    SchedulerInfo {
        name: "noop",
        aliases: &["none"],
        summary: "one FIFO in arrival order, with back and front merging",
        tunables: Noop::TUNABLES,
        blk_mq: false,
        build: |tunables, _| Ok(Box::new(Noop::new(tunables))),
    },
    SchedulerInfo {
        name: "deadline",
        aliases: &[],
        summary: "sector-sorted batches per direction, read preference, FIFO expiry",
        tunables: Deadline::TUNABLES,
        blk_mq: false,
        build: |tunables, _| Ok(Box::new(Deadline::new(tunables))),
    },
    SchedulerInfo {
        name: "mq-deadline",
        aliases: &[],
        summary: "Linux 5.14+ blk-mq deadline: a deadline elevator per priority class (RT, BE, IDLE), strict priority, aging after prio_aging_expire",
        tunables: MqDeadline::TUNABLES,
        blk_mq: true,
        build: |tunables, _| Ok(Box::new(MqDeadline::new(tunables))),
    },
    SchedulerInfo {
        name: "kyber",
        aliases: &[],
        summary: "Linux 4.12+ blk-mq kyber: read, write, discard and other domains with token depths, rotating batches, depths resized every 100 ms by p90/p99 latency against read_lat_nsec and write_lat_nsec",
        tunables: Kyber::TUNABLES,
        blk_mq: true,
        build: |tunables, _| Ok(Box::new(Kyber::new(tunables))),
    },
    SchedulerInfo {
        name: "anticipatory",
        aliases: &["as"],
        summary: "deadline-style batches plus anticipation: idles briefly after a read for the same process's next read",
        tunables: Anticipatory::TUNABLES,
        blk_mq: false,
        build: |tunables, context| Ok(Box::new(Anticipatory::new(tunables, context))),
    },
    SchedulerInfo {
        name: "cfq",
        aliases: &[],
        summary: "time slices per process queue by priority, idling, weighted groups on a vdisktime service tree",
        tunables: Cfq::TUNABLES,
        blk_mq: false,
        build: |tunables, context| Ok(Box::new(Cfq::new(tunables, context))),
    },
    SchedulerInfo {
        name: "bfq",
        aliases: &[],
        summary: "budget fair queueing: B-WF2Q+ over queues and groups by weight, sector budgets, selective idling, weight raising for low latency",
        tunables: Bfq::TUNABLES,
        blk_mq: true,
        build: |tunables, context| Ok(Box::new(Bfq::new(tunables, context)?)),
    },
];

/// The policy a name or alias selects.
pub fn lookup(name: &str) -> Result<&'static SchedulerInfo, TunableError> {
    SCHEDULERS
        .iter()
        .find(|info| info.name == name || info.aliases.contains(&name))
        .ok_or_else(|| TunableError::UnknownScheduler {
            name: name.to_string(),
            valid: valid_names(),
        })
}

fn valid_names() -> String {
    SCHEDULERS
        .iter()
        .flat_map(|info| std::iter::once(info.name).chain(info.aliases.iter().copied()))
        .collect::<Vec<_>>()
        .join(", ")
}

/// `spec` with `version=KERNEL` added when its scheduler has a `version` tunable
/// ([`crate::kernel`]) and the spec does not set one; otherwise `spec` unchanged. A
/// scheduler the registry does not know is left for [`build_scheduler`] to refuse.
pub fn with_kernel(spec: &SchedSpec, kernel: &str) -> SchedSpec {
    let has_version = lookup(&spec.name)
        .map(|info| {
            info.tunables
                .iter()
                .any(|def| def.name == crate::kernel::TUNABLE)
        })
        .unwrap_or(false);
    let given = spec
        .settings
        .iter()
        .any(|(name, _)| name == crate::kernel::TUNABLE);
    let mut spec = spec.clone();
    if has_version && !given {
        spec.settings.push((
            crate::kernel::TUNABLE.to_string(),
            kernel.trim().to_string(),
        ));
    }
    spec
}

/// Build the policy a specification names, with its tunables checked, inside the
/// controllers its groups call for: under [`Controller::ElvFq`] one instance of it per group
/// under the elv-fq layer ([`crate::elvfq`]), else as [`with_controllers`] wraps it.
pub fn build_scheduler(
    spec: &SchedSpec,
    context: &SchedulerContext,
) -> Result<Box<dyn Scheduler>, TunableError> {
    let info = lookup(&spec.name)?;
    let tunables = Tunables::resolve(info.name, info.tunables, &spec.settings)?;
    let Controller::ElvFq(settings) = context.groups.controller() else {
        let policy = (info.build)(&tunables, context)?;
        return Ok(with_controllers(policy, context));
    };
    // Each group's elevator sees its requests as the root group's: it schedules within the
    // group and knows of no others.
    let within = SchedulerContext {
        groups: GroupTree::default(),
        rotational: context.rotational,
        queue_depth: context.queue_depth,
    };
    let build = info.build;
    let make = move || build(&tunables, &within);
    let elevators = (0..context.groups.len())
        .map(|_| make())
        .collect::<Result<Vec<_>, _>>()?;
    let layer = ElvFq::new(elevators, &context.groups, settings).with_factory(Box::new(make));
    let layer = crate::iolatency::wrap(Box::new(layer), context);
    Ok(crate::limit::wrap(layer, &context.groups))
}

/// `policy` (a named one, or a caller's own) inside the controllers the groups of
/// `context` call for: dm-ioband above it when the tree's controller is
/// [`Controller::Ioband`] ([`crate::ioband`]), iocost above it under [`Controller::Iocost`]
/// ([`crate::iocost`], its defaults chosen by the device kind `context` gives), io.latency
/// above those when a group has a latency target ([`crate::iolatency`]), and the limit layer
/// outermost when a group has limits ([`crate::limit`]), which holds a limited group back as
/// a whole, as blk-throttle sits above iocost in the kernel.
///
/// Under [`Controller::ElvFq`] the layer needs an elevator per group, which only a named
/// policy can give ([`build_scheduler`]); a single policy of the caller's own becomes the
/// root group's elevator, and every group is served as the root group.
pub fn with_controllers(
    policy: Box<dyn Scheduler>,
    context: &SchedulerContext,
) -> Box<dyn Scheduler> {
    let groups = &context.groups;
    let policy: Box<dyn Scheduler> = match groups.controller() {
        Controller::Elevator => policy,
        Controller::Ioband(settings) => Box::new(IobandLayer::new(policy, groups, settings)),
        Controller::ElvFq(settings) => Box::new(ElvFq::new(vec![policy], groups, settings)),
        Controller::Iocost(settings) => Box::new(IocostLayer::new(policy, context, settings)),
    };
    crate::limit::wrap(crate::iolatency::wrap(policy, context), groups)
}

/// `policy` (built for `context`) under the layers that changes to the groups made while it
/// runs will need and that the groups of `context` did not call for at the start: the limit
/// layer when `limits` (a change will set a limit), io.latency when `latency_targets` (one
/// will set a latency target). Each layer goes in once: a tree that had limits or targets
/// already has it. Added afterwards, io.latency is outside the limit layer rather than
/// inside it (where [`with_controllers`] puts it): it sees requests as the limit layer
/// releases them, which changes when a held request is timed from, not what it throttles.
pub fn with_layers_for_changes(
    policy: Box<dyn Scheduler>,
    context: &SchedulerContext,
    limits: bool,
    latency_targets: bool,
) -> Box<dyn Scheduler> {
    let groups = &context.groups;
    let mut policy = policy;
    if limits && !groups.has_limits() {
        policy = Box::new(crate::limit::LimitLayer::new(policy, groups));
    }
    if latency_targets && !crate::iolatency::has_targets(groups) {
        policy = Box::new(crate::iolatency::IolatencyLayer::new(policy, context));
    }
    policy
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::GroupTree;

    #[test]
    fn names_aliases_and_errors() {
        let context = SchedulerContext::default();
        let none: SchedSpec = "none".parse().unwrap();
        assert_eq!(build_scheduler(&none, &context).unwrap().name(), "noop");
        let deadline: SchedSpec = "deadline:read_expire=250,fifo_batch=1".parse().unwrap();
        assert_eq!(
            build_scheduler(&deadline, &context).unwrap().name(),
            "deadline"
        );
        let mq: SchedSpec = "mq-deadline:prio_aging_expire=500".parse().unwrap();
        assert_eq!(
            build_scheduler(&mq, &context).unwrap().name(),
            "mq-deadline"
        );
        let unknown: SchedSpec = "fastest".parse().unwrap();
        let message = build_scheduler(&unknown, &context)
            .err()
            .unwrap()
            .to_string();
        assert!(
            message.contains("'fastest'") && message.contains("noop"),
            "{message}"
        );
        let bad: SchedSpec = "noop:nomerges=9".parse().unwrap();
        let message = build_scheduler(&bad, &context).err().unwrap().to_string();
        assert!(
            message.contains("nomerges") && message.contains("0..=2"),
            "{message}"
        );
    }
    /// A kernel release goes only to a scheduler that has `version` and was given none.
    #[test]
    fn a_kernel_sets_version_only_where_it_is_a_tunable_and_unset() {
        let noop: SchedSpec = "noop".parse().unwrap();
        assert_eq!(with_kernel(&noop, "2.6.10"), noop);
        let unknown: SchedSpec = "fastest".parse().unwrap();
        assert_eq!(with_kernel(&unknown, "2.6.10"), unknown);
    }

    /// Each policy's own default for an unset group, its range for a set one, nothing for
    /// the root or from a policy without groups, and the same answers through the limit layer.
    #[test]
    fn group_weights_as_each_policy_uses_them() {
        let mut groups = GroupTree::default();
        let unset = groups.ensure("unset").unwrap();
        let set = groups.ensure("set").unwrap();
        let big = groups.ensure("big").unwrap();
        groups.set_weight(set, 300).unwrap();
        groups.set_weight(big, 5000).unwrap();
        let weights = |name: &str, groups: &GroupTree| {
            let context = SchedulerContext {
                groups: groups.clone(),
                rotational: true,
                queue_depth: 1,
            };
            let spec: SchedSpec = name.parse().unwrap();
            let policy = build_scheduler(&spec, &context).unwrap();
            [crate::GroupId::ROOT, unset, set, big].map(|g| policy.group_weight(g))
        };
        assert_eq!(
            weights("cfq", &groups),
            [None, Some(500), Some(300), Some(1000)]
        );
        for name in ["noop", "deadline", "mq-deadline", "kyber", "anticipatory"] {
            assert_eq!(weights(name, &groups), [None; 4], "{name}");
        }
        groups.set_weight(big, 1000).unwrap();
        groups.set_limits(
            unset,
            crate::limit::Limits {
                read_bps: Some(1 << 20),
                ..Default::default()
            },
        );
        assert_eq!(
            weights("bfq", &groups),
            [None, Some(100), Some(300), Some(1000)]
        );
        // Under elv-fq every elevator weighs groups, by the tree's weights.
        groups.set_controller(Controller::ElvFq(crate::elvfq::ElvFqSettings::default()));
        for name in ["noop", "deadline", "anticipatory", "cfq"] {
            assert_eq!(
                weights(name, &groups),
                [None, Some(500), Some(300), Some(1000)],
                "{name}"
            );
        }
    }
}
