use super::*;

const LIMITS: ExpansionLimits = ExpansionLimits {
    matches: 1_000,
    entries: 10_000,
};

fn reach(p: &str, t: &str) -> Option<Reach> {
    Pattern::new(Path::new(p)).reach(Path::new(t))
}

fn component(p: &str, n: &str) -> bool {
    Part::parse(p).matches(n)
}

#[test]
fn component_patterns_match_as_bash_does() {
    for (p, n) in [
        ("*", "abc"),
        ("sec*", "secret"),
        ("*.rs", "main.rs"),
        ("?", "a"),
        ("a*b*c", "aXbYc"),
        ("[abc]x", "bx"),
        ("[!abc]x", "dx"),
        ("[^abc]x", "dx"),
        ("[a-c]", "b"),
        ("[[:digit:]]*", "9lives"),
        ("[]]", "]"),
        ("[x", "[x"),
        (".*", ".env"),
        ("*", ".env"),
    ] {
        assert!(component(p, n), "{p} ~ {n}");
    }
    for (p, n) in [
        ("sec*", "public"),
        ("*.rs", "main.rc"),
        ("?", "ab"),
        ("[abc]x", "dx"),
        ("[!abc]x", "ax"),
        ("[a-c]", "d"),
    ] {
        assert!(!component(p, n), "{p} !~ {n}");
    }
}

#[test]
fn whatever_case_or_locale_could_decide_is_taken_to_match() {
    for (p, n) in [
        // nocaseglob
        ("SEC*", "secret"),
        ("[A-C]x", "bx"),
        ("[[:upper:]]x", "ax"),
        // UTF-8 locale: one character; C locale: one byte each.
        ("?", "é"),
        ("??", "é"),
        ("[[:alpha:]]", "é"),
        ("[!a]", "é"),
        ("[[=e=]]", "x"),
        ("[[:nosuchclass:]]", "x"),
    ] {
        assert!(component(p, n), "{p} ~ {n}");
    }
    for (p, n) in [
        // quoted (`'[a]'*`), a bracket expression is its own characters
        ("[a]*", "[a]x"),
        ("x[!b]", "x[!b]"),
        ("[ab]", "[AB]"),
    ] {
        assert!(component(p, n), "{p} ~ {n}");
    }
    for (p, n) in [
        ("???", "é"),
        ("[[:digit:]]", "x"),
        ("[!a-z]", "q"),
        ("[a]", "[a"),
    ] {
        assert!(!component(p, n), "{p} !~ {n}");
    }
}

#[test]
fn a_parent_component_that_matches_reaches_below_a_denied_directory() {
    for p in [
        "/w/s*/k",
        "/w/*/k",
        "/w/?ecret/k",
        "/w/[s]ecret/k",
        "/w/[!x]ecret/k",
        "/w/[[:alpha:]]ecret/k",
        "/w/@(secret|x)/k",
        "/w/!(x)/k",
        "/w/sec{1..3}/k",
        "/w/**/k",
        "/**/k",
        "/w/SECRET/k",
        "/w/s*",
        "/w/*",
    ] {
        assert_eq!(reach(p, "/w/secret"), Some(Reach::AtOrUnder), "{p}");
    }
    assert_eq!(reach("/*", "/w/secret"), Some(Reach::Above));
    assert_eq!(reach("/w/x*/k", "/w/secret"), None);
    assert_eq!(reach("/w/s?/k", "/w/secret"), None);
    assert_eq!(reach("/v/*/k", "/w/secret"), None);
}

#[test]
fn dots_are_matched_only_by_a_leading_dot() {
    assert!(!component("*", ".."));
    assert!(component("*", ".env"));
    assert!(component(".*", ".."));
    assert!(component(".?", ".."));
}

#[test]
fn expansion_finds_links_and_dot_dot() {
    let dir = tempfile::tempdir().unwrap();
    let d = std::fs::canonicalize(dir.path()).unwrap();
    std::fs::create_dir_all(d.join("a/sub")).unwrap();
    std::fs::write(d.join("a/f1"), "").unwrap();
    std::fs::write(d.join("a/f2"), "").unwrap();
    std::os::unix::fs::symlink("/etc/hostname", d.join("secret")).unwrap();
    let expand = |p: &str, globstar: bool| {
        Pattern::new(&d.join(p))
            .expand(globstar, LIMITS)
            .unwrap()
            .matches
    };
    assert_eq!(expand("a/f*", false).len(), 2);
    assert_eq!(expand("sec*", false), [d.join("secret")]);
    assert!(expand("a/sub/.*/f1", false).contains(&d.join("a/sub/../f1")));
    assert!(expand("*", false).contains(&d.join("secret")));
    assert!(!expand("*", false).contains(&d.join("..")));
    assert!(expand(".*", false).contains(&d.join("..")));
    assert!(expand("**/f1", true).contains(&d.join("a/f1")));
    std::fs::write(d.join("a/sub/f3"), "").unwrap();
    assert!(expand("**/f3", true).contains(&d.join("a/sub/f3")));
    assert!(!expand("**/f3", false).contains(&d.join("a/sub/f3")));
    // A literal component is kept after every match, directory or not.
    assert!(expand("*/f1", false).contains(&d.join("secret/f1")));
    let listed = Pattern::new(&d.join("*/f*"))
        .expand(false, LIMITS)
        .unwrap()
        .listed;
    assert!(listed.contains(&d.join("a")), "{listed:?}");
    assert!(!listed.contains(&d.join("secret")), "{listed:?}");
}

#[test]
fn an_expansion_past_its_limits_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    for i in 0..=10 {
        std::fs::write(dir.path().join(format!("f{i}")), "").unwrap();
    }
    let pattern = Pattern::new(&dir.path().join("f*"));
    let matches = ExpansionLimits {
        matches: 10,
        entries: 100,
    };
    let entries = ExpansionLimits {
        matches: 100,
        entries: 10,
    };
    assert_eq!(
        pattern.expand(false, matches),
        Err(ExpandError::TooMany(matches))
    );
    assert_eq!(
        pattern.expand(false, entries),
        Err(ExpandError::TooMany(entries))
    );
    assert_eq!(pattern.expand(false, LIMITS).unwrap().matches.len(), 11);
    let long = format!("/{}", ["a*"; MAX_COMPONENTS + 1].join("/"));
    assert_eq!(
        Pattern::new(Path::new(&long)).expand(false, LIMITS),
        Err(ExpandError::TooLong)
    );
}
