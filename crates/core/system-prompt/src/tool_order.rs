//! The canonical order of the tools offered to the model (`toolOrder`).

use std::collections::BTreeSet;

use dsh_llm::ToolSchema;

use crate::error::PromptError;

/// The `toolOrder` entry that stands for every tool the list does not name; those tools are
/// inserted there in name order. A tool provider may not use it as a tool name.
pub const TOOL_ORDER_REST: &str = "<unlisted-tools>";

/// Checks a configured `toolOrder` at load: no name twice, and the rest entry present. Names
/// are checked against the registered tools at assembly, once plugins have registered them.
pub(crate) fn validate_tool_order(tool_order: &[String]) -> Result<(), PromptError> {
    let mut seen = BTreeSet::new();
    for name in tool_order {
        if !seen.insert(name.as_str()) {
            return Err(PromptError(format!(
                "toolOrder lists \"{name}\" more than once"
            )));
        }
    }
    if !seen.contains(TOOL_ORDER_REST) {
        return Err(PromptError(format!(
            "toolOrder must contain the \"{TOOL_ORDER_REST}\" rest entry (where unlisted tools \
             are inserted)"
        )));
    }
    Ok(())
}

/// Puts the collected `tools` in their canonical order: by name (byte order, stable) without a
/// `tool_order`, else the listed names first-to-last with the unlisted tools, by name, at the
/// rest entry. A listed name that no provider knows fails; a known name absent from this
/// assembly is skipped.
pub(crate) fn order_tools(
    mut tools: Vec<ToolSchema>,
    tool_order: Option<&[String]>,
    known_names: &BTreeSet<String>,
) -> Result<Vec<ToolSchema>, PromptError> {
    if tools.iter().any(|tool| tool.name == TOOL_ORDER_REST) {
        return Err(PromptError(format!(
            "tool provider returned reserved tool name \"{TOOL_ORDER_REST}\" (reserved for \
             toolOrder's rest entry)"
        )));
    }
    let Some(tool_order) = tool_order else {
        tools.sort_by(|a, b| a.name.cmp(&b.name));
        return Ok(tools);
    };
    let unknown: Vec<&String> = tool_order
        .iter()
        .filter(|name| *name != TOOL_ORDER_REST && !known_names.contains(*name))
        .collect();
    if !unknown.is_empty() {
        let plural = if unknown.len() > 1 { "s" } else { "" };
        let unknown = unknown
            .iter()
            .map(|name| format!("\"{name}\""))
            .collect::<Vec<_>>()
            .join(", ");
        let known = if known_names.is_empty() {
            "(none)".to_owned()
        } else {
            known_names
                .iter()
                .map(String::as_str)
                .collect::<Vec<_>>()
                .join(", ")
        };
        return Err(PromptError(format!(
            "toolOrder lists unregistered tool{plural} {unknown}; known tools: {known}"
        )));
    }
    let (mut rest, mut listed): (Vec<ToolSchema>, Vec<ToolSchema>) = tools
        .into_iter()
        .partition(|tool| !tool_order.contains(&tool.name));
    rest.sort_by(|a, b| a.name.cmp(&b.name));
    let mut ordered = Vec::with_capacity(rest.len() + listed.len());
    for name in tool_order {
        if name == TOOL_ORDER_REST {
            ordered.append(&mut rest);
        } else {
            let (matching, others) = listed.into_iter().partition(|tool| tool.name == *name);
            listed = others;
            ordered.extend::<Vec<ToolSchema>>(matching);
        }
    }
    Ok(ordered)
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;

    fn tool(name: &str, description: &str) -> ToolSchema {
        ToolSchema {
            name: name.to_owned(),
            description: description.to_owned(),
            parameters: json!({}),
        }
    }

    fn strings(names: &[&str]) -> Vec<String> {
        names.iter().map(|name| (*name).to_owned()).collect()
    }

    fn names(tools: &[ToolSchema]) -> Vec<&str> {
        tools.iter().map(|tool| tool.name.as_str()).collect()
    }

    fn known(tools: &[ToolSchema]) -> BTreeSet<String> {
        tools.iter().map(|tool| tool.name.clone()).collect()
    }

    #[test]
    fn validation() {
        assert_eq!(
            validate_tool_order(&strings(&["a", TOOL_ORDER_REST])),
            Ok(())
        );
        let missing = Err(PromptError::new(
            "toolOrder must contain the \"<unlisted-tools>\" rest entry (where unlisted tools \
             are inserted)",
        ));
        assert_eq!(validate_tool_order(&[]), missing);
        assert_eq!(
            validate_tool_order(&strings(&["bash", "todo_write"])),
            missing
        );
        assert_eq!(
            validate_tool_order(&strings(&["bash", "bash", TOOL_ORDER_REST])),
            Err(PromptError::new("toolOrder lists \"bash\" more than once"))
        );
        assert_eq!(
            validate_tool_order(&strings(&[TOOL_ORDER_REST, "bash", TOOL_ORDER_REST])),
            Err(PromptError::new(
                "toolOrder lists \"<unlisted-tools>\" more than once"
            ))
        );
    }

    #[test]
    fn name_order_is_stable_and_bytewise() {
        let tools = vec![
            tool("dup", "first"),
            tool("anchor", "anchor"),
            tool("Zed", "upper"),
            tool("dup", "second"),
        ];
        let ordered = order_tools(tools.clone(), None, &known(&tools)).unwrap_or_default();
        let descriptions: Vec<&str> = ordered.iter().map(|t| t.description.as_str()).collect();
        assert_eq!(descriptions, ["upper", "anchor", "first", "second"]);
    }

    #[test]
    fn configured_order() {
        let tools = vec![
            tool("bash", ""),
            tool("echo_b", ""),
            tool("todo_write", ""),
            tool("echo_a", ""),
        ];
        let order = strings(&["todo_write", TOOL_ORDER_REST, "bash"]);
        let ordered = order_tools(tools.clone(), Some(&order), &known(&tools)).unwrap_or_default();
        assert_eq!(names(&ordered), ["todo_write", "echo_a", "echo_b", "bash"]);
    }

    #[test]
    fn known_but_absent_names_are_skipped() {
        let tools = vec![tool("bash", "")];
        let known_names: BTreeSet<String> = strings(&["bash", "hidden"]).into_iter().collect();
        let order = strings(&["hidden", TOOL_ORDER_REST]);
        let ordered = order_tools(tools, Some(&order), &known_names).unwrap_or_default();
        assert_eq!(names(&ordered), ["bash"]);
    }

    #[test]
    fn unknown_names() {
        let tools = vec![tool("todo_write", ""), tool("bash", "")];
        let order = strings(&["todo_write", "ghost", TOOL_ORDER_REST, "wraith"]);
        assert_eq!(
            order_tools(tools.clone(), Some(&order), &known(&tools)),
            Err(PromptError::new(
                "toolOrder lists unregistered tools \"ghost\", \"wraith\"; known tools: bash, \
                 todo_write"
            ))
        );
        let order = strings(&["ghost", TOOL_ORDER_REST]);
        assert_eq!(
            order_tools(Vec::new(), Some(&order), &BTreeSet::new()),
            Err(PromptError::new(
                "toolOrder lists unregistered tool \"ghost\"; known tools: (none)"
            ))
        );
    }

    #[test]
    fn reserved_name() {
        let reserved = Err(PromptError::new(
            "tool provider returned reserved tool name \"<unlisted-tools>\" (reserved for \
             toolOrder's rest entry)",
        ));
        let tools = vec![tool(TOOL_ORDER_REST, "")];
        assert_eq!(order_tools(tools.clone(), None, &known(&tools)), reserved);
        let order = strings(&[TOOL_ORDER_REST]);
        assert_eq!(
            order_tools(tools.clone(), Some(&order), &known(&tools)),
            reserved
        );
    }
}
