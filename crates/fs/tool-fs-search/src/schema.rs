//! What the model is told about both tools: descriptions (with the configured caps and the
//! sampling choice) and parameter schemas (dsh's names, types and required lists).

use serde_json::{Value, json};

use crate::config::SearchCaps;

/// `glob`'s description.
pub fn glob_description(caps: &SearchCaps) -> String {
    let cap = caps.glob_max_results;
    let over_cap = if caps.sample_over_cap_glob_results {
        format!("a larger result shows {cap} paths sampled across its top-level entries instead")
    } else {
        format!("a larger result shows its {cap} oldest paths")
    };
    format!(
        "List the files whose paths match a glob pattern. Only files are returned, never \
         directories; hidden and ignored files are included, VCS metadata directories (.git, \
         .svn, .hg, .bzr, .jj, .sl) are not. Up to {cap} paths are returned, ordered by \
         modification time, oldest first; {over_cap}, states how many paths matched, and gives \
         the location of a file holding the complete sorted list. It does not list the entries \
         of a directory."
    )
}

/// `glob`'s parameters.
pub fn glob_parameters() -> Value {
    json!({
        "type": "object",
        "properties": {
            "pattern": {
                "type": "string",
                "description": "The glob to match file paths with, such as \"**/*.rs\" or \
                    \"src/**/*.test.ts\". Without a \"/\" it matches file names at any depth \
                    (\"*\" and \"*.rs\" cover the whole tree); include a \"/\" to anchor it to \
                    a directory level."
            },
            "path": {
                "type": "string",
                "description": "The directory to search. Defaults to the session workspace; a \
                    relative path is taken from there."
            }
        },
        "required": ["pattern"]
    })
}

/// `grep`'s description.
pub fn grep_description(caps: &SearchCaps) -> String {
    format!(
        "Search the contents of files with a regular expression (ripgrep syntax, case \
         sensitive). Matching lines come back with their line numbers, grouped by file. The \
         first {} matches are returned; a larger result states how many lines matched and \
         gives the location of a file holding all of them. To see the lines around a match, \
         read the file.",
        caps.grep_max_matches
    )
}

/// `grep`'s parameters.
pub fn grep_parameters() -> Value {
    json!({
        "type": "object",
        "properties": {
            "pattern": {
                "type": "string",
                "description": "The regular expression to look for (ripgrep syntax)."
            },
            "path": {
                "type": "string",
                "description": "The file or directory to search. Defaults to the session \
                    workspace; a relative path is taken from there."
            },
            "include": {
                "type": "string",
                "description": "A single glob selecting which files to search, such as \
                    \"*.rs\" or \"*.{ts,tsx}\". One glob only: no comma-separated lists, no \
                    \"!\" negation."
            }
        },
        "required": ["pattern"]
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::ToolFsSearchConfig;

    fn keys(schema: &Value) -> Vec<&str> {
        schema["properties"]
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect()
    }

    #[test]
    fn the_schemas_are_dshs() {
        let glob = glob_parameters();
        assert_eq!(keys(&glob), ["pattern", "path"]);
        assert_eq!(glob["required"], json!(["pattern"]));
        let grep = grep_parameters();
        assert_eq!(keys(&grep), ["pattern", "path", "include"]);
        assert_eq!(grep["required"], json!(["pattern"]));
        for schema in [&glob, &grep] {
            for (_, property) in schema["properties"].as_object().unwrap() {
                let order: Vec<&String> = property.as_object().unwrap().keys().collect();
                assert_eq!(order, ["type", "description"]);
                assert_eq!(property["type"], json!("string"));
            }
        }
    }

    #[test]
    fn descriptions_carry_the_caps_and_the_sampling_choice() {
        let mut caps = ToolFsSearchConfig::new(false).caps().unwrap();
        assert!(glob_description(&caps).contains("Up to 100 paths"));
        assert!(glob_description(&caps).contains("its 100 oldest paths"));
        assert!(grep_description(&caps).contains("first 250 matches"));
        caps.sample_over_cap_glob_results = true;
        caps.glob_max_results = 4;
        assert!(glob_description(&caps).contains("shows 4 paths sampled across"));
    }
}
