//! Splits a TOOL.md text into its YAML frontmatter and Markdown body.

/// The two parts of a TOOL.md file, with the 1-based line where each begins.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Split<'a> {
    pub(crate) yaml: &'a str,
    pub(crate) yaml_line: usize,
    pub(crate) body: &'a str,
    pub(crate) body_line: usize,
}

#[derive(Debug, PartialEq, Eq)]
pub(crate) enum SplitError {
    /// The first line is not `---`.
    Missing,
    /// No `---` line closes the frontmatter.
    Unclosed,
}

fn is_fence(line: &str) -> bool {
    line.trim_end() == "---"
}

/// Splits `text` (already stripped of a byte-order mark).
pub(crate) fn split(text: &str) -> Result<Split<'_>, SplitError> {
    let mut lines = text.split_inclusive('\n');
    let first = lines.next().ok_or(SplitError::Missing)?;
    if !is_fence(first) {
        return Err(SplitError::Missing);
    }
    let yaml_start = first.len();
    let mut offset = yaml_start;
    for (i, line) in lines.enumerate() {
        if is_fence(line) {
            let body_start = offset + line.len();
            return Ok(Split {
                yaml: &text[yaml_start..offset],
                yaml_line: 2,
                body: &text[body_start..],
                body_line: i + 3,
            });
        }
        offset += line.len();
    }
    Err(SplitError::Unclosed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_frontmatter_and_body() {
        let s = split("---\nname: a\n---\n# Body\n").unwrap();
        assert_eq!(s.yaml, "name: a\n");
        assert_eq!(s.yaml_line, 2);
        assert_eq!(s.body, "# Body\n");
        assert_eq!(s.body_line, 4);
    }

    #[test]
    fn handles_crlf_and_trailing_spaces() {
        let s = split("--- \r\nname: a\r\n---\r\nbody").unwrap();
        assert_eq!(s.yaml, "name: a\r\n");
        assert_eq!(s.body, "body");
    }

    #[test]
    fn empty_frontmatter_and_no_body() {
        let s = split("---\n---").unwrap();
        assert_eq!(s.yaml, "");
        assert_eq!(s.body, "");
        assert_eq!(s.body_line, 3);
    }

    #[test]
    fn reports_missing_and_unclosed() {
        assert_eq!(split(""), Err(SplitError::Missing));
        assert_eq!(split("# Title\n---\n"), Err(SplitError::Missing));
        assert_eq!(split("----\n"), Err(SplitError::Missing));
        assert_eq!(split("---\nname: a\n"), Err(SplitError::Unclosed));
    }
}
