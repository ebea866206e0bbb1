//! I/O priorities as `ionice` sets them: a class (RT, BE, IDLE) and a level 0–7 (0 is highest).

use std::fmt;

/// The I/O scheduling class (`IOPRIO_CLASS_*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum PriorityClass {
    /// Real time: served before everything else.
    RealTime,
    /// Best effort: the default class.
    BestEffort,
    /// Idle: served only when nobody else wants the disk.
    Idle,
}

impl PriorityClass {
    /// All classes, highest first.
    pub const ALL: [PriorityClass; 3] = [Self::RealTime, Self::BestEffort, Self::Idle];

    /// The class from its `ioprio` number: 1 RT, 2 BE, 3 IDLE (0, "none", maps to BE as in the kernel).
    pub fn from_number(number: u32) -> Option<Self> {
        match number {
            0 | 2 => Some(Self::BestEffort),
            1 => Some(Self::RealTime),
            3 => Some(Self::Idle),
            _ => None,
        }
    }

    /// The class's `ioprio` number.
    pub fn number(self) -> u32 {
        match self {
            Self::RealTime => 1,
            Self::BestEffort => 2,
            Self::Idle => 3,
        }
    }

    /// Index 0 (RT), 1 (BE), 2 (IDLE), for per-class arrays.
    pub fn index(self) -> usize {
        self as usize
    }
}

impl fmt::Display for PriorityClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::RealTime => "RT",
            Self::BestEffort => "BE",
            Self::Idle => "IDLE",
        })
    }
}

/// A class and a level 0–7 (0 highest). The IDLE class has no levels; its level is kept but ignored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct IoPriority {
    /// The scheduling class.
    pub class: PriorityClass,
    /// The level within the class, 0 (highest) to 7 (lowest).
    pub level: u8,
}

impl IoPriority {
    /// Number of levels per class.
    pub const LEVELS: u8 = 8;

    /// A priority; `None` when the level is above 7.
    pub fn new(class: PriorityClass, level: u8) -> Option<Self> {
        (level < Self::LEVELS).then_some(Self { class, level })
    }
}

impl Default for IoPriority {
    /// Best effort, level 4: what a process with nice 0 and no ionice gets.
    fn default() -> Self {
        Self {
            class: PriorityClass::BestEffort,
            level: 4,
        }
    }
}

impl fmt::Display for IoPriority {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.class {
            PriorityClass::Idle => write!(f, "IDLE"),
            class => write!(f, "{}{}", class, self.level),
        }
    }
}
