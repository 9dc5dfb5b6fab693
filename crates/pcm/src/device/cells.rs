//! The cell-level write of one 8-byte word: data-comparison write (only bits that differ from
//! what the cells hold are programmed) with optional Flip-N-Write (Cho & Lee, MICRO'09: store
//! the word inverted, with one flag bit, when that programs fewer bits).

/// What programming one word costs and leaves behind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct WordProgram {
    /// Cells programmed (data bits plus the flag bit when it changes).
    pub bits: u32,
    /// The word's flag after the write (stored inverted).
    pub inverted: bool,
}

/// Programs `new` over a word that logically holds `old` (stored inverted when `old_inverted`).
/// Without Flip-N-Write the flag stays clear and the cost is the Hamming distance.
#[inline]
pub(crate) fn program_word(
    old: u64,
    old_inverted: bool,
    new: u64,
    flip_n_write: bool,
) -> WordProgram {
    let stored = if old_inverted { !old } else { old };
    let plain = (stored ^ new).count_ones() + u32::from(old_inverted);
    if !flip_n_write {
        debug_assert!(!old_inverted, "flag set without Flip-N-Write");
        return WordProgram {
            bits: plain,
            inverted: false,
        };
    }
    let inverted = (stored ^ !new).count_ones() + u32::from(!old_inverted);
    if inverted < plain {
        WordProgram {
            bits: inverted,
            inverted: true,
        }
    } else {
        WordProgram {
            bits: plain,
            inverted: false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn data_comparison_programs_only_changed_bits() {
        assert_eq!(program_word(0, false, 0, false).bits, 0);
        assert_eq!(program_word(0, false, 0b1011, false).bits, 3);
        assert_eq!(program_word(u64::MAX, false, 0, false).bits, 64);
    }

    #[test]
    fn flip_n_write_caps_a_word_at_half_its_bits_plus_the_flag() {
        let w = program_word(0, false, u64::MAX, true);
        assert_eq!(
            w,
            WordProgram {
                bits: 1,
                inverted: true
            }
        );
        // writing the same value again costs nothing, whichever way it is stored
        assert_eq!(program_word(u64::MAX, true, u64::MAX, true).bits, 0);
        assert_eq!(program_word(u64::MAX, true, 0, true).bits, 1);
    }

    proptest! {
        #[test]
        fn flip_n_write_never_costs_more_and_stays_within_33_bits(
            old in any::<u64>(), old_inverted in any::<bool>(), new in any::<u64>()
        ) {
            let with = program_word(old, old_inverted, new, true);
            let stored = if old_inverted { !old } else { old };
            let plain = (stored ^ new).count_ones() + u32::from(old_inverted);
            prop_assert!(with.bits <= plain);
            prop_assert!(with.bits <= 33);
            if old == new { prop_assert_eq!(with.bits, 0); }
        }
    }
}
