//! Fair sharing of a character budget among results (or among the parts of one result).

/// Splits `total` among items of the given costs by water-filling: an item that needs no
/// more than an even share keeps all it needs, and what it leaves over is split evenly
/// among the rest. The shares never add up to more than `total`.
pub(crate) fn fair_shares(costs: &[usize], total: usize) -> Vec<usize> {
    let mut order: Vec<usize> = (0..costs.len()).collect();
    order.sort_by_key(|&i| costs[i]);
    let mut shares = vec![0; costs.len()];
    let mut remaining = total;
    for (done, &i) in order.iter().enumerate() {
        let left = costs.len() - done;
        let share = remaining / left;
        if costs[i] <= share {
            shares[i] = costs[i];
            remaining -= costs[i];
            continue;
        }
        // Everyone from here on needs more than an even share: split what is left evenly,
        // handing the indivisible remainder out one character each.
        let extra = remaining % left;
        for (k, &j) in order[done..].iter().enumerate() {
            shares[j] = share + usize::from(k < extra);
        }
        break;
    }
    shares
}

/// The characters a text will take: exact when cheap, else a lower bound that is already
/// above `budget`. Never reads more than `4 * budget` bytes, so a 100 MB text costs O(budget).
pub(crate) fn chars_up_to(text: &str, budget: usize) -> usize {
    // A char is at most 4 bytes, so there are at least len/4 chars.
    if text.len() / 4 > budget {
        return text.len() / 4;
    }
    text.chars().count()
}

/// Whether `text` fits in `budget` characters, in O(min(len, 4 * budget)).
pub(crate) fn fits(text: &str, budget: usize) -> bool {
    text.len() <= budget || (text.len() / 4 <= budget && text.chars().count() <= budget)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_items_keep_everything_and_the_rest_split_evenly() {
        assert_eq!(fair_shares(&[10, 500, 1000], 610), vec![10, 300, 300]);
        assert_eq!(fair_shares(&[10, 20], 100), vec![10, 20]);
        assert_eq!(fair_shares(&[100, 100, 100], 10), vec![4, 3, 3]);
        assert_eq!(fair_shares(&[], 10), Vec::<usize>::new());
    }

    #[test]
    fn fits_counts_chars_not_bytes() {
        assert!(fits("ééé", 3));
        assert!(!fits("éééé", 3));
        assert!(!fits(&"x".repeat(1000), 10));
        assert_eq!(chars_up_to("ééé", 3), 3);
    }
}
