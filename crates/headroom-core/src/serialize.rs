//! How durations are printed in JSON, for the core's types and the reports built on them
//! alike (`headroom::schema` re-exports these for `serialize_with`).

/// A duration of whole seconds, as every `*_seconds` field is printed: rounded, and null
/// when unknown (or not finite, as serde_json prints a non-finite number).
pub fn whole_seconds<S: serde::Serializer>(v: &Option<f64>, s: S) -> Result<S::Ok, S::Error> {
    match v {
        // Saturating: no duration headroom computes comes near i64's range.
        #[allow(clippy::cast_possible_truncation)]
        Some(x) if x.is_finite() => s.serialize_i64(x.round() as i64),
        _ => s.serialize_none(),
    }
}

/// A duration known to be finite, as a `*_seconds` field is printed: whole seconds.
pub fn seconds<S: serde::Serializer>(v: &f64, s: S) -> Result<S::Ok, S::Error> {
    // Saturating (NaN as 0): the value comes from a parsed `Duration`.
    #[allow(clippy::cast_possible_truncation)]
    s.serialize_i64(v.round() as i64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Serialize;

    #[test]
    fn durations_are_whole_seconds_and_unknown_is_null() {
        #[derive(Serialize)]
        struct D(#[serde(serialize_with = "whole_seconds")] Option<f64>);
        let j = |v| serde_json::to_string(&D(v)).unwrap();
        assert_eq!(j(Some(89.5)), "90");
        assert_eq!(j(Some(89.4)), "89");
        assert_eq!(j(Some(-0.2)), "0");
        assert_eq!(j(None), "null");
        assert_eq!(j(Some(f64::INFINITY)), "null");
    }
}
