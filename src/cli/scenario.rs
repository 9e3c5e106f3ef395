//! A scenario named on the command line, resolved here and nowhere else: a
//! scenario file (a path to a file, or one that ends in .toml), read and
//! parsed, or a built-in's id.

use replayground::catalog::Named;
use replayground::Scenario;

/// What builds scenario `target` (a built-in, or a file read once) with
/// `params` (JSON, as `--params` gives them), as often as asked, on any thread.
pub(super) fn builder(
    target: &str,
    params: Option<&str>,
) -> Result<impl Fn() -> replayground::Result<Box<dyn Scenario>> + Sync, Box<dyn std::error::Error>>
{
    let params: serde_json::Value = match params {
        Some(json) => serde_json::from_str(json).map_err(|e| format!("invalid --params: {e}"))?,
        None => serde_json::Value::Null,
    };
    let named = named(target)?;
    Ok(move || named.build(&params))
}

/// Scenario `target` built once, with `params` as in [`builder`].
pub(super) fn build(
    target: &str,
    params: Option<&str>,
) -> Result<Box<dyn Scenario>, Box<dyn std::error::Error>> {
    Ok(builder(target, params)?()?)
}

/// What `target` names: a scenario file (a path to a file, or one that
/// ends in .toml), read and parsed, or a built-in's id.
fn named(target: &str) -> Result<Named, Box<dyn std::error::Error>> {
    let path = std::path::Path::new(target);
    if !path.is_file() && !target.ends_with(".toml") {
        return Ok(Named::Builtin(target.to_string()));
    }
    let (source, stem) = read_source(target)?;
    Ok(Named::file(&source, &stem).map_err(|e| format!("{target}: {e}"))?)
}

/// A scenario file's text, and the id its name gives it.
pub(super) fn read_source(target: &str) -> Result<(String, String), Box<dyn std::error::Error>> {
    let path = std::path::Path::new(target);
    let source = std::fs::read_to_string(path).map_err(|e| format!("cannot read {target}: {e}"))?;
    let stem = path
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("scenario");
    Ok((source, stem.to_string()))
}
