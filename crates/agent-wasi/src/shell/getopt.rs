//! GNU `getopt_long` as the commands the shell runs itself (`xargs`, `env`, `timeout`) parse
//! their options: with `+`, so options end at the first operand (the command they run), `--`
//! ends them too, short options cluster (`-0rn2`), a short option's argument may be attached
//! (`-n2`) or the next word, a long option may be abbreviated to a unique prefix and takes its
//! argument as `--name=VALUE` or the next word (optional arguments only with `=`). Errors carry
//! GNU's wording, then its `Try 'PROGRAM --help'` hint.

/// Whether an option takes an argument.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ArgKind {
    /// A flag.
    None,
    /// `--name=VALUE` or `-xVALUE` only.
    Optional,
    /// Attached or the next word.
    Required,
}

/// One command's options.
pub(crate) struct Spec {
    /// The command name, for messages.
    pub program: &'static str,
    /// Short options: the letter, the long name they act as, their argument.
    pub short: &'static [(char, &'static str, ArgKind)],
    /// Long options and their argument.
    pub long: &'static [(&'static str, ArgKind)],
}

impl Spec {
    /// A usage error: the message, then GNU's hint.
    pub fn usage(&self, message: String) -> Vec<String> {
        vec![
            message,
            format!("Try '{} --help' for more information.", self.program),
        ]
    }

    /// Parses the options at the start of `args`, calling `apply(long_name, value)` for each in
    /// order; the index of the first operand (`args.len()` when there is none). The error is
    /// the lines to print, from getopt or from `apply`.
    pub fn parse(
        &self,
        args: &[String],
        mut apply: impl FnMut(&'static str, Option<String>) -> Result<(), Vec<String>>,
    ) -> Result<usize, Vec<String>> {
        let program = self.program;
        let mut i = 0;
        while i < args.len() {
            let arg = &args[i];
            if arg == "--" {
                return Ok(i + 1);
            }
            if let Some(long) = arg.strip_prefix("--") {
                let (name, inline) = match long.split_once('=') {
                    Some((n, v)) => (n, Some(v.to_owned())),
                    None => (long, None),
                };
                let (long_name, kind) = *self.long(name).ok_or_else(|| {
                    self.usage(format!("{program}: unrecognized option '--{name}'"))
                })?;
                let value = match kind {
                    ArgKind::None => {
                        if inline.is_some() {
                            return Err(self.usage(format!(
                                "{program}: option '--{long_name}' doesn't allow an argument"
                            )));
                        }
                        None
                    }
                    ArgKind::Optional => inline,
                    ArgKind::Required => match inline {
                        Some(v) => Some(v),
                        None => {
                            i += 1;
                            Some(args.get(i).cloned().ok_or_else(|| {
                                self.usage(format!(
                                    "{program}: option '--{long_name}' requires an argument"
                                ))
                            })?)
                        }
                    },
                };
                apply(long_name, value)?;
                i += 1;
                continue;
            }
            let Some(cluster) = arg.strip_prefix('-').filter(|c| !c.is_empty()) else {
                return Ok(i);
            };
            for (at, c) in cluster.char_indices() {
                let rest = &cluster[at + c.len_utf8()..];
                let Some((_, name, kind)) = self.short.iter().find(|(s, _, _)| *s == c) else {
                    return Err(self.usage(format!("{program}: invalid option -- '{c}'")));
                };
                match kind {
                    ArgKind::None => apply(name, None)?,
                    ArgKind::Optional => {
                        apply(name, (!rest.is_empty()).then(|| rest.to_owned()))?;
                        break;
                    }
                    ArgKind::Required => {
                        let value = if rest.is_empty() {
                            i += 1;
                            args.get(i).cloned().ok_or_else(|| {
                                self.usage(format!(
                                    "{program}: option requires an argument -- '{c}'"
                                ))
                            })?
                        } else {
                            rest.to_owned()
                        };
                        apply(name, Some(value))?;
                        break;
                    }
                }
            }
            i += 1;
        }
        Ok(args.len())
    }

    /// The long option `name` names: exactly, or as the unique option it is a prefix of.
    fn long(&self, name: &str) -> Option<&(&'static str, ArgKind)> {
        self.long.iter().find(|(l, _)| *l == name).or_else(|| {
            let mut matches = self.long.iter().filter(|(l, _)| l.starts_with(name));
            match (matches.next(), matches.next()) {
                (Some(m), None) if !name.is_empty() => Some(m),
                _ => None,
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SPEC: Spec = Spec {
        program: "demo",
        short: &[
            ('a', "all", ArgKind::None),
            ('n', "number", ArgKind::Required),
            ('e', "eof", ArgKind::Optional),
        ],
        long: &[
            ("all", ArgKind::None),
            ("number", ArgKind::Required),
            ("eof", ArgKind::Optional),
            ("every", ArgKind::None),
        ],
    };

    /// The options seen, in order, and where the operands start.
    type Parsed = (Vec<(String, Option<String>)>, usize);

    fn parse(args: &[&str]) -> Result<Parsed, Vec<String>> {
        let args: Vec<String> = args.iter().map(|s| (*s).to_owned()).collect();
        let mut seen = Vec::new();
        let at = SPEC.parse(&args, |name, value| {
            seen.push((name.to_owned(), value));
            Ok(())
        })?;
        Ok((seen, at))
    }

    fn opt(name: &str, value: Option<&str>) -> (String, Option<String>) {
        (name.to_owned(), value.map(str::to_owned))
    }

    #[test]
    fn options_end_at_the_first_operand_or_after_dashdash() {
        assert_eq!(
            parse(&["-an", "3", "cmd", "-a"]).unwrap(),
            (vec![opt("all", None), opt("number", Some("3"))], 2)
        );
        assert_eq!(
            parse(&["-n3", "--", "-a"]).unwrap(),
            (vec![opt("number", Some("3"))], 2)
        );
        assert_eq!(parse(&["-", "x"]).unwrap(), (vec![], 0));
        assert_eq!(parse(&["-a"]).unwrap(), (vec![opt("all", None)], 1));
    }

    #[test]
    fn long_options_take_unique_prefixes_and_their_arguments() {
        assert_eq!(
            parse(&["--num=4", "--al", "--number", "5", "x"]).unwrap(),
            (
                vec![
                    opt("number", Some("4")),
                    opt("all", None),
                    opt("number", Some("5"))
                ],
                4
            )
        );
        assert_eq!(
            parse(&["--eof", "x"]).unwrap(),
            (vec![opt("eof", None)], 1),
            "an optional argument only with ="
        );
        assert_eq!(parse(&["-eX"]).unwrap(), (vec![opt("eof", Some("X"))], 1));
    }

    #[test]
    fn errors_use_gnu_wording() {
        let first = |args: &[&str]| parse(args).unwrap_err().remove(0);
        assert_eq!(first(&["--e"]), "demo: unrecognized option '--e'");
        assert_eq!(first(&["-z"]), "demo: invalid option -- 'z'");
        assert_eq!(first(&["-n"]), "demo: option requires an argument -- 'n'");
        assert_eq!(
            first(&["--number"]),
            "demo: option '--number' requires an argument"
        );
        assert_eq!(
            first(&["--all=1"]),
            "demo: option '--all' doesn't allow an argument"
        );
        assert_eq!(
            parse(&["-z"]).unwrap_err()[1],
            "Try 'demo --help' for more information."
        );
    }
}
