//! HTML to Markdown for WebFetch, by `htmd` (html5ever's spec parser, so malformed HTML is read as
//! a browser reads it and every named entity is decoded): headings, paragraphs, links, lists,
//! tables, code and emphasis survive; scripts, styles, the head, `noscript`, forms and embedded
//! objects go.

use htmd::HtmlToMarkdown;
use htmd::options::{BulletListMarker, Options};

/// Elements whose content is noise to a reader of the page.
const SKIPPED: &[&str] = &[
    "head", "script", "style", "noscript", "template", "iframe", "object", "embed", "svg",
    "canvas", "form", "button", "select", "input", "textarea", "nav",
];

/// The Markdown of `html`; a page htmd cannot read at all comes back as its text with the tags
/// left in, so the model still sees it.
pub fn html_to_markdown(html: &str) -> String {
    let converter = HtmlToMarkdown::builder()
        .options(Options {
            bullet_list_marker: BulletListMarker::Dash,
            ul_bullet_spacing: 1,
            ol_number_spacing: 1,
            ..Options::default()
        })
        .skip_tags(SKIPPED.to_vec())
        .build();
    let md = converter.convert(html).unwrap_or_else(|_| html.to_owned());
    tidy(&md)
}

/// At most one blank line in a row; no trailing spaces; one final newline.
fn tidy(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut blank = 0;
    for l in s.lines() {
        let l = l.trim_end();
        if l.is_empty() {
            blank += 1;
            if blank > 1 {
                continue;
            }
        } else {
            blank = 0;
        }
        out.push_str(l);
        out.push('\n');
    }
    out.trim().to_owned() + "\n"
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn structure_survives_and_noise_goes() {
        let html = "<html><head><title>T</title><style>p{}</style></head><body>\
            <h1>Title &amp; more</h1><script>alert(1)</script>\
            <p>Some <b>bold</b> and <a href=\"https://x.test/a?b=1&amp;c=2\">a link</a>.</p>\
            <ul><li>one</li><li>two</li></ul><pre><code>let x = 1;\nlet y = 2;</code></pre>\
            <p>caf&#233; &#x41;</p><!-- gone --></body></html>";
        assert_eq!(
            html_to_markdown(html),
            "# Title & more\n\nSome **bold** and [a link](https://x.test/a?b=1&c=2).\n\n- one\n- two\n\n```\nlet x = 1;\nlet y = 2;\n```\n\ncafé A\n"
        );
    }

    #[test]
    fn tables_nested_lists_named_entities_and_malformed_html_read_as_a_browser_reads_them() {
        let html = "<body><p>caf&eacute; &mdash; d&eacute;j&agrave; vu</p>\
            <table><tr><th>name</th><th>size</th></tr><tr><td>a.rs</td><td>1</td></tr></table>\
            <ul><li>outer<ul><li>inner</li></ul></li></ul>\
            <p title=\"a > b\">kept<p>unclosed<nav>menu</nav><form><input value=x>gone</form>";
        let md = html_to_markdown(html);
        assert!(md.contains("café — déjà vu"), "{md}");
        assert!(
            md.contains("| name | size |") && md.contains("| a.rs | 1 "),
            "{md}"
        );
        assert!(md.contains("- outer\n  - inner"), "{md}");
        assert!(md.contains("kept\n\nunclosed"), "{md}");
        assert!(
            !md.contains("menu") && !md.contains("gone") && !md.contains("a > b"),
            "{md}"
        );
    }
}
