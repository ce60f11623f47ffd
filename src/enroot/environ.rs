//! ENROOT_ENVIRON: reading what is already set (image, environ.d, `-e`, earlier hooks) the way
//! enroot's envfmt normalises it, so the user's values win over ours.

use std::collections::BTreeMap;

/// Keys and values as enroot will load them: later lines win, one pair of surrounding quotes
/// stripped, comments, `export …`, malformed and ENROOT_* lines dropped.
pub fn parse(text: &str) -> BTreeMap<String, String> {
    let mut m = BTreeMap::new();
    for raw in text.lines() {
        let l = raw.trim_start();
        if l.is_empty() || l.starts_with('#') {
            continue;
        }
        let Some((k, v)) = l.split_once('=') else { continue };
        if !crate::render::valid_name(k) || k.starts_with("ENROOT_") {
            continue;
        }
        let v = match (v.chars().next(), v.chars().last()) {
            (Some('"' | '\''), Some('"' | '\'')) if v.len() >= 2 => &v[1..v.len() - 1],
            _ => v,
        };
        m.insert(k.to_string(), v.to_string());
    }
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn as_enroot_normalises() {
        let m = parse("  A=1\n# c\nexport B=2\nC='single q'\nD=\"a'\nENROOT_X=y\nA=3\nbad line\n");
        assert_eq!(m.get("A").map(String::as_str), Some("3"));
        assert_eq!(m.get("B"), None);
        assert_eq!(m.get("C").map(String::as_str), Some("single q"));
        assert_eq!(m.get("D").map(String::as_str), Some("a"));
        assert_eq!(m.get("ENROOT_X"), None);
    }
}
