//! Rendering an assembly: strict `{{variable}}` interpolation, the system prompt, and the
//! runtime-context snapshot.

use crate::assembly::{AssembledSection, ContextSnapshotSection, PromptAssembly};
use crate::error::PromptError;

/// What a runtime-context snapshot says when it has no contribution left, so the model stops
/// relying on earlier snapshots.
pub const RUNTIME_CONTEXT_CLEARED: &str =
    "Current runtime context: none. Earlier runtime-context snapshots no longer apply.";

/// The opening line of every non-empty runtime-context snapshot.
const SNAPSHOT_HEADER: &str =
    "Current runtime context. This snapshot supersedes earlier runtime-context snapshots.";

/// How variable names are written, as dsh's messages quote it.
pub(crate) const VARIABLE_NAME_PATTERN: &str = "/^[a-z][a-z0-9_]*$/";

/// Whether `name` matches `^[a-z][a-z0-9_]*$`.
pub(crate) fn is_variable_name(name: &str) -> bool {
    let mut bytes = name.bytes();
    bytes.next().is_some_and(|first| first.is_ascii_lowercase())
        && bytes.all(|byte| byte.is_ascii_lowercase() || byte.is_ascii_digit() || byte == b'_')
}

/// The system prompt: each section interpolated, empty ones dropped, the rest joined with a
/// blank line. `""` when every section is empty.
///
/// Interpolation is strict: a malformed reference, an unknown variable and a variable
/// without a value are errors naming the section. A `{{` with no `}}` anywhere after it is
/// prose and stays as written; substituted values are not scanned again.
pub fn render_prompt(assembly: &PromptAssembly) -> Result<String, PromptError> {
    let mut texts = Vec::with_capacity(assembly.sections.len());
    for section in &assembly.sections {
        let text = interpolate(section, &assembly.variables, Kind::Section)?;
        if !text.is_empty() {
            texts.push(text);
        }
    }
    Ok(texts.join("\n\n"))
}

/// The runtime-context snapshot as its named contributions: each context interpolated (errors
/// name the context), empty ones dropped.
pub fn render_context_sections(
    assembly: &PromptAssembly,
) -> Result<Vec<ContextSnapshotSection>, PromptError> {
    let mut sections = Vec::with_capacity(assembly.contexts.len());
    for context in &assembly.contexts {
        let text = interpolate(context, &assembly.variables, Kind::Context)?;
        if !text.is_empty() {
            sections.push(ContextSnapshotSection {
                name: context.name.clone(),
                text,
            });
        }
    }
    Ok(sections)
}

/// The model-facing snapshot of already rendered sections: `""` when there is no text, else
/// the snapshot header and the texts, separated by blank lines.
pub fn join_context_sections(sections: &[ContextSnapshotSection]) -> String {
    let body = sections
        .iter()
        .map(|section| section.text.as_str())
        .collect::<Vec<_>>()
        .join("\n\n");
    if body.is_empty() {
        return String::new();
    }
    format!("{SNAPSHOT_HEADER}\n\n{body}")
}

/// [`render_context_sections`] joined by [`join_context_sections`].
pub fn render_context_snapshot(assembly: &PromptAssembly) -> Result<String, PromptError> {
    render_context_sections(assembly).map(|sections| join_context_sections(&sections))
}

/// What an interpolated text belongs to, as messages name it.
#[derive(Debug, Clone, Copy)]
enum Kind {
    Section,
    Context,
}

impl Kind {
    fn as_str(self) -> &'static str {
        match self {
            Self::Section => "section",
            Self::Context => "context",
        }
    }
}

/// The simple `{{name}}` group starting at the beginning of `text`: the text between the
/// braces, when `text` opens with `{{`, continues with no brace, and closes with `}}`.
fn group_at(text: &str) -> Option<&str> {
    let inner = text.strip_prefix("{{")?;
    let end = inner.find(['{', '}'])?;
    inner
        .get(end..)?
        .starts_with("}}")
        .then(|| inner.get(..end))?
}

