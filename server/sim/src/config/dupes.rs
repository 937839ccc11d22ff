//! Duplicate keys in a JSON object: `serde_json::Value` keeps the last one
//! silently, and a config must not ignore anything silently.
use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use std::cell::RefCell;

/// The JSON path of the first key given twice in one object, and the key.
pub fn first_duplicate(text: &str) -> Option<(String, String)> {
    let found = RefCell::new(None);
    let mut de = serde_json::Deserializer::from_str(text);
    // Syntax errors are the caller's to report, from its own parse.
    let _ = Check { path: "$".into(), found: &found }.deserialize(&mut de);
    found.into_inner()
}

struct Check<'a> {
    path: String,
    found: &'a RefCell<Option<(String, String)>>,
}

impl<'de> DeserializeSeed<'de> for Check<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Check<'_> {
    type Value = ();
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }
    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }
    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }
    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }
    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let mut i = 0usize;
        while seq.next_element_seed(Check { path: format!("{}[{i}]", self.path), found: self.found })?.is_some() {
            i += 1;
        }
        Ok(())
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let mut seen = std::collections::BTreeSet::new();
        while let Some(key) = map.next_key::<String>()? {
            let path = format!("{}.{key}", self.path);
            if !seen.insert(key.clone()) && self.found.borrow().is_none() {
                *self.found.borrow_mut() = Some((path.clone(), key));
            }
            map.next_value_seed(Check { path, found: self.found })?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_first_key_given_twice_with_its_path() {
        assert_eq!(first_duplicate(r#"{"a": 1, "b": [ {"c": 1}, {"c": 2, "d": 3, "c": 4} ]}"#), Some(("$.b[1].c".into(), "c".into())));
        assert_eq!(first_duplicate(r#"{"duration": "1s", "duration": "2s"}"#), Some(("$.duration".into(), "duration".into())));
        assert_eq!(first_duplicate(r#"{"a": {"x": 1}, "b": {"x": 1}}"#), None);
        assert_eq!(first_duplicate("not json"), None);
    }
}
