//! Reading a recorded-rounds file (`hangs --observations FILE`); the format and its
//! validation are `core::observations`'.

use std::path::Path;

use crate::core::hangs::HangRound;
use crate::core::observations::parse;

/// Read and validate an observations file (`-`: standard input, as for `--snapshot -`); the
/// error names the file and what is wrong.
pub fn load(path: &Path) -> Result<Vec<HangRound>, String> {
    let text = if path == Path::new("-") {
        let mut text = String::new();
        std::io::Read::read_to_string(&mut std::io::stdin().lock(), &mut text)
            .map_err(|e| format!("cannot read observations from standard input: {e}"))?;
        text
    } else {
        std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read observations file `{}`: {e}", path.display()))?
    };
    parse(&text).map_err(|e| format!("observations file `{}` {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_file_names_the_path() {
        let e = load(Path::new("/nonexistent/obs.json")).unwrap_err();
        assert!(e.contains("/nonexistent/obs.json"), "{e}");
    }
}