/// Replaces the `{{name}}` references of `input` with their values.
fn interpolate(
    input: &AssembledSection,
    variables: &[(String, Option<String>)],
    kind: Kind,
) -> Result<String, PromptError> {
    let text = input.text.as_str();
    let kind = kind.as_str();
    let owner = &input.name;
    let mut result = String::with_capacity(text.len());
    let mut last = 0;
    while let Some(offset) = text.get(last..).and_then(|rest| rest.find("{{")) {
        let open = last + offset;
        let at = text.get(open..).unwrap_or_default();
        let Some(name) = group_at(at) else {
            // With a `}}` somewhere later this is a broken reference; without one, prose.
            if at.get(2..).is_some_and(|after| after.contains("}}")) {
                let excerpt: String = at.chars().take(16).collect();
                return Err(PromptError(format!(
                    "malformed prompt variable reference at \"{excerpt}…\" in {kind} \"{owner}\" \
                     (references are complete simple {{{{name}}}} groups)"
                )));
            }
            result.push_str(text.get(last..open + 2).unwrap_or_default());
            last = open + 2;
            continue;
        };
        if !is_variable_name(name) {
            return Err(PromptError(format!(
                "malformed prompt variable reference \"{{{{{name}}}}}\" in {kind} \"{owner}\" \
                 (variable names match {VARIABLE_NAME_PATTERN})"
            )));
        }
        let Some((_, value)) = variables.iter().rev().find(|(known, _)| known == name) else {
            return Err(PromptError(format!(
                "unknown prompt variable \"{{{{{name}}}}}\" in {kind} \"{owner}\"; \
                 registered variables: {}",
                registered_names(variables)
            )));
        };
        let Some(value) = value else {
            return Err(PromptError(format!(
                "prompt variable \"{{{{{name}}}}}\" has no value for this assembly \
                 ({kind} \"{owner}\")"
            )));
        };
        result.push_str(text.get(last..open).unwrap_or_default());
        result.push_str(value);
        last = open + name.len() + 4;
    }
    result.push_str(text.get(last..).unwrap_or_default());
    Ok(result)
}

