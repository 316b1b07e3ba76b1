//! Compound commands: `{ ..; }`, `if`, `for` (both forms), `while` / `until`, `case`, `(( ))`,
//! `[[ ]]`; their commands share the compound's redirected streams.

use super::{Interpreter, Io, expansion_failed};
use crate::shell::cond::CondError;
use crate::shell::glob;
use crate::shell::plan::{AndOr, CaseArm, CaseNext, Compound, Word};
use crate::shell::state::{Flow, State};
use crate::shell::vars::MAX_VARIABLE_BYTES;

impl Interpreter<'_> {
    pub(super) fn compound(&self, compound: &Compound, state: &mut State, io: &Io) -> Flow {
        match compound {
            Compound::Group(body) => self.run_list(body, state, io),
            Compound::If {
                branches,
                otherwise,
            } => {
                for (condition, body) in branches {
                    match self.condition(condition, state, io) {
                        Flow::Status(0) => return self.run_list(body, state, io),
                        Flow::Status(_) => {}
                        other => return other,
                    }
                }
                match otherwise {
                    Some(body) => self.run_list(body, state, io),
                    None => Flow::Status(0),
                }
            }
            Compound::For { name, words, body } => {
                let values = {
                    let expander = self.expander(state);
                    match expander.words(words) {
                        Ok(values) => values,
                        Err(e) => {
                            io.diagnose(&e.message());
                            return expansion_failed(&e);
                        }
                    }
                };
                state.loops += 1;
                let flow = self.for_loop(name, &values, body, state, io);
                state.loops -= 1;
                flow
            }
            Compound::Loop {
                until,
                condition,
                body,
            } => {
                state.loops += 1;
                let flow = self.while_loop(*until, condition, body, state, io);
                state.loops -= 1;
                flow
            }
            Compound::Case { subject, arms } => self.case(subject, arms, state, io),
            Compound::Arith(text) => match arithmetic(text, state, io) {
                Some(value) => Flow::Status(i32::from(value == 0)),
                None => Flow::Status(1),
            },
            Compound::ArithFor {
                init,
                condition,
                update,
                body,
            } => {
                state.loops += 1;
                let flow = self.arith_for(init, condition, update, body, state, io);
                state.loops -= 1;
                flow
            }
            Compound::Test(cond) => match cond.eval(&self.expander(state)) {
                Ok(true) => Flow::Status(0),
                Ok(false) => Flow::Status(1),
                Err(CondError::Arithmetic(message)) => {
                    io.diagnose(&format!("[[: {message}"));
                    Flow::Status(1)
                }
                Err(CondError::Expand(e)) => {
                    io.diagnose(&e.message());
                    expansion_failed(&e)
                }
            },
        }
    }

    fn for_loop(
        &self,
        name: &str,
        values: &[String],
        body: &[AndOr],
        state: &mut State,
        io: &Io,
    ) -> Flow {
        let mut status = 0;
        for value in values {
            if self.cancelled() {
                return Flow::Cancelled;
            }
            if state.vars.set(name, value.clone()).is_err() {
                io.diagnose(&format!(
                    "{name}: the shell's variables would exceed {} bytes",
                    MAX_VARIABLE_BYTES
                ));
                return Flow::Status(1);
            }
            match self.iteration(body, state, io) {
                Ok(s) => status = s,
                Err(flow) => return flow,
            }
        }
        Flow::Status(status)
    }

    /// Runs a loop's body once: `Ok(status)` to go on (a `continue` of this loop gives 0),
    /// `Err(flow)` to leave the loop with that flow (`break`, an outer `continue`, `exit`...).
    fn iteration(&self, body: &[AndOr], state: &mut State, io: &Io) -> Result<i32, Flow> {
        match self.run_list(body, state, io) {
            Flow::Status(s) => Ok(s),
            Flow::Break(n, status) => Err(leave(n, status)),
            Flow::Continue(n) if n > 1 => Err(Flow::Continue(n - 1)),
            Flow::Continue(_) => Ok(0),
            other => Err(other),
        }
    }

    /// `for ((INIT; CONDITION; UPDATE))`: an empty condition is true; an arithmetic error ends
    /// the loop with 1, as in bash.
    fn arith_for(
        &self,
        init: &Option<String>,
        condition: &Option<String>,
        update: &Option<String>,
        body: &[AndOr],
        state: &mut State,
        io: &Io,
    ) -> Flow {
        if let Some(text) = init
            && arithmetic(text, state, io).is_none()
        {
            return Flow::Status(1);
        }
        let mut status = 0;
        loop {
            if self.cancelled() {
                return Flow::Cancelled;
            }
            if let Some(text) = condition {
                match arithmetic(text, state, io) {
                    Some(0) => break,
                    Some(_) => {}
                    None => return Flow::Status(1),
                }
            }
            match self.iteration(body, state, io) {
                Ok(s) => status = s,
                Err(flow) => return flow,
            }
            if let Some(text) = update
                && arithmetic(text, state, io).is_none()
            {
                return Flow::Status(1);
            }
        }
        Flow::Status(status)
    }

    fn while_loop(
        &self,
        until: bool,
        condition: &[AndOr],
        body: &[AndOr],
        state: &mut State,
        io: &Io,
    ) -> Flow {
        let mut status = 0;
        loop {
            if self.cancelled() {
                return Flow::Cancelled;
            }
            match self.condition(condition, state, io) {
                Flow::Status(s) if (s == 0) == until => break,
                Flow::Status(_) => {}
                Flow::Break(n, status) => return leave(n, status),
                Flow::Continue(n) if n > 1 => return Flow::Continue(n - 1),
                Flow::Continue(_) => continue,
                other => return other,
            }
            match self.iteration(body, state, io) {
                Ok(s) => status = s,
                Err(flow) => return flow,
            }
        }
        Flow::Status(status)
    }

    /// `case`: the first arm with a matching pattern runs (then `;&` runs the next arm's list
    /// too, `;;&` goes on testing); the status is the last list's, 0 when none ran.
    fn case(&self, subject: &Word, arms: &[CaseArm], state: &mut State, io: &Io) -> Flow {
        let subject = match self.expander(state).single(subject) {
            Ok(s) => s,
            Err(e) => {
                io.diagnose(&e.message());
                return expansion_failed(&e);
            }
        };
        let mut status = 0;
        let mut fall_through = false;
        for arm in arms {
            // Patterns expand against the state as it is now (an arm before may have changed it).
            let expander = self.expander(state);
            let mut hit = fall_through;
            for pattern in &arm.patterns {
                if hit {
                    break;
                }
                match expander.pattern(pattern) {
                    Ok((bytes, active)) => {
                        hit = glob::pattern_matches(&bytes, &active, subject.as_bytes());
                    }
                    Err(e) => {
                        io.diagnose(&e.message());
                        return expansion_failed(&e);
                    }
                }
            }
            if !hit {
                continue;
            }
            status = match self.run_list(&arm.body, state, io) {
                Flow::Status(s) if !arm.body.is_empty() => s,
                Flow::Status(_) => 0,
                other => return other,
            };
            match arm.then {
                CaseNext::Stop => return Flow::Status(status),
                CaseNext::FallThrough => fall_through = true,
                CaseNext::TestNext => fall_through = false,
            }
        }
        Flow::Status(status)
    }
}

/// Runs an arithmetic command's expression with the shell's variables; `None` after an error
/// (printed as bash does: `((: 1/0: division by 0`).
fn arithmetic(text: &str, state: &mut State, io: &Io) -> Option<i64> {
    match crate::shell::arith::execute(text, &mut state.vars, state.status) {
        Ok(value) => Some(value),
        Err(message) => {
            io.diagnose(&format!("((: {message}"));
            None
        }
    }
}

/// `break N` reaching a loop: it ends, and N - 1 more loops around it; a loop left by `break`
/// has the status of `break` (0, or 1 for an out-of-range count).
fn leave(n: u32, status: i32) -> Flow {
    if n > 1 {
        Flow::Break(n - 1, status)
    } else {
        Flow::Status(status)
    }
}
