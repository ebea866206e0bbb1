use proptest::prelude::*;

use super::*;

fn spec(name: &str, settings: &[(&str, &str)]) -> Spec {
    Spec {
        name: name.to_string(),
        settings: settings
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
    }
}

#[test]
fn a_name_and_its_settings_in_order_trimmed() {
    assert_eq!("noop".parse(), Ok(spec("noop", &[])));
    assert_eq!(
        " deadline : read_expire = 250, fifo_batch=1 ".parse(),
        Ok(spec(
            "deadline",
            &[("read_expire", "250"), ("fifo_batch", "1")]
        ))
    );
    assert_eq!(
        "eio:sectors=0..8,note=a=b:c".parse(),
        Ok(spec("eio", &[("sectors", "0..8"), ("note", "a=b:c")])),
        "a value ends at the comma, not at '=' or ':'"
    );
    let parsed: Spec = "x:a=1,b=2".parse().expect("valid");
    assert_eq!((parsed.get("b"), parsed.get("c")), (Some("2"), None));
}

#[test]
fn each_malformed_part_has_its_own_one_line_error() {
    for (text, error) in [
        ("", "empty name"),
        (":a=1", "empty name"),
        ("x:a", "setting 'a' has no value"),
        ("x:", "setting '' has no value"),
        ("x:a=1,,b=2", "setting '' has no value"),
        ("x:=1", "setting '=1' has no key"),
        ("x:a=", "setting 'a=' has an empty value"),
        ("x:a=1,a=2", "setting 'a' is given twice"),
    ] {
        let message = text.parse::<Spec>().expect_err(text).to_string();
        assert_eq!(message, error, "{text}");
    }
}

#[test]
fn lists_that_take_empty_items_skip_them() {
    assert_eq!(
        parse_settings(" a=1,, b=2, ", EmptyItems::Skip),
        Ok(vec![("a".into(), "1".into()), ("b".into(), "2".into())])
    );
    assert_eq!(parse_settings("", EmptyItems::Skip), Ok(Vec::new()));
    assert_eq!(
        Spec::parse_with("eio:", EmptyItems::Skip),
        Ok(spec("eio", &[]))
    );
    assert_eq!(
        parse_settings("a=1,a=1", EmptyItems::Skip),
        Err(SpecError::DuplicateKey { key: "a".into() })
    );
    assert_eq!(
        parse_items(["rbps=1M", "wbps=max"]),
        Ok(vec![
            ("rbps".into(), "1M".into()),
            ("wbps".into(), "max".into())
        ])
    );
}

/// A name, key or value as the grammar can carry it: no separator it ends at, no
/// surrounding whitespace.
fn word(extra: &'static str) -> impl Strategy<Value = String> {
    let edge = format!("[A-Za-z0-9_./{extra}-]");
    let inner = format!("[A-Za-z0-9_./ {extra}-]");
    proptest::string::string_regex(&format!("{edge}({inner}{{0,8}}{edge})?")).expect("valid regex")
}

fn specs() -> impl Strategy<Value = Spec> {
    let settings = proptest::collection::vec((word(""), word("=:")), 0..6).prop_map(|pairs| {
        let mut unique: Vec<(String, String)> = Vec::new();
        for (key, value) in pairs {
            if !unique.iter().any(|(k, _)| *k == key) {
                unique.push((key, value));
            }
        }
        unique
    });
    (word("="), settings).prop_map(|(name, settings)| Spec { name, settings })
}

proptest! {
    #[test]
    fn display_parses_back(spec in specs()) {
        let text = spec.to_string();
        prop_assert_eq!(text.parse::<Spec>(), Ok(spec.clone()), "{}", text);
        prop_assert_eq!(Spec::parse_with(&text, EmptyItems::Skip), Ok(spec));
    }
}
