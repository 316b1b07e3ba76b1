//! Whether `agent` colours what it prints, decided once per process, and the styles it uses.
//!
//! The rules (docs/cli.md, "Colour"), strongest first:
//! 1. `--color never` or `--color always` (a global flag, so every verb takes it);
//! 2. `NO_COLOR` set to anything non-empty: no colour;
//! 3. `CLICOLOR_FORCE` set to anything non-empty: colour, even off a terminal;
//! 4. `CLICOLOR=0`: no colour;
//! 5. otherwise colour only when the stream is a terminal and `TERM` is set and not `dumb`.
//!
//! Steps 2 to 5 are anstream's ([`anstream::AutoStream::choice`]); step 1 sets anstream's
//! process-wide choice, which clap's help output follows too. Each stream (stdout, stderr)
//! is decided on its own: `agent workspace diff | less` has no colour on stdout while its
//! warnings on a terminal's stderr still do.

use std::io::IsTerminal as _;

use anstyle::{AnsiColor, Style};

/// `--color WHEN`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum ColorWhen {
    /// Colour on a terminal, unless `NO_COLOR` says otherwise (or `CLICOLOR_FORCE` asks for it).
    #[default]
    Auto,
    /// Always colour, whatever the environment says.
    Always,
    /// Never colour, whatever the environment says.
    Never,
}

impl ColorWhen {
    /// The value of `--color` in `args` (the last one given, as clap reads it), looked up
    /// before clap parses, so that clap's own errors follow it too. Stops at `--`.
    pub fn from_args<I, S>(args: I) -> Option<Self>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<std::ffi::OsStr>,
    {
        let mut found = None;
        let mut args = args.into_iter().skip(1);
        while let Some(arg) = args.next() {
            let Some(arg) = arg.as_ref().to_str().map(str::to_owned) else {
                continue;
            };
            if arg == "--" {
                break;
            }
            let value = if arg == "--color" {
                args.next()
                    .and_then(|v| v.as_ref().to_str().map(str::to_owned))
            } else {
                arg.strip_prefix("--color=").map(str::to_owned)
            };
            match value.as_deref() {
                Some("auto") => found = Some(Self::Auto),
                Some("always") => found = Some(Self::Always),
                Some("never") => found = Some(Self::Never),
                _ => {}
            }
        }
        found
    }

    /// Makes this choice the process's: anstream's global choice (which clap follows) and
    /// what [`stdout`] and [`stderr`] answer.
    pub fn apply(self) {
        anstream::ColorChoice::write_global(self.into());
    }
}

impl From<ColorWhen> for anstream::ColorChoice {
    fn from(w: ColorWhen) -> Self {
        match w {
            ColorWhen::Auto => Self::Auto,
            ColorWhen::Always => Self::Always,
            ColorWhen::Never => Self::Never,
        }
    }
}

impl From<ColorWhen> for clap::ColorChoice {
    fn from(w: ColorWhen) -> Self {
        match w {
            ColorWhen::Auto => Self::Auto,
            ColorWhen::Always => Self::Always,
            ColorWhen::Never => Self::Never,
        }
    }
}

/// Whether what is printed on stdout is coloured.
pub fn stdout() -> bool {
    anstream::AutoStream::choice(&std::io::stdout()) != anstream::ColorChoice::Never
}

/// Whether what is printed on stderr is coloured.
pub fn stderr() -> bool {
    anstream::AutoStream::choice(&std::io::stderr()) != anstream::ColorChoice::Never
}

/// Whether stderr is a terminal a spinner may redraw (colour or not).
pub fn stderr_is_terminal() -> bool {
    std::io::stderr().is_terminal()
}

/// The styles `agent` paints with, or none: every string goes through [`Palette::paint`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Palette {
    on: bool,
}

/// The ink a piece of text is painted in: what it is, for its colour.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ink {
    /// A tool call's header (bold cyan).
    Call,
    /// Something that went well: allowed, exit 0 (green).
    Good,
    /// An error, a denial, a non-zero exit, stderr's heading (red).
    Bad,
    /// A notice or warning (yellow).
    Warn,
    /// A question asked of the person (magenta).
    Ask,
    /// Secondary detail: decisions, hooks, the run's summary, folds (dim).
    Dim,
    /// A diff's added line (green).
    Added,
    /// A diff's removed line (red).
    Removed,
    /// A diff's hunk header (cyan).
    Hunk,
    /// A diff's file header (bold).
    Heading,
}