/// The registered names, first occurrence first, or `(none)`.
fn registered_names(variables: &[(String, Option<String>)]) -> String {
    let mut names: Vec<&str> = Vec::with_capacity(variables.len());
    for (name, _) in variables {
        if !names.contains(&name.as_str()) {
            names.push(name);
        }
    }
    if names.is_empty() {
        "(none)".to_owned()
    } else {
        names.join(", ")
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    fn assembly(text: &str, variables: &[(&str, Option<&str>)]) -> PromptAssembly {
        PromptAssembly {
            sections: vec![AssembledSection::new("s", text)],
            variables: variables
                .iter()
                .map(|(name, value)| ((*name).to_owned(), value.map(str::to_owned)))
                .collect(),
            ..PromptAssembly::default()
        }
    }

    fn render(text: &str, variables: &[(&str, Option<&str>)]) -> Result<String, String> {
        render_prompt(&assembly(text, variables)).map_err(|error| error.0)
    }

    #[test]
    fn variable_names() {
        for good in ["a", "model", "a1_b", "z_"] {
            assert!(is_variable_name(good), "{good}");
        }
        for bad in ["", "A", "1a", "_a", "a-b", "a b", "é", "aB", "a\n"] {
            assert!(!is_variable_name(bad), "{bad}");
        }
    }

    #[test]
    fn groups() {
        assert_eq!(group_at("{{model}} rest"), Some("model"));
        assert_eq!(group_at("{{}}"), Some(""));
        assert_eq!(group_at("{{ model }}"), Some(" model "));
        assert_eq!(group_at("{{{model}}}"), None);
        assert_eq!(group_at("{{a{b}}"), None);
        assert_eq!(group_at("{{a}b}}"), None);
        assert_eq!(group_at("{{model"), None);
        assert_eq!(group_at("{model}}"), None);
    }

    #[test]
    fn substitutes_each_reference_once() {
        assert_eq!(
            render(
                "{{a}} and {{b}}, {{a}}",
                &[("a", Some("1")), ("b", Some("2"))]
            ),
            Ok("1 and 2, 1".to_owned())
        );
        assert_eq!(
            render(
                "v = {{model}}!",
                &[("model", Some("literal {{sneaky}} inside"))]
            ),
            Ok("v = literal {{sneaky}} inside!".to_owned())
        );
        assert_eq!(
            render("héllo {{x}} ✓", &[("x", Some("ü"))]),
            Ok("héllo ü ✓".to_owned())
        );
    }

    #[test]
    fn lone_braces_are_prose() {
        assert_eq!(
            render("shell ${X:-{{fallback} stays", &[]),
            Ok("shell ${X:-{{fallback} stays".to_owned())
        );
        assert_eq!(render("{{", &[]), Ok("{{".to_owned()));
        assert_eq!(render("a {{ b {{ c", &[]), Ok("a {{ b {{ c".to_owned()));
        assert_eq!(
            render("{{{{x}}", &[("x", Some("1"))]),
            Err(
                "malformed prompt variable reference at \"{{{{x}}…\" in section \"s\" \
                 (references are complete simple {{name}} groups)"
                    .to_owned()
            )
        );
    }

    #[test]
    fn malformed_references() {
        assert_eq!(
            render("on {{ model }}", &[("model", Some("m"))]),
            Err(
                "malformed prompt variable reference \"{{ model }}\" in section \"s\" \
                 (variable names match /^[a-z][a-z0-9_]*$/)"
                    .to_owned()
            )
        );
        assert_eq!(
            render("{{}}", &[]),
            Err(
                "malformed prompt variable reference \"{{}}\" in section \"s\" \
                 (variable names match /^[a-z][a-z0-9_]*$/)"
                    .to_owned()
            )
        );
        assert_eq!(
            render("{{{model}}}", &[("model", Some("m"))]),
            Err(
                "malformed prompt variable reference at \"{{{model}}}…\" in section \"s\" \
                 (references are complete simple {{name}} groups)"
                    .to_owned()
            )
        );
        assert_eq!(
            render(
                "x {{a{b}} y {{model}} and more text here",
                &[("model", Some("m"))]
            ),
            Err(
                "malformed prompt variable reference at \"{{a{b}} y {{mode…\" in section \
                 \"s\" (references are complete simple {{name}} groups)"
                    .to_owned()
            )
        );
    }

    #[test]
    fn unknown_and_valueless_variables() {
        assert_eq!(
            render("on {{modle}}", &[("model", Some("m")), ("cwd", None)]),
            Err("unknown prompt variable \"{{modle}}\" in section \"s\"; \
                 registered variables: model, cwd"
                .to_owned())
        );
        assert_eq!(
            render("{{x}}", &[]),
            Err(
                "unknown prompt variable \"{{x}}\" in section \"s\"; registered variables: (none)"
                    .to_owned()
            )
        );
        assert_eq!(
            render("in {{cwd}}", &[("cwd", None)]),
            Err(
                "prompt variable \"{{cwd}}\" has no value for this assembly (section \"s\")"
                    .to_owned()
            )
        );
        // A later entry of the same name wins.
        assert_eq!(
            render("{{x}}", &[("x", None), ("x", Some("late"))]),
            Ok("late".to_owned())
        );
    }

    #[test]
    fn prompt_drops_empty_sections() {
        let assembly = PromptAssembly {
            sections: vec![
                AssembledSection::new("empty", ""),
                AssembledSection::new("real", "content"),
                AssembledSection::new("blank-after", "{{nothing}}"),
                AssembledSection::new("more", "more"),
            ],
            variables: vec![("nothing".to_owned(), Some(String::new()))],
            ..PromptAssembly::default()
        };
        assert_eq!(render_prompt(&assembly), Ok("content\n\nmore".to_owned()));
        assert_eq!(render_prompt(&PromptAssembly::default()), Ok(String::new()));
    }

    #[test]
    fn context_snapshot() {
        let assembly = PromptAssembly {
            contexts: vec![
                AssembledSection::new("empty", ""),
                AssembledSection::new("policy", "Mode: {{mode}}."),
                AssembledSection::new("cwd", "cwd: /tmp"),
            ],
            variables: vec![("mode".to_owned(), Some("read-only".to_owned()))],
            ..PromptAssembly::default()
        };
        let sections = render_context_sections(&assembly);
        assert_eq!(
            sections,
            Ok(vec![
                ContextSnapshotSection {
                    name: "policy".to_owned(),
                    text: "Mode: read-only.".to_owned()
                },
                ContextSnapshotSection {
                    name: "cwd".to_owned(),
                    text: "cwd: /tmp".to_owned()
                },
            ])
        );
        assert_eq!(
            render_context_snapshot(&assembly),
            Ok(
                "Current runtime context. This snapshot supersedes earlier runtime-context \
                snapshots.\n\nMode: read-only.\n\ncwd: /tmp"
                    .to_owned()
            )
        );
        assert_eq!(join_context_sections(&[]), "");
    }

    #[test]
    fn context_errors_name_the_context() {
        let assembly = PromptAssembly {
            contexts: vec![AssembledSection::new("policy", "Mode: {{missing}}.")],
            ..PromptAssembly::default()
        };
        assert_eq!(
            render_context_sections(&assembly),
            Err(PromptError::new(
                "unknown prompt variable \"{{missing}}\" in context \"policy\"; \
                 registered variables: (none)"
            ))
        );
    }
}
