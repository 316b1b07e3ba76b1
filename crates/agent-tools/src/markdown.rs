//! HTML to Markdown for WebFetch: enough structure for a model to read a page (headings,
//! paragraphs, links, lists, code, emphasis), with scripts, styles and the head dropped and
//! entities decoded. A scanner over the tags, not a browser: malformed HTML degrades to text.

/// The Markdown of `html`.
pub fn html_to_markdown(html: &str) -> String {
    let mut out = String::with_capacity(html.len() / 2);
    let mut rest = html;
    let mut skip_until: Option<&'static str> = None;
    let mut href_stack: Vec<Option<String>> = Vec::new();
    let mut pre = 0usize;
    while !rest.is_empty() {
        let Some(lt) = rest.find('<') else {
            if skip_until.is_none() {
                text(&mut out, rest, pre > 0);
            }
            break;
        };
        if skip_until.is_none() {
            text(&mut out, &rest[..lt], pre > 0);
        }
        rest = &rest[lt..];
        if rest.starts_with("<!--") {
            rest = rest.find("-->").map_or("", |e| &rest[e + 3..]);
            continue;
        }
        let Some(gt) = rest.find('>') else { break };
        let tag = &rest[1..gt];
        rest = &rest[gt + 1..];
        let closing = tag.starts_with('/');
        let name: String = tag
            .trim_start_matches('/')
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric())
            .collect::<String>()
            .to_ascii_lowercase();
        if let Some(end) = skip_until {
            if closing && name == end {
                skip_until = None;
            }
            continue;
        }
        match (name.as_str(), closing) {
            ("script", false) => skip_until = Some("script"),
            ("style", false) => skip_until = Some("style"),
            ("head", false) => skip_until = Some("head"),
            ("noscript", false) => skip_until = Some("noscript"),
            ("h1" | "h2" | "h3" | "h4" | "h5" | "h6", false) => {
                block(&mut out);
                let level = name[1..].parse::<usize>().unwrap_or(1);
                out.push_str(&"#".repeat(level));
                out.push(' ');
            }
            (
                "h1" | "h2" | "h3" | "h4" | "h5" | "h6" | "p" | "div" | "section" | "article"
                | "table" | "ul" | "ol" | "blockquote",
                _,
            ) => block(&mut out),
            ("br", _) => out.push('\n'),
            ("tr", true) => out.push('\n'),
            ("td" | "th", true) => out.push_str(" | "),
            ("li", false) => {
                line(&mut out);
                out.push_str("- ");
            }
            ("pre", false) => {
                block(&mut out);
                out.push_str("```\n");
                pre += 1;
            }
            ("pre", true) => {
                pre = pre.saturating_sub(1);
                line(&mut out);
                out.push_str("```\n\n");
            }
            ("code", _) if pre == 0 => out.push('`'),
            ("strong" | "b", _) => out.push_str("**"),
            ("em" | "i", _) => out.push('*'),
            ("a", false) => {
                href_stack.push(attr(tag, "href"));
                out.push('[');
            }
            ("a", true) => match href_stack.pop().flatten() {
                Some(h) => out.push_str(&format!("]({h})")),
                None => out.push(']'),
            },
            ("img", _) => {
                if let Some(alt) = attr(tag, "alt").filter(|a| !a.is_empty()) {
                    out.push_str(&format!("[image: {alt}]"));
                }
            }
            _ => {}
        }
    }
    tidy(&out)
}

/// Text between tags: entities decoded, whitespace collapsed (kept as is inside `pre`).
fn text(out: &mut String, raw: &str, pre: bool) {
    let decoded = decode(raw);
    if pre {
        out.push_str(&decoded);
        return;
    }
    let mut last_space = out.ends_with([' ', '\n']) || out.is_empty();
    for c in decoded.chars() {
        if c.is_whitespace() {
            if !last_space {
                out.push(' ');
                last_space = true;
            }
        } else {
            out.push(c);
            last_space = false;
        }
    }
}

fn block(out: &mut String) {
    let trimmed = out.trim_end_matches(' ').len();
    out.truncate(trimmed);
    if !out.is_empty() && !out.ends_with("\n\n") {
        out.push_str(if out.ends_with('\n') { "\n" } else { "\n\n" });
    }
}

fn line(out: &mut String) {
    let trimmed = out.trim_end_matches(' ').len();
    out.truncate(trimmed);
    if !out.is_empty() && !out.ends_with('\n') {
        out.push('\n');
    }
}

/// The value of attribute `name` in a tag's text.
fn attr(tag: &str, name: &str) -> Option<String> {
    let lower = tag.to_ascii_lowercase();
    let at = lower.find(&format!("{name}="))?;
    let value = &tag[at + name.len() + 1..];
    let (quote, body) = match value.chars().next()? {
        q @ ('"' | '\'') => (Some(q), &value[1..]),
        _ => (None, value),
    };
    let end = match quote {
        Some(q) => body.find(q)?,
        None => body
            .find(|c: char| c.is_whitespace() || c == '>')
            .unwrap_or(body.len()),
    };
    Some(decode(&body[..end]))
}

/// The common named entities and numeric references.
fn decode(s: &str) -> String {
    if !s.contains('&') {
        return s.to_owned();
    }
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find('&') {
        out.push_str(&rest[..i]);
        rest = &rest[i..];
        let Some(end) = rest[..rest.len().min(12)].find(';') else {
            out.push('&');
            rest = &rest[1..];
            continue;
        };
        let entity = &rest[1..end];
        let ch = match entity {
            "amp" => Some('&'),
            "lt" => Some('<'),
            "gt" => Some('>'),
            "quot" => Some('"'),
            "apos" | "#39" => Some('\''),
            "nbsp" => Some(' '),
            e if e.starts_with("#x") || e.starts_with("#X") => u32::from_str_radix(&e[2..], 16)
                .ok()
                .and_then(char::from_u32),
            e if e.starts_with('#') => e[1..].parse::<u32>().ok().and_then(char::from_u32),
            _ => None,
        };
        match ch {
            Some(c) => {
                out.push(c);
                rest = &rest[end + 1..];
            }
            None => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// At most one blank line in a row; no trailing spaces.
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
}
