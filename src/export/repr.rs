// A run's results in words both sides of a reproduction write alike: this
// file is compiled into replayground (the expected results) and copied
// into every Rust reproduction it exports (the actual ones).

/// A value as a reproduction compares it.
pub(crate) enum V<'a> {
    /// NULL.
    N,
    /// An integer.
    I(i64),
    /// A float.
    R(f64),
    /// Text.
    T(&'a str),
    /// A blob.
    B(&'a [u8]),
}

/// Rows as `rows [1, "a"] [2, NULL]` (`rows` alone for none).
pub(crate) fn repr_rows(rows: &[Vec<V<'_>>]) -> String {
    let mut out = String::from("rows");
    for row in rows {
        out.push_str(" [");
        for (i, value) in row.iter().enumerate() {
            if i > 0 {
                out.push_str(", ");
            }
            match value {
                V::N => out.push_str("NULL"),
                V::I(n) => out.push_str(&n.to_string()),
                V::R(f) => out.push_str(&format!("{f:?}")),
                V::T(t) => out.push_str(&format!("{t:?}")),
                V::B(b) => {
                    out.push_str("x'");
                    for x in b.iter() {
                        out.push_str(&format!("{x:02x}"));
                    }
                    out.push('\'');
                }
            }
        }
        out.push(']');
    }
    out
}
