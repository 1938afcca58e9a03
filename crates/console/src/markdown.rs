//! TOOL.md documentation as HTML. Tool folders are untrusted: raw HTML in the Markdown is
//! shown as text, links keep only safe schemes (`http`, `https`, `mailto`, or a path or
//! fragment) and open nothing but a new page, and images become links (a page loads
//! nothing from elsewhere).

use pulldown_cmark::{CowStr, Event, LinkType, Options, Parser, Tag, TagEnd, html};

/// The HTML of `markdown`, safe to put in a page.
pub(crate) fn render(markdown: &str) -> String {
    let options = Options::ENABLE_TABLES
        | Options::ENABLE_STRIKETHROUGH
        | Options::ENABLE_TASKLISTS
        | Options::ENABLE_FOOTNOTES;
    let events = Parser::new_ext(markdown, options).map(|event| match event {
        // Raw HTML, as text: escaped by the writer.
        Event::Html(text) | Event::InlineHtml(text) => Event::Text(text),
        Event::Start(Tag::Link {
            link_type,
            dest_url,
            title,
            id,
        }) => Event::Start(Tag::Link {
            link_type,
            dest_url: safe_url(dest_url),
            title,
            id,
        }),
        Event::Start(Tag::Image {
            dest_url,
            title,
            id,
            ..
        }) => Event::Start(Tag::Link {
            link_type: LinkType::Inline,
            dest_url: safe_url(dest_url),
            title,
            id,
        }),
        Event::End(TagEnd::Image) => Event::End(TagEnd::Link),
        other => other,
    });
    let mut out = String::with_capacity(markdown.len() * 3 / 2);
    html::push_html(&mut out, events);
    out
}

/// `url` if its scheme is a safe one (or it has none), else `#`.
fn safe_url(url: CowStr<'_>) -> CowStr<'_> {
    let trimmed = url.trim_start();
    let scheme_end = trimmed.find([':', '/', '?', '#']);
    let safe = match scheme_end {
        Some(i) if trimmed[i..].starts_with(':') => {
            let scheme = trimmed[..i].to_ascii_lowercase();
            matches!(scheme.as_str(), "http" | "https" | "mailto")
        }
        _ => !trimmed.chars().any(|c| c.is_control()),
    };
    if safe { url } else { CowStr::Borrowed("#") }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markdown_is_rendered_and_nothing_runs() {
        let html = render(
            "# Slow\n\nReports `step N` as **progress**.\n\n| a | b |\n|---|---|\n| 1 | 2 |\n",
        );
        assert!(html.contains("<h1>Slow</h1>"), "{html}");
        assert!(html.contains("<code>step N</code>") && html.contains("<strong>progress</strong>"));
        assert!(html.contains("<table>"), "{html}");
        for hostile in [
            "<script>alert(1)</script>",
            "<img src=x onerror=alert(1)>",
            "[x](javascript:alert(1))",
            "[x](JavaScript:alert(1))",
            "[x]( javascript:alert(1))",
            "[x](data:text/html,<script>alert(1)</script>)",
            "![x](javascript:alert(1))",
            "<a href=\"javascript:alert(1)\">x</a>",
            "[x](vbscript:msgbox)",
        ] {
            let html = render(hostile);
            assert!(!html.contains("<script"), "{hostile} → {html}");
            assert!(!html.contains("<img"), "{hostile} → {html}");
            // Only a real tag matters: the same text escaped is harmless.
            let html = html.to_lowercase();
            for tag in [
                "<a href=\"javascript",
                "<a href=\"data:",
                "<a href=\"vbscript:",
            ] {
                assert!(!html.contains(tag), "{hostile} → {html}");
            }
        }
        assert!(render("[ok](https://example.com/x)").contains("href=\"https://example.com/x\""));
        assert!(render("[ok](#inputs)").contains("href=\"#inputs\""));
        assert!(
            render("![pic](https://example.com/a.png)")
                .contains("<a href=\"https://example.com/a.png\"")
        );
    }
}