impl Ink {
    fn style(self) -> Style {
        match self {
            Self::Call => Style::new().bold().fg_color(Some(AnsiColor::Cyan.into())),
            Self::Good | Self::Added => Style::new().fg_color(Some(AnsiColor::Green.into())),
            Self::Bad | Self::Removed => Style::new().fg_color(Some(AnsiColor::Red.into())),
            Self::Warn => Style::new().fg_color(Some(AnsiColor::Yellow.into())),
            Self::Ask => Style::new().fg_color(Some(AnsiColor::Magenta.into())),
            Self::Dim => Style::new().dimmed(),
            Self::Hunk => Style::new().fg_color(Some(AnsiColor::Cyan.into())),
            Self::Heading => Style::new().bold(),
        }
    }
}

impl Palette {
    /// A palette that colours when `on`.
    pub fn new(on: bool) -> Self {
        Self { on }
    }

    /// The palette for stdout ([`stdout`]).
    pub fn for_stdout() -> Self {
        Self::new(stdout())
    }

    /// The palette for stderr ([`stderr`]).
    pub fn for_stderr() -> Self {
        Self::new(stderr())
    }

    /// `text` in the colour of `ink` (as is when colour is off). `text` must already be
    /// sanitised: the escape sequences added here are the only ones printed.
    pub fn paint(self, ink: Ink, text: &str) -> String {
        if !self.on || text.is_empty() {
            return text.to_owned();
        }
        let style = ink.style();
        format!("{}{text}{}", style.render(), style.render_reset())
    }

    /// A unified diff with its lines coloured: `+` green, `-` red, `@@` cyan, `+++`/`---` bold.
    pub fn diff(self, text: &str) -> String {
        if !self.on {
            return text.to_owned();
        }
        let mut out = String::with_capacity(text.len() + 64);
        for line in text.split_inclusive('\n') {
            let body = line.strip_suffix('\n').unwrap_or(line);
            let ink = if line.starts_with("+++") || line.starts_with("---") {
                Some(Ink::Heading)
            } else if line.starts_with('+') {
                Some(Ink::Added)
            } else if line.starts_with('-') {
                Some(Ink::Removed)
            } else if line.starts_with("@@") {
                Some(Ink::Hunk)
            } else {
                None
            };
            match ink {
                Some(r) => out.push_str(&self.paint(r, body)),
                None => out.push_str(body),
            }
            if line.ends_with('\n') {
                out.push('\n');
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_color_flag_before_a_double_dash_counts() {
        let w =
            |a: &[&str]| ColorWhen::from_args(std::iter::once("agent").chain(a.iter().copied()));
        assert_eq!(w(&["workspace", "diff"]), None);
        assert_eq!(w(&["--color", "never", "run", "x"]), Some(ColorWhen::Never));
        assert_eq!(w(&["run", "x", "--color=always"]), Some(ColorWhen::Always));
        assert_eq!(
            w(&["--color=never", "run", "--color", "auto"]),
            Some(ColorWhen::Auto)
        );
        assert_eq!(w(&["exec", "--", "ls", "--color=always"]), None);
        assert_eq!(w(&["--color", "purple"]), None);
    }

    #[test]
    fn a_palette_that_is_off_adds_nothing() {
        let off = Palette::new(false);
        assert_eq!(off.paint(Ink::Bad, "x"), "x");
        assert_eq!(off.diff("+a\n-b\n"), "+a\n-b\n");
        let on = Palette::new(true);
        assert_eq!(on.paint(Ink::Bad, "x"), "\u{1b}[31mx\u{1b}[0m");
        assert_eq!(
            on.diff("--- a/f\n+a\n ctx\n"),
            "\u{1b}[1m--- a/f\u{1b}[0m\n\u{1b}[32m+a\u{1b}[0m\n ctx\n"
        );
    }
}
