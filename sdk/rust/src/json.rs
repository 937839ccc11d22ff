//! The details object of a property evaluation: a tiny JSON writer (no
//! serde). Keys are the string literals of the call site; every value is
//! formatted with `{:?}` and emitted as a JSON string, so the object is always
//! flat `{"key":"<debug text>",...}`.
use std::fmt::{Debug, Write};

/// Appends `s` to `out` as the inside of a JSON string: `"` and `\` are
/// escaped, control characters (U+0000..U+001F) use the short escapes where
/// JSON has one (`\b \t \n \f \r`) and `\u00XX` otherwise. Everything else,
/// including non-ASCII, is copied as UTF-8.
pub fn escape_into(out: &mut String, s: &str) {
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{08}' => out.push_str("\\b"),
            '\u{0c}' => out.push_str("\\f"),
            c if (c as u32) < 0x20 => {
                // Infallible: writing to a String.
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
}

/// Builds the details object field by field. An object with no fields
/// renders as the empty string, which the ABI reads as "no details".
#[derive(Debug, Default)]
pub struct Details {
    buf: String,
    scratch: String,
}

impl Details {
    /// An empty object.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds `"key":"<{:?} of value, escaped>"`.
    pub fn field<T: Debug + ?Sized>(mut self, key: &str, value: &T) -> Self {
        self.buf.push(if self.buf.is_empty() { '{' } else { ',' });
        self.buf.push('"');
        escape_into(&mut self.buf, key);
        self.buf.push_str("\":\"");
        self.scratch.clear();
        // Infallible for a String, unless the value's Debug impl itself
        // reports an error; then whatever it wrote so far is kept.
        let _ = write!(self.scratch, "{value:?}");
        escape_into(&mut self.buf, &self.scratch);
        self.buf.push('"');
        self
    }

    /// The JSON text: `{...}`, or `""` when no field was added.
    pub fn finish(mut self) -> String {
        if !self.buf.is_empty() {
            self.buf.push('}');
        }
        self.buf
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `s` as a complete JSON string literal, quotes included.
    fn quote(s: &str) -> String {
        let mut out = String::from("\"");
        escape_into(&mut out, s);
        out.push('"');
        out
    }

    #[test]
    fn plain_text_is_copied() {
        assert_eq!(quote("hello, world"), "\"hello, world\"");
        assert_eq!(quote(""), "\"\"");
    }

    #[test]
    fn quotes_and_backslashes_are_escaped() {
        assert_eq!(quote(r#"say "hi""#), r#""say \"hi\"""#);
        assert_eq!(quote(r"C:\dir\file"), r#""C:\\dir\\file""#);
        assert_eq!(quote(r#"\""#), r#""\\\"""#);
    }

    #[test]
    fn control_characters_are_escaped() {
        assert_eq!(quote("a\nb\rc\td"), r#""a\nb\rc\td""#);
        assert_eq!(quote("\u{08}\u{0c}"), r#""\b\f""#);
        assert_eq!(quote("\u{0}\u{1}\u{1f}"), r#""\u0000\u0001\u001f""#);
        // DEL and non-ASCII need no escape in JSON.
        assert_eq!(quote("\u{7f}é→😀"), "\"\u{7f}é→😀\"");
    }

    #[test]
    fn empty_details_are_the_empty_string() {
        assert_eq!(Details::new().finish(), "");
    }

    #[test]
    fn values_are_debug_formatted_json_strings() {
        let d = Details::new()
            .field("balance", &-3i64)
            .field("who", "alice")
            .finish();
        assert_eq!(d, r#"{"balance":"-3","who":"\"alice\""}"#);
    }

    #[test]
    fn nested_debug_output_is_escaped() {
        let d = Details::new()
            .field("v", &vec!["a\"b", "c\\d"])
            .field("o", &Some('\n'))
            .field("k\"ey", &())
            .finish();
        assert_eq!(
            d,
            r#"{"v":"[\"a\\\"b\", \"c\\\\d\"]","o":"Some('\\n')","k\"ey":"()"}"#
        );
    }
}
