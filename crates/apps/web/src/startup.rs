//! The `dsh-web-app/startup` plugin (row `web-startup`): parses the web app's command line
//! (`--host`, `--port`, `--trusted-host`, `--no-open`) and provides `webStartup`, which the
//! server rows read through their config expressions. With `--help` or a usage error it
//! prints, asks the launcher to exit, and provides nothing, so no server binds.

use std::sync::Arc;

use clap::Parser;
use dsh_kernel::{BoxError, Context, Plugin, ServiceKey};
use dsh_launch::{CMDLINE_ARGS, exit_with_text};
use serde::Deserialize;
use serde_json::{Map, Value, json};

/// The plugin's name in rows.
pub const STARTUP_PLUGIN_NAME: &str = "dsh-web-app/startup";

/// The parsed flags (`ctx.webStartup`); rows read its fields `host`, `port`, `openBrowser`
/// and `trustedHosts` in expressions (`host` and `port` only when given).
pub const WEB_STARTUP: ServiceKey<WebStartup> = ServiceKey::new("webStartup");

const EXAMPLES: &str = "\
Examples:
  dsh --profile web                          serve on the composed host and port
  dsh --profile web --no-open                serve without opening a browser
  dsh --profile web --port 8080              serve on another port";

/// dsh's refusal of a wildcard bind.
pub const WILDCARD_REFUSAL: &str = "error: --host 0.0.0.0 is intentionally not supported yet \
     for safety: it would expose remote code execution to the network; use 127.0.0.1 instead";

#[derive(Parser, Debug)]
#[command(
    name = "dsh --profile web",
    about = "Serve the DeepSeek Harness browser UI.",
    after_help = EXAMPLES,
    disable_version_flag = true
)]
struct WebArgs {
    /// Bind host.
    #[arg(long, value_name = "host")]
    host: Option<String>,
    /// Listen port; pass 0 to let the OS pick a free one.
    #[arg(long, value_name = "port")]
    port: Option<String>,
    /// Extra authority the /api browser-trust fence accepts (host or host:port; repeatable).
    #[arg(long = "trusted-host", value_name = "authority", num_args = 1..)]
    trusted_hosts: Vec<String>,
    /// Do not open the Web UI in the default browser.
    #[arg(long = "no-open")]
    no_open: bool,
}

/// The web app's flags.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebStartup {
    /// `--host`, when given.
    pub host: Option<String>,
    /// `--port`, when given (0: the OS picks one).
    pub port: Option<u16>,
    /// Whether to open the browser (not with `--no-open`).
    pub open_browser: bool,
    /// `--trusted-host` authorities.
    pub trusted_hosts: Vec<String>,
}

impl WebStartup {
    /// The service fields config expressions read (`ctx.webStartup.port`, ...).
    pub fn fields(&self) -> Value {
        let mut fields = Map::new();
        if let Some(host) = &self.host {
            fields.insert("host".into(), json!(host));
        }
        if let Some(port) = self.port {
            fields.insert("port".into(), json!(port));
        }
        fields.insert("openBrowser".into(), json!(self.open_browser));
        fields.insert("trustedHosts".into(), json!(self.trusted_hosts));
        Value::Object(fields)
    }
}

/// What parsing decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ParsedWeb {
    /// Serve with these flags.
    Serve(WebStartup),
    /// Print `text` (on stderr when `to_stderr`) and exit with `code`.
    Exit {
        /// Help or the error.
        text: String,
        /// Whether it goes to stderr.
        to_stderr: bool,
        /// The exit code (0 for help, 1 for a usage error).
        code: i32,
    },
}

