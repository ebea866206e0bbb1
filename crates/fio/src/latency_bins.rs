//! fio's latency histogram: the bins fio keeps completion latencies in (`io_u_plat`), and
//! the percentiles it reads from them.
//!
//! A latency of `v` nanoseconds goes to a bin by its most significant bit: below 128 every
//! value has a bin of its own; above, each power of two is cut into 64 equal bins, so a bin
//! is at most 1/64 (1.6 %) of its value wide. 29 groups of 64 bins reach 2^34 ns (17.2 s);
//! longer latencies share the last bin. A bin stands for its middle value, and a percentile
//! is the value of the first bin at which the running count reaches that share of all
//! samples: exactly the figures fio prints, from 1856 counters (14.5 KiB) a direction.

/// Bits of a value kept exactly within its power of two (fio's `FIO_IO_U_PLAT_BITS`).
const BITS: u32 = 6;
/// Bins per power of two (fio's `FIO_IO_U_PLAT_VAL`).
const PER_GROUP: u64 = 1 << BITS;
/// Powers of two covered (fio's `FIO_IO_U_PLAT_GROUP_NR`).
const GROUPS: usize = 29;
/// Number of bins (fio's `FIO_IO_U_PLAT_NR`).
pub const BINS: usize = GROUPS * PER_GROUP as usize;

/// The bin that holds `nanos`.
pub fn bin_of(nanos: u64) -> usize {
    if nanos < 2 * PER_GROUP {
        return nanos as usize;
    }
    let most_significant = 63 - nanos.leading_zeros();
    let dropped = most_significant - BITS;
    let group_start = ((dropped + 1) as usize) << BITS;
    let within = ((nanos >> dropped) & (PER_GROUP - 1)) as usize;
    (group_start + within).min(BINS - 1)
}

/// The value a bin stands for: itself below 128, else the middle of its range.
pub fn value_of(bin: usize) -> u64 {
    if bin < 2 * PER_GROUP as usize {
        return bin as u64;
    }
    let dropped = (bin as u32 >> BITS) - 1;
    let base = 1u64 << (dropped + BITS);
    let within = (bin as u64) % PER_GROUP;
    // fio computes `base + (within + 0.5) * 2^dropped` in floating point and truncates.
    base + (((2 * within + 1) << dropped) >> 1)
}

/// The first bin up to which the running count reaches `percent` of `total` samples, as
/// fio's `calc_clat_percentiles` finds it; `None` when the bins hold fewer samples.
pub fn percentile_bin(bins: &[u64; BINS], total: u64, percent: f64) -> Option<usize> {
    let wanted = percent / 100.0 * total as f64;
    let mut sum = 0u64;
    bins.iter().position(|&count| {
        sum += count;
        sum as f64 >= wanted
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_values_have_bins_of_their_own() {
        for v in 0..128 {
            assert_eq!(bin_of(v), v as usize);
            assert_eq!(value_of(v as usize), v);
        }
    }

    #[test]
    fn each_power_of_two_is_cut_in_64_bins() {
        assert_eq!(bin_of(128), 128);
        assert_eq!(bin_of(129), 128);
        assert_eq!(bin_of(255), 191);
        assert_eq!(bin_of(256), 192);
        assert_eq!(value_of(128), 129);
        assert_eq!(value_of(192), 258);
        // 1 ms lands in the bin [999 424, 1 007 616), which stands for its middle.
        assert_eq!(bin_of(1_000_000), 954);
        assert_eq!(value_of(954), 1_003_520);
    }

    #[test]
    fn bins_are_contiguous_and_values_increase() {
        let mut previous = 0;
        for v in 0..1u64 << 18 {
            let bin = bin_of(v);
            assert!(
                bin == previous || bin == previous + 1,
                "{v}: {previous} -> {bin}"
            );
            // A bin's value is within 1/64 of every value it holds.
            assert!(
                v.abs_diff(value_of(bin)) * 64 <= v,
                "{v} in a bin of {}",
                value_of(bin)
            );
            previous = bin;
        }
        for bin in 1..BINS {
            assert!(value_of(bin) > value_of(bin - 1));
        }
    }

    #[test]
    fn values_past_the_last_group_share_the_last_bin() {
        assert_eq!(bin_of(1 << 34), BINS - 1);
        assert_eq!(bin_of(u64::MAX), BINS - 1);
        assert_eq!(bin_of((1 << 34) - 1), BINS - 1);
        assert_eq!(value_of(BINS - 1), (1 << 34) - (1 << 27) / 2);
    }

    #[test]
    fn a_percentile_is_the_first_bin_reaching_its_share() {
        let mut bins = [0u64; BINS];
        bins[10] = 50;
        bins[20] = 49;
        bins[30] = 1;
        assert_eq!(percentile_bin(&bins, 100, 50.0), Some(10));
        assert_eq!(percentile_bin(&bins, 100, 50.01), Some(20));
        assert_eq!(percentile_bin(&bins, 100, 99.0), Some(20));
        assert_eq!(percentile_bin(&bins, 100, 99.5), Some(30));
        assert_eq!(percentile_bin(&bins, 200, 99.5), None);
    }
}
