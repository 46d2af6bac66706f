//! Numbers as RESULTS.md writes them: fixed decimals with thousands
//! separators, ratios, sizes, shares, Markdown tables, medians. An absent
//! figure is written "–"; the report decides when a figure may be absent.

/// What RESULTS.md writes for a figure that is not there.
pub const DASH: &str = "–";

/// `v` with `decimals` decimals and a comma every three digits
/// (`12,345.6`), rounded half to even on the binary value.
pub fn fixed(v: f64, decimals: usize) -> String {
    let text = format!("{v:.decimals$}");
    let (sign, digits) = match text.strip_prefix('-') {
        Some(rest) => ("-", rest),
        None => ("", text.as_str()),
    };
    let (whole, frac) = match digits.split_once('.') {
        Some((w, f)) => (w, Some(f)),
        None => (digits, None),
    };
    let mut grouped = String::with_capacity(whole.len() + whole.len() / 3);
    for (i, c) in whole.chars().enumerate() {
        if i > 0 && (whole.len() - i) % 3 == 0 {
            grouped.push(',');
        }
        grouped.push(c);
    }
    match frac {
        Some(f) => format!("{sign}{grouped}.{f}"),
        None => format!("{sign}{grouped}"),
    }
}

/// A count with thousands separators (`2,500`).
pub fn count(n: impl Into<f64>) -> String {
    fixed(n.into(), 0)
}

/// One decimal (`51.2`), or "–".
pub fn f1(v: Option<f64>) -> String {
    v.map_or_else(|| DASH.into(), |v| fixed(v, 1))
}

/// One decimal and a unit (`7.5 µs`), or "–".
pub fn f1u(v: Option<f64>, unit: &str) -> String {
    v.map_or_else(|| DASH.into(), |v| format!("{}{unit}", fixed(v, 1)))
}

/// Two decimals (`0.65`), or "–".
pub fn f2(v: Option<f64>) -> String {
    v.map_or_else(|| DASH.into(), |v| fixed(v, 2))
}

/// Bytes as KiB with one decimal, or "–".
pub fn kib(n: Option<f64>) -> String {
    n.map_or_else(|| DASH.into(), |n| format!("{} KiB", fixed(n / 1024.0, 1)))
}

/// Bytes as decimal kilobytes (the unit the original published), or "–".
pub fn kb(n: Option<f64>) -> String {
    n.map_or_else(|| DASH.into(), |n| format!("{} KB", fixed(n / 1000.0, 1)))
}

/// `ours ÷ theirs` as `1.25×`; "–" when either is absent or `theirs` is 0.
pub fn ratio(ours: Option<f64>, theirs: Option<f64>) -> String {
    match (ours, theirs) {
        (Some(o), Some(t)) if t != 0.0 => format!("{:.2}×", o / t),
        _ => DASH.into(),
    }
}

/// A share (0.25) as a whole percentage (`25 %`), or "–".
pub fn pct(share: Option<f64>) -> String {
    share.map_or_else(|| DASH.into(), |s| format!("{:.0} %", 100.0 * s))
}

/// A float as Python's `repr` writes it (`12.0`, `0.13`): the original's
/// published figures are quoted as they were transcribed.
pub fn repr(v: f64) -> String {
    format!("{v:?}")
}

/// Python's `{:g}`: six significant digits, trailing zeros dropped, the
/// exponent form below 1e-4 and from 1e6 (`280`, `237.5`, `1e+06`).
pub fn general(v: f64) -> String {
    if v == 0.0 || !v.is_finite() {
        return if v == 0.0 { "0".into() } else { format!("{v}") };
    }
    let exp = format!("{v:.5e}");
    let (mantissa, e) = exp.split_once('e').unwrap_or((&exp, "0"));
    let e: i32 = e.parse().unwrap_or(0);
    if !(-4..6).contains(&e) {
        let m = trim_zeros(mantissa);
        return format!("{m}e{}{:02}", if e < 0 { '-' } else { '+' }, e.abs());
    }
    let decimals = usize::try_from(5 - e).unwrap_or(0);
    trim_zeros(&format!("{v:.decimals$}")).to_owned()
}

fn trim_zeros(s: &str) -> &str {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.')
    } else {
        s
    }
}

/// A Markdown table: the head, the separator row, one line a row.
pub fn table<R: AsRef<[String]>>(head: &[&str], rows: &[R]) -> Vec<String> {
    let mut out = vec![format!("| {} |", head.join(" | ")), format!("|{}|", vec!["---"; head.len()].join("|"))];
    out.extend(rows.iter().map(|r| format!("| {} |", r.as_ref().join(" | "))));
    out
}

/// The median of the present values (the mean of the middle two for an
/// even count); None when none is present.
pub fn median(values: impl IntoIterator<Item = Option<f64>>) -> Option<f64> {
    let mut v: Vec<f64> = values.into_iter().flatten().collect();
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    Some(if n % 2 == 1 { v[n / 2] } else { (v[n / 2 - 1] + v[n / 2]) / 2.0 })
}

/// A criterion time in ns with the unit that suits it (`1.23 ms`,
/// `16.68 µs`, `950.2 ns`).
pub fn ns(v: f64) -> String {
    if v >= 1e6 {
        format!("{:.2} ms", v / 1e6)
    } else if v >= 1e3 {
        format!("{:.2} µs", v / 1e3)
    } else {
        format!("{v:.1} ns")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixed_groups_thousands_and_rounds_half_to_even() {
        assert_eq!(fixed(12345.65, 1), "12,345.6");
        assert_eq!(fixed(1234567.0, 0), "1,234,567");
        assert_eq!(fixed(-1234.5, 1), "-1,234.5");
        assert_eq!(fixed(999.0, 0), "999");
        assert_eq!(fixed(0.125, 2), "0.12");
        assert_eq!(f1(None), "–");
    }

    #[test]
    fn general_is_pythons_g() {
        for (v, want) in
            [(280.0, "280"), (237.5, "237.5"), (48.0, "48"), (0.5, "0.5"), (1e6, "1e+06"), (0.0001, "0.0001")]
        {
            assert_eq!(general(v), want, "{v}");
        }
        assert_eq!(general(1.0 / 3.0), "0.333333");
        assert_eq!(general(0.00001234), "1.234e-05");
    }

    #[test]
    fn ratios_medians_tables() {
        assert_eq!(ratio(Some(3.0), Some(2.0)), "1.50×");
        assert_eq!(ratio(Some(3.0), Some(0.0)), "–");
        assert_eq!(median([Some(3.0), None, Some(1.0), Some(2.0), Some(10.0)]), Some(2.5));
        assert_eq!(median([None]), None);
        assert_eq!(repr(12.0), "12.0");
        assert_eq!(repr(0.13), "0.13");
        let t = table(&["a", "b"], &[vec!["1".to_owned(), "2".to_owned()]]);
        assert_eq!(t, ["| a | b |", "|---|---|", "| 1 | 2 |"]);
    }
}