/// Parses the web app's arguments (after the launcher's own flags).
pub fn parse(args: &[String]) -> ParsedWeb {
    let argv = std::iter::once("dsh --profile web".to_owned()).chain(args.iter().cloned());
    let usage = |text: String| ParsedWeb::Exit {
        text: format!("{text}\n"),
        to_stderr: true,
        code: 1,
    };
    let parsed = match WebArgs::try_parse_from(argv) {
        Ok(parsed) => parsed,
        Err(error) => {
            let to_stderr = error.use_stderr();
            return ParsedWeb::Exit {
                text: error.render().to_string(),
                to_stderr,
                code: i32::from(to_stderr),
            };
        }
    };
    if parsed.host.as_deref() == Some("0.0.0.0") {
        return usage(WILDCARD_REFUSAL.to_owned());
    }
    let port = match &parsed.port {
        None => None,
        Some(text) => match text.parse::<u16>() {
            Ok(port) if text.bytes().all(|byte| byte.is_ascii_digit()) => Some(port),
            _ if !text.is_empty() && text.bytes().all(|byte| byte.is_ascii_digit()) => {
                return usage(format!("error: --port must be at most 65535, got {text}"));
            }
            _ => {
                return usage(format!(
                    "error: --port must be a number, got {}",
                    Value::String(text.clone())
                ));
            }
        },
    };
    ParsedWeb::Serve(WebStartup {
        host: parsed.host,
        port,
        open_browser: !parsed.no_open,
        trusted_hosts: parsed.trusted_hosts,
    })
}

/// Row config of `dsh-web-app/startup`: none.
#[derive(Debug, Clone, Copy, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WebStartupConfig {}

/// The `dsh-web-app/startup` plugin.
#[derive(Debug, Clone, Copy, Default)]
pub struct WebStartupPlugin;

impl Plugin for WebStartupPlugin {
    type Config = WebStartupConfig;

    async fn apply(&self, ctx: Context, _config: WebStartupConfig) -> Result<(), BoxError> {
        let args = ctx
            .get(&CMDLINE_ARGS)
            .ok_or("web-startup: the launcher must provide cmdlineArgs before the tree mounts")?;
        match parse(args.args()) {
            ParsedWeb::Serve(startup) => {
                let fields = startup.fields();
                ctx.provide_with_fields(&WEB_STARTUP, Arc::new(startup), fields)?;
            }
            ParsedWeb::Exit {
                text,
                to_stderr,
                code,
            } => exit_with_text(&ctx, "web-startup", &text, to_stderr, code)?,
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {

    use super::*;

    fn parse_words(words: &[&str]) -> ParsedWeb {
        parse(
            &words
                .iter()
                .map(|word| (*word).to_owned())
                .collect::<Vec<_>>(),
        )
    }

    #[test]
    fn flags_become_the_startup_values() {
        let ParsedWeb::Serve(startup) = parse_words(&[
            "--port",
            "0",
            "--no-open",
            "--trusted-host",
            "a.test",
            "--trusted-host",
            "b.test:8",
        ]) else {
            panic!("expected a serve");
        };
        assert_eq!(startup.port, Some(0));
        assert!(!startup.open_browser);
        assert_eq!(startup.trusted_hosts, ["a.test", "b.test:8"]);
        assert_eq!(
            startup.fields(),
            json!({"port": 0, "openBrowser": false, "trustedHosts": ["a.test", "b.test:8"]})
        );
        let ParsedWeb::Serve(defaults) = parse_words(&[]) else {
            panic!("expected a serve");
        };
        assert_eq!(
            defaults.fields(),
            json!({"openBrowser": true, "trustedHosts": []})
        );
    }

    #[test]
    fn a_wildcard_host_and_bad_ports_are_refused_in_dshs_words() {
        let refusal = |words: &[&str]| match parse_words(words) {
            ParsedWeb::Exit { text, code: 1, .. } => text,
            other => panic!("expected a refusal, got {other:?}"),
        };
        assert_eq!(
            refusal(&["--host", "0.0.0.0"]),
            format!("{WILDCARD_REFUSAL}\n")
        );
        assert_eq!(
            refusal(&["--port", "80a"]),
            "error: --port must be a number, got \"80a\"\n"
        );
        assert_eq!(
            refusal(&["--port", "70000"]),
            "error: --port must be at most 65535, got 70000\n"
        );
    }

    #[test]
    fn help_exits_zero_on_stdout() {
        let ParsedWeb::Exit {
            text,
            to_stderr,
            code,
        } = parse_words(&["--help"])
        else {
            panic!("expected help");
        };
        assert!(text.contains("--trusted-host <authority>"), "{text}");
        assert!(!to_stderr);
        assert_eq!(code, 0);
    }
}
