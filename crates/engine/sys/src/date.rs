//! Calendar arithmetic on UTC seconds since the epoch: the one implementation behind fio's
//! report dates (`report`) and HTTP's dates (`serve`). No time zone data is read; the machines
//! iolab runs on keep UTC, and HTTP dates are GMT by definition.

/// English day abbreviations, Sunday first (as `tm_wday` counts).
pub const WEEKDAYS: [&str; 7] = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];
/// English month abbreviations, January first.
pub const MONTHS: [&str; 12] = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
];

/// A moment split into calendar fields (UTC).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Civil {
    pub year: i64,
    /// 1 to 12.
    pub month: u32,
    /// 1 to 31.
    pub day: u32,
    /// 0 (Sunday) to 6.
    pub weekday: u32,
    pub hour: u32,
    pub minute: u32,
    pub second: u32,
}

impl Civil {
    /// The calendar fields of `secs` seconds since 1970-01-01 00:00:00 UTC.
    pub fn from_unix(secs: i64) -> Civil {
        let days = secs.div_euclid(86_400);
        let t = secs.rem_euclid(86_400) as u32;
        let (year, month, day) = civil_from_days(days);
        Civil {
            year,
            month,
            day,
            weekday: (days + 4).rem_euclid(7) as u32,
            hour: t / 3600,
            minute: t / 60 % 60,
            second: t % 60,
        }
    }

    /// Seconds since the epoch; the inverse of [`Civil::from_unix`] (the weekday is not read).
    pub fn to_unix(&self) -> i64 {
        days_from_civil(self.year, self.month, self.day) * 86_400
            + i64::from(self.hour) * 3600
            + i64::from(self.minute) * 60
            + i64::from(self.second)
    }

    /// `Sun`, `Mon`, ...
    pub fn weekday_name(&self) -> &'static str {
        WEEKDAYS[self.weekday as usize % 7]
    }

    /// `Jan`, `Feb`, ...
    pub fn month_name(&self) -> &'static str {
        MONTHS[(self.month as usize + 11) % 12]
    }
}

/// (year, month, day) of a day number counted from 1970-01-01 (Howard Hinnant's algorithm,
/// exact over the whole proleptic Gregorian calendar).
pub fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

/// The day number (from 1970-01-01) of a date; the inverse of [`civil_from_days`].
pub fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let mp = i64::from((m + 9) % 12);
    let doy = (153 * mp + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_dates_split_as_the_calendar_says() {
        // 1994-11-06 08:49:37, RFC 9110's example date, a Sunday.
        let c = Civil::from_unix(784_111_777);
        assert_eq!((c.year, c.month, c.day), (1994, 11, 6));
        assert_eq!((c.hour, c.minute, c.second), (8, 49, 37));
        assert_eq!((c.weekday_name(), c.month_name()), ("Sun", "Nov"));
        // The epoch was a Thursday; 2000-02-29 existed (divisible by 400).
        assert_eq!(Civil::from_unix(0).weekday_name(), "Thu");
        assert_eq!(civil_from_days(11_016), (2000, 2, 29));
        // Before the epoch.
        assert_eq!(Civil::from_unix(-1).year, 1969);
    }

    #[test]
    fn days_and_dates_round_trip() {
        for days in (-800_000..800_000).step_by(997) {
            let (y, m, d) = civil_from_days(days);
            assert_eq!(days_from_civil(y, m, d), days, "{y}-{m}-{d}");
        }
        let c = Civil::from_unix(1_700_000_000);
        assert_eq!(c.to_unix(), 1_700_000_000);
    }
}
