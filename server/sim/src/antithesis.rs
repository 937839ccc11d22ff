//! The Antithesis SDK's local output (`ANTITHESIS_SDK_LOCAL_OUTPUT`), read
//! as seedfall's own vocabulary: a program built with the Antithesis SDK
//! writes one JSON line per event, and each becomes a setup-complete mark,
//! a watermark's guidance or a property evaluation. Parsing lives here; the
//! world only applies what a line says.
use crate::props::{Evaluation, PropertyKind};

/// What one line says.
#[derive(Debug)]
pub enum Line {
    /// `antithesis_setup`: the program is ready; faults may start.
    Setup,
    /// Numeric guidance: `left - right` of a numeric assertion improved.
    Guide { name: String, maximize: bool, gap: f64 },
    /// An assertion evaluated.
    Assert(Evaluation),
}

/// The line's meaning, or `None` for what carries none: a line that is not
/// JSON, a catalog entry (an assertion not hit), boolean or JSON guidance,
/// an assertion of a kind seedfall does not know.
pub fn parse(line: &str) -> Option<Line> {
    let v = serde_json::from_str::<serde_json::Value>(line).ok()?;
    if v.get("antithesis_setup").is_some() {
        return Some(Line::Setup);
    }
    if let Some(g) = v.get("antithesis_guidance") {
        // Numeric guidance: the SDK writes a line each time `left - right`
        // of a numeric assertion improves, named by its message. Boolean
        // and JSON guidance have no watermark.
        if g["guidance_type"] != "numeric" || g["hit"] != true {
            return None;
        }
        let gap = crate::props::operands_gap(&g["guidance_data"]["left"], &g["guidance_data"]["right"])?;
        return Some(Line::Guide { name: g["message"].as_str()?.to_string(), maximize: g["maximize"].as_bool()?, gap });
    }
    let a = v.get("antithesis_assert")?;
    if a["hit"] != true {
        return None; // a catalog entry from instrumentation, not an evaluation
    }
    let kind = match a["display_type"].as_str() {
        Some("Always") => PropertyKind::Always,
        Some("AlwaysOrUnreachable") => PropertyKind::AlwaysOrUnreachable,
        Some("Sometimes") => PropertyKind::Sometimes,
        Some("Reachable") => PropertyKind::Reachable,
        Some("Unreachable") => PropertyKind::Unreachable,
        _ => return None,
    };
    let message = a["message"].as_str()?;
    let location = a["location"]["file"].as_str().map(|f| match a["location"]["begin_line"].as_u64() {
        Some(line) => format!("{f}:{line}"),
        None => f.to_string(),
    });
    let details = a.get("details").map(|d| d.to_string()).unwrap_or_default();
    Some(Line::Assert(Evaluation { kind, cond: a["condition"] == true, message: message.to_string(), details, location }))
}
