//! A job cancelled outside the run: SIGINT/SIGTERM during the baseline
//! lookup, the store, the comment or the pull-request resolution.
//!
//! [`super::main`] records these signals from start to exit
//! ([`crate::interrupt::Handler`]), so that benchgate, PID 1 in
//! the container, never ignores them until SIGKILL. The GitHub client polls
//! the flag while it waits and abandons the request in flight
//! ([`crate::github::GitHubError::Interrupted`]); the step then ends here
//! within moments: a warning, a job-summary note, outputs `verdict:
//! cancelled` (and `results-path` when a results file exists) and exit
//! 130/143, as for a run the signal cut short ([`Action::cancelled`]).
//!
//! No half-written baseline is possible: a store writes the run's file, then
//! adds it to the data branch's index by one compare-and-swap; abandoned
//! before that write, the baseline is simply not there (an unlisted file is
//! never read), and an abandoned index write was applied whole or not at all.

use crate::interrupt::{self, Signal};

use super::outputs::{self, annotation, command, Level};
use super::Action;

impl Action {
    /// `result` of this step, unless a signal arrived that the run itself did
    /// not answer ([`Action::cancelled`]): then the cancellation's outputs
    /// and exit code instead, whatever the step was doing.
    pub(crate) fn after_signal(&self, result: anyhow::Result<u8>) -> anyhow::Result<u8> {
        let Some(signal) = interrupt::received() else {
            return result;
        };
        if matches!(result, Ok(code) if code == signal.exit_code()) {
            return result;
        }
        let doing = match &result {
            Err(e) => format!(": {}", self.scrub(&format!("{e:#}"))),
            Ok(_) => String::new(),
        };
        command(&annotation(
            Level::Warning,
            "benchgate cancelled",
            &format!(
                "stopped by {} outside the run{doing}; nothing more is compared, stored or commented",
                signal.name()
            ),
        ));
        let path = self.results_path();
        let measured = path.is_file().then(|| path.display().to_string());
        match &self.ctx.summary_path {
            Some(p) => crate::files::append(p, &summary(signal, measured.as_deref()))?,
            None => crate::stderrln!(
                "benchgate: GITHUB_STEP_SUMMARY is not set; no job summary written"
            ),
        }
        let mut outs = vec![("verdict", "cancelled".to_string())];
        outs.extend(measured.map(|p| ("results-path", p)));
        self.write_outputs(&outs)?;
        Ok(signal.exit_code())
    }

    /// `text` without the token.
    fn scrub(&self, text: &str) -> String {
        outputs::scrub(text, self.inputs.token.as_ref().map(|t| t.expose()))
    }
}

/// The job summary's note for a step a signal stopped outside the run.
fn summary(signal: Signal, results: Option<&str>) -> String {
    let results = match results {
        Some(p) => format!(" The results are in {}.", crate::report::escape::md(p)),
        None => String::new(),
    };
    format!(
        "## ⏹️ benchgate: cancelled\n\nStopped by {} (the job was cancelled) while talking to GitHub: what was under way was abandoned, and nothing more was compared, stored or commented. A stored baseline counts only once the data branch's index lists it, which is one compare-and-swap: it is there whole or not at all.{results}\n",
        signal.name()
    )
}
