//! The headless app's command line: `dsh --profile headless [flags] <task...>`.

use clap::{Parser, ValueEnum};

/// What the run prints on stdout.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, ValueEnum)]
pub enum OutputFormat {
    /// The final assistant text (dsh's output).
    #[default]
    Text,
    /// One JSON object: session id, final text, turn-end reason, usage.
    Json,
    /// One JSON line per session event as it is logged, then the `json` object with
    /// `"type": "result"`.
    StreamJson,
}

impl OutputFormat {
    /// The flag value.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Text => "text",
            Self::Json => "json",
            Self::StreamJson => "stream-json",
        }
    }
}

const EXAMPLES: &str = "\
Examples:
  dsh --profile headless \"run the tests and fix what fails\"
  dsh --profile headless --output json \"summarize README.md\"
  dsh --profile headless --resume session-1234 \"now commit it\"
  dsh --profile headless --model deepseek-v4-pro \"review the diff\"";

/// The parsed flags.
#[derive(Parser, Debug, Clone, Default, PartialEq, Eq)]
#[command(
    name = "dsh --profile headless",
    about = "Answer one task with an agent turn, print the result, and exit \
             (0 when the turn completed).",
    after_help = EXAMPLES,
    disable_version_flag = true
)]
pub struct HeadlessArgs {
    /// What to print on stdout.
    #[arg(long, value_enum, default_value_t = OutputFormat::Text, value_name = "format")]
    pub output: OutputFormat,
    /// Continue this stored session with a new turn.
    #[arg(long, value_name = "session-id")]
    pub resume: Option<String>,
    /// The model for this run (the provider route stays the profile's default).
    #[arg(long, value_name = "model")]
    pub model: Option<String>,
    /// Print the session id (and where it is stored) on stderr.
    #[arg(long, short)]
    pub verbose: bool,
    /// The task; the words are joined with spaces.
    #[arg(value_name = "task", trailing_var_arg = true)]
    pub task: Vec<String>,
}

/// What parsing decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Parsed {
    /// Run with these flags; the task is not blank.
    Run(HeadlessArgs),
    /// Print this text and exit with this code (help, or a usage error).
    Exit {
        /// The text (help on stdout, errors on stderr).
        text: String,
        /// `true` for stderr.
        to_stderr: bool,
        /// The exit code.
        code: i32,
    },
}

/// The blank-task error, in dsh's words.
pub const TASK_REQUIRED: &str =
    "error: a task is required, for example: dsh --profile headless \"run the tests\"";

/// Parses the app's arguments (after the launcher's own flags).
pub fn parse(args: &[String]) -> Parsed {
    let argv = std::iter::once("dsh --profile headless".to_owned()).chain(args.iter().cloned());
    match HeadlessArgs::try_parse_from(argv) {
        Ok(parsed) if parsed.task.join(" ").trim().is_empty() => Parsed::Exit {
            text: format!("{TASK_REQUIRED}\n"),
            to_stderr: true,
            code: 1,
        },
        Ok(parsed) => Parsed::Run(parsed),
        Err(error) => {
            let to_stderr = error.use_stderr();
            Parsed::Exit {
                text: error.render().to_string(),
                to_stderr,
                // Help exits 0; a usage error 1, as every dsh app does.
                code: i32::from(to_stderr),
            }
        }
    }
}

impl HeadlessArgs {
    /// The task text.
    pub fn task_text(&self) -> String {
        self.task.join(" ")
    }
}

#[cfg(test)]
mod tests {

    use super::*;

    fn args(list: &[&str]) -> Vec<String> {
        list.iter().map(|arg| (*arg).to_owned()).collect()
    }

    #[test]
    fn words_join_into_the_task() {
        let Parsed::Run(parsed) = parse(&args(&["run", "the", "tests"])) else {
            panic!("expected a run");
        };
        assert_eq!(parsed.task_text(), "run the tests");
        assert_eq!(parsed.output, OutputFormat::Text);
    }

    #[test]
    fn flags_come_before_the_task() {
        let Parsed::Run(parsed) = parse(&args(&[
            "--output",
            "stream-json",
            "--resume",
            "session-1",
            "--model",
            "m",
            "-v",
            "go",
        ])) else {
            panic!("expected a run");
        };
        assert_eq!(parsed.output, OutputFormat::StreamJson);
        assert_eq!(parsed.resume.as_deref(), Some("session-1"));
        assert_eq!(parsed.model.as_deref(), Some("m"));
        assert!(parsed.verbose);
        assert_eq!(parsed.task_text(), "go");
    }

    #[test]
    fn a_blank_task_is_dshs_error() {
        for blank in [&[][..], &["  "][..], &["--output", "json"][..]] {
            assert_eq!(
                parse(&args(blank)),
                Parsed::Exit {
                    text: format!("{TASK_REQUIRED}\n"),
                    to_stderr: true,
                    code: 1
                }
            );
        }
    }

    #[test]
    fn help_goes_to_stdout_and_exits_zero() {
        let Parsed::Exit {
            text,
            to_stderr,
            code,
        } = parse(&args(&["--help"]))
        else {
            panic!("expected help");
        };
        assert!(text.contains("--resume <session-id>"), "{text}");
        assert!(!to_stderr);
        assert_eq!(code, 0);
    }

    #[test]
    fn an_unknown_output_format_is_a_usage_error() {
        let Parsed::Exit {
            text,
            to_stderr,
            code,
        } = parse(&args(&["--output", "xml", "x"]))
        else {
            panic!("expected an error");
        };
        assert!(text.contains("xml"), "{text}");
        assert!(to_stderr);
        assert_eq!(code, 1);
    }
}
