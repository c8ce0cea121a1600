//! The wall clock as RFC 3339 text, written by hand: every call stamps its start and end,
//! and formatting through `humantime`'s `Display` (the formatter machinery, a `String`
//! grown piecewise) cost ~2,000 instructions a stamp, on the path of every MCP round trip.

use std::time::{SystemTime, UNIX_EPOCH};

/// Now, as `humantime::format_rfc3339_millis` writes it: `2026-11-25T03:20:19.123Z`.
pub fn now_rfc3339() -> String {
    rfc3339_millis(SystemTime::now())
}

/// `at` in UTC to the millisecond, `YYYY-MM-DDTHH:MM:SS.mmmZ`. A time before 1970 or past
/// year 9999 (which no clock here reads) falls back to `humantime`, which knows those.
pub(crate) fn rfc3339_millis(at: SystemTime) -> String {
    let Ok(since) = at.duration_since(UNIX_EPOCH) else {
        return humantime::format_rfc3339_millis(at).to_string();
    };
    let secs = since.as_secs();
    // 253402300800 is 10000-01-01T00:00:00Z.
    if secs >= 253_402_300_800 {
        return humantime::format_rfc3339_millis(at).to_string();
    }
    let millis = since.subsec_millis();
    let days = secs / 86_400;
    let of_day = secs % 86_400;
    let (year, month, day) = civil(days);
    let mut out = [0u8; 24];
    put(&mut out[0..4], u64::from(year));
    out[4] = b'-';
    put(&mut out[5..7], u64::from(month));
    out[7] = b'-';
    put(&mut out[8..10], u64::from(day));
    out[10] = b'T';
    put(&mut out[11..13], of_day / 3600);
    out[13] = b':';
    put(&mut out[14..16], of_day % 3600 / 60);
    out[16] = b':';
    put(&mut out[17..19], of_day % 60);
    out[19] = b'.';
    put(&mut out[20..23], u64::from(millis));
    out[23] = b'Z';
    // Only ASCII digits and separators were written, so the check passes (and the empty
    // fallback is never taken); collecting the bytes as chars cost ~500 instructions a
    // stamp, three stamps a call.
    String::from_utf8(out.to_vec()).unwrap_or_default()
}

/// `n` in decimal, zero-padded to fill `into` (its high digits dropped if it is wider,
/// which the ranges above rule out).
fn put(into: &mut [u8], mut n: u64) {
    for slot in into.iter_mut().rev() {
        *slot = b'0' + (n % 10) as u8;
        n /= 10;
    }
}

/// The proleptic Gregorian (year, month, day) of `days` after 1970-01-01. Counted in
/// 400-year eras from 0000-03-01, so that a leap day falls at the end of its year.
fn civil(days: u64) -> (u32, u32, u32) {
    // 1970-01-01 is day 719,468 counted from 0000-03-01.
    let z = days + 719_468;
    let era = z / 146_097;
    let of_era = z % 146_097;
    let year_of_era = (of_era - of_era / 1460 + of_era / 36_524 - of_era / 146_096) / 365;
    let of_year = of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    // Months counted from March, 153 days in each five.
    let m = (5 * of_year + 2) / 153;
    let day = of_year - (153 * m + 2) / 5 + 1;
    let month = if m < 10 { m + 3 } else { m - 9 };
    let year = era * 400 + year_of_era + u64::from(month <= 2);
    // Below 10000 (checked by the caller), each fits.
    (year as u32, month as u32, day as u32)
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    /// The same text as humantime's, for instants across leap years, century years,
    /// month and year ends, and a spread of the whole range in between.
    #[test]
    fn writes_what_humantime_writes() {
        let mut secs: Vec<u64> = vec![
            0,
            86_399,
            951_782_400,   // 2000-02-29
            951_868_799,   // 2000-02-29T23:59:59
            4_107_542_400, // 2100-03-01
            4_107_456_000, // 2100-02-28
            1_795_996_800, // 2026-11-30
            253_402_300_799,
        ];
        // A walk through the range with a step prime to a day's length.
        let mut s = 12_345u64;
        while s < 253_402_300_800 {
            secs.push(s);
            s += 7_777_777;
        }
        for secs in secs {
            for millis in [0u64, 1, 999, 500] {
                let at = UNIX_EPOCH + Duration::from_secs(secs) + Duration::from_millis(millis);
                assert_eq!(
                    rfc3339_millis(at),
                    humantime::format_rfc3339_millis(at).to_string(),
                    "{secs}.{millis}"
                );
            }
        }
        let now = SystemTime::now();
        assert_eq!(
            rfc3339_millis(now),
            humantime::format_rfc3339_millis(now).to_string()
        );
    }
}
